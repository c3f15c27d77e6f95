#include "report_facts.h"

#include "tbdprof/analyzer/tag_plausibility.h"
#include "tbdprof/analyzer/units.h"

namespace tbdprof::viewer {

using namespace analyzer;

std::vector<ReportFact> report_facts(const Report& r) {
    std::vector<ReportFact> facts;
    auto add = [&](const char* section, std::string name, std::string text, std::optional<double> value = {},
                   bool bytes = false) {
        facts.push_back({section, std::move(name), std::move(text), value, bytes});
    };
    add("run", "window",
        r.window.used + " (" + format_duration_ns(static_cast<double>(r.window.end_ns - r.window.begin_ns)) + ")");
    add("run", "duration", format_duration_ns(static_cast<double>(r.run.duration_ns)),
        static_cast<double>(r.run.duration_ns) * 1e-9);
    add("GPU", "GPU utilization", format_percent(r.gpu_utilization), r.gpu_utilization);
    add("GPU", "busy (with copies and sets)", format_percent(r.busy_utilization), r.busy_utilization);
    for (const DeviceMetrics& d : r.devices) {
        add("GPU", "GPU " + std::to_string(d.id) + " utilization (" + d.name + ")", format_percent(d.utilization),
            d.utilization);
    }
    add("FLOPs", "FP32 throughput", format_rate(r.flops.fp32_flops_per_s), r.flops.fp32_flops_per_s);
    add("FLOPs", "FP32 utilization", format_percent(r.flops.fp32_utilization), r.flops.fp32_utilization);
    add("FLOPs", "tensor-core throughput", format_rate(r.flops.tensor_flops_per_s), r.flops.tensor_flops_per_s);
    add("FLOPs", "kernel time without FLOP information", format_percent(r.flops.no_flop_info_share),
        r.flops.no_flop_info_share);
    add("memory", "peak device memory", format_bytes(r.memory.peak_bytes), static_cast<double>(r.memory.peak_bytes),
        true);
    // The tags' plausibility before the figures it qualifies (tag_plausibility.h).
    add("memory", "memory tags", r.memory.tags.summary);
    for (size_t i = 0; i < r.memory.tags.warnings.size(); ++i)
        add("memory", "memory tags unreliable, reason " + std::to_string(i + 1), r.memory.tags.warnings[i]);
    for (int c = 0; c < kCategoryCount; ++c) {
        if (r.memory.at_peak[c] == 0) continue;
        add("memory", std::string("at peak: ") + category_name(c), format_bytes(r.memory.at_peak[c]),
            static_cast<double>(r.memory.at_peak[c]), true);
        if (const auto unsure = low_confidence_share(r.memory, c))
            add("memory", std::string("at peak: ") + category_name(c) + ", low confidence", format_percent(*unsure),
                *unsure);
    }
    for (const ProcessMemory& process : r.memory.processes)  // each rank alone (the figures above: all together)
        add("memory", "peak device memory, " + process_memory_label(process), format_bytes(process.peak_bytes),
            static_cast<double>(process.peak_bytes), true);
    add("memory", "device allocations", std::to_string(r.memory.allocations),
        static_cast<double>(r.memory.allocations));
    add("iterations", "iterations",
        std::to_string(r.iterations.count) + " of " + std::to_string(r.iterations.detected) +
            (r.iterations.source.empty() ? "" : " (" + r.iterations.source + ")"),
        static_cast<double>(r.iterations.count));
    if (r.iterations.count > 0) {
        add("iterations", "iteration mean", format_duration_ns(r.iterations.mean_s * 1e9), r.iterations.mean_s);
        add("iterations", "iteration p95", format_duration_ns(r.iterations.p95_s * 1e9), r.iterations.p95_s);
    }
    if (r.cpu.available) add("CPU", "CPU utilization (cores)", format_number(r.cpu.utilization), r.cpu.utilization);
    add("kernels", "kernels in window", std::to_string(r.kernels.count), static_cast<double>(r.kernels.count));
    for (const std::string& note : r.notes) add("notes", "note", note);
    return facts;
}

}  // namespace tbdprof::viewer
