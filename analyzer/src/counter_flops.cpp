#include "counter_flops.h"

#include <string>
#include <string_view>
#include <unordered_map>

#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {

bool flop_metric(std::string_view metric, Precision& precision, double& flops_per_count) {
    struct Known {
        std::string_view name;
        Precision precision;
        double flops;
    };
    static constexpr Known kKnown[] = {
        {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", Precision::fp32, 1},
        {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", Precision::fp32, 1},
        {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", Precision::fp32, 2},
        {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", Precision::tf32, 1},
        {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", Precision::fp16, 1},
        {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", Precision::bf16, 1},
    };
    for (const Known& known : kKnown) {
        if (known.name != metric) continue;
        precision = known.precision;
        flops_per_count = known.flops;
        return true;
    }
    return false;
}

std::vector<CounterKernel> load_counter_kernels(const trace::Database& db, int64_t begin_ns, int64_t end_ns,
                                                bool everything) {
    // The FLOP metric rows, by kernel: what each counted kernel did in each precision.
    std::vector<CounterKernel> counted;
    std::unordered_map<std::string, std::pair<Precision, double>> metric_cache;
    trace::RowReader<trace::KernelMetricRow> metrics(db);
    for (trace::KernelMetricRow row; metrics.next(row);) {
        auto known = metric_cache.find(std::string(row.metric));
        if (known == metric_cache.end()) {
            Precision precision = Precision::other;
            double per_count = 0;
            if (!flop_metric(row.metric, precision, per_count)) per_count = 0;
            known = metric_cache.emplace(std::string(row.metric), std::make_pair(precision, per_count)).first;
        }
        if (known->second.second == 0) continue;  // not a FLOP metric
        if (counted.empty() || counted.back().kernel != row.kernel) {
            counted.emplace_back();
            counted.back().kernel = row.kernel;
            counted.back().available = true;
        }
        CounterKernel& kernel = counted.back();
        if (!row.value) {
            kernel.available = false;
            continue;
        }
        kernel.flops[static_cast<size_t>(known->second.first)] += *row.value * known->second.second;
    }
    // Joined with their kernels (both in id order): a row of a kernel the trace lacks is dropped.
    std::vector<CounterKernel> kernels;
    if (counted.empty()) return kernels;
    trace::ReadOptions range;
    range.first_id = counted.front().kernel;
    range.last_id = counted.back().kernel;
    trace::RowReader<trace::KernelRow> rows(db, range);
    auto next = counted.begin();
    for (trace::KernelRow row; next != counted.end() && rows.next(row);) {
        while (next != counted.end() && next->kernel < row.id) ++next;
        if (next == counted.end() || next->kernel != row.id) continue;
        CounterKernel& kernel = *next++;
        if (!everything && (row.start_ns < begin_ns || row.start_ns >= end_ns)) continue;
        kernel.device = row.device;
        kernel.function = row.function;
        kernel.library_call = row.library_call.value_or(-1);
        kernel.duration_ns = row.duration_ns.value_or(0);
        kernels.push_back(kernel);
    }
    return kernels;
}

}  // namespace tbdprof::analyzer
