#include "metrics_list.h"

#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer {

std::vector<Metric> headline_metrics(const Report& r) {
    auto d = [](int64_t v) { return static_cast<double>(v); };
    std::vector<Metric> m = {
        {"gpu_utilization", "GPU utilization", Unit::fraction, r.gpu_utilization},
        {"gpu_busy_utilization", "GPU busy incl. copies", Unit::fraction, r.busy_utilization},
        {"fp32.flops", "FP32 FLOPs", Unit::flops, r.flops.fp32_flops},
        {"fp32.flops_per_s", "FP32 FLOP/s", Unit::rate, r.flops.fp32_flops_per_s},
        {"fp32.utilization", "FP32 utilization", Unit::fraction, r.flops.fp32_utilization},
        {"tensor_core.flops", "tensor-core FLOPs", Unit::flops, r.flops.tensor_flops},
        {"flop_coverage.no_flop_info_share", "GPU time without FLOP info", Unit::fraction, r.flops.no_flop_info_share},
        {"memory.peak_bytes", "peak memory", Unit::bytes, d(r.memory.peak_bytes)},
        {"iterations.count", "iterations", Unit::count, d(r.iterations.count)},
        {"iterations.mean_s", "iteration time (mean)", Unit::seconds, r.iterations.mean_s},
        {"iterations.p95_s", "iteration time (p95)", Unit::seconds, r.iterations.p95_s},
        {"iterations.per_s", "iterations/s", Unit::count, r.iterations.per_s},
        {"cpu.utilization", "CPU utilization", Unit::cores, r.cpu.utilization},
        {"kernels.count", "kernels", Unit::count, d(r.kernels.count)},
        {"flop_coverage.kernel_time_s", "kernel time", Unit::seconds, d(r.flops.kernel_time_ns) * 1e-9},
        {"window.duration_s", "window", Unit::seconds, r.window.seconds()},
    };
    if (r.iterations.samples_per_s) m.push_back({"iterations.samples_per_s", "samples/s", Unit::count, *r.iterations.samples_per_s});
    return m;
}

std::string format_metric(Unit unit, double value) {
    switch (unit) {
    case Unit::fraction: return format_percent(value);
    case Unit::bytes: return format_bytes(static_cast<int64_t>(value));
    case Unit::flops: return format_flops(value);
    case Unit::rate: return format_rate(value);
    case Unit::seconds: return format_duration_ns(value * 1e9);
    case Unit::cores: return format_number(value, 3) + " cores";
    default: return format_number(value, 6);
    }
}

}  // namespace tbdprof::analyzer
