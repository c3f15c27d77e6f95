// kernel_metrics rows from the collector's RawKernelMetric records (`tbdprof record --metrics`).
//
// CUPTI's auto ranges carry no correlation id: range n of a context is the n-th kernel the context ran
// after the range profiler was enabled, which the collector does before the context's first recorded
// launch. Kernel replay runs kernels one at a time, so their CUPTI correlation ids (issued at launch)
// are in that same order. Kernels a CUDA graph replay ran are not profiled (kernel replay works per
// launch) and take no place in the order.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <vector>

#include "kernel_stage.h"
#include "model_builder.h"

namespace tbdprof::trace::detail {

void ModelBuilder::build_kernel_metrics() {
    for (ProcessContext& p : contexts_) {
        const RawProcess& raw = *p.raw;
        if (raw.kernel_metrics.empty()) continue;
        std::unordered_map<uint64_t, int64_t> kernel_of_correlation;
        model_.kernel_stage->for_each_kernel([&](const KernelRow& k, int64_t) {
            if (k.process == p.id && k.correlation && !k.graph_launch)
                kernel_of_correlation[static_cast<uint64_t>(*k.correlation)] = k.id;
        });
        std::map<uint32_t, std::vector<uint64_t>> correlations_of_context;
        for (const DeviceKernel& d : raw.device_kernels)
            if (graph_launch_of(p, d.correlation_id) < 0)
                correlations_of_context[d.context_id].push_back(d.correlation_id);
        for (auto& [context, correlations] : correlations_of_context)
            std::sort(correlations.begin(), correlations.end());
        for (const raw::RawKernelMetric& m : raw.kernel_metrics) {
            const auto context = correlations_of_context.find(m.context_id);
            if (context == correlations_of_context.end() || m.range_number >= context->second.size()) continue;
            const auto kernel = kernel_of_correlation.find(context->second[m.range_number]);
            if (kernel == kernel_of_correlation.end()) continue;
            KernelMetricRow row;
            row.kernel = kernel->second;
            row.metric = model_.strings.intern(raw.string(m.metric_string));
            if (!std::isnan(m.value)) row.value = m.value;
            model_.kernel_metrics.push_back(row);
        }
        counters_.events += raw.kernel_metrics.size();
    }
    std::sort(model_.kernel_metrics.begin(), model_.kernel_metrics.end(),
              [](const KernelMetricRow& a, const KernelMetricRow& b) {
                  return a.kernel != b.kernel ? a.kernel < b.kernel : a.metric < b.metric;
              });
}

}  // namespace tbdprof::trace::detail
