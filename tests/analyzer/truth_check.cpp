// Compares the analyzer's report on a recorded trace with the simulated GPU's ground truth
// (TBDSIM_TRUTH file): GPU utilization within 0.1 percentage points of the union of truth kernel
// intervals over the same window, FP32 FLOPs equal to the sum of FP32 truth kernel FLOPs, FLOPs of
// every other precision (TF32, FP16, BF16, FP64) equal to the truth's in that precision, peak
// memory equal to the truth's peak of live device allocations.
//   tbdprof_analyzer_truth_check TRACE TRUTH
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/trace/trace_reader.h"

#include <tbdprof/test_support/truth_file.h>

using namespace tbdprof::analyzer;

namespace {

int64_t start_monotonic(const std::string& trace) {
    tbdprof::trace::Database db = tbdprof::trace::open_trace(trace);
    return db.query_int("SELECT start_monotonic_ns FROM run");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: tbdprof_analyzer_truth_check TRACE TRUTH\n");
        return 2;
    }
    AnalysisOptions options;
    options.window = WindowChoice::all;
    const Report report = analyze_trace(argv[1], options);
    const int64_t zero = start_monotonic(argv[1]);

    std::vector<tbdprof::test::TruthRecord> truth;
    try {
        truth = tbdprof::test::read_truth_records(argv[2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    std::vector<std::pair<int64_t, int64_t>> kernels;
    double fp32_flops = 0;
    std::map<std::string, double> truth_by_precision;  // the simulator's precisions by the report's names
    std::map<std::string, int64_t> live;  // "pid address" -> bytes
    int64_t live_bytes = 0, peak = 0;
    for (const tbdprof::test::TruthRecord& r : truth) {
        if (r.type == "kernel") {
            kernels.emplace_back(static_cast<int64_t>(r.start) - zero, static_cast<int64_t>(r.end) - zero);
            if (r.precision == 1) fp32_flops += r.flops;  // TBDSIM_PRECISION_FP32
            // TBDSIM_PRECISION_*: 1 FP32, 2 TF32, 3 FP16, 4 BF16, 5 FP64 (0: no FLOPs)
            static const char* const names[] = {nullptr, "fp32", "tf32", "fp16", "bf16", "fp64"};
            if (r.precision >= 1 && r.precision <= 5) truth_by_precision[names[r.precision]] += r.flops;
        } else if (r.type == "alloc" || r.type == "free") {
            if (r.kind == "pinned_host") continue;
            const std::string key = std::to_string(r.pid) + " " + std::to_string(r.address);
            if (r.type == "alloc") {
                live[key] = static_cast<int64_t>(r.bytes);
                live_bytes += static_cast<int64_t>(r.bytes);
                peak = std::max(peak, live_bytes);
            } else if (auto it = live.find(key); it != live.end()) {
                live_bytes -= it->second;
                live.erase(it);
            }
        }
    }
    std::sort(kernels.begin(), kernels.end());
    int64_t busy = 0, open_begin = 0, open_end = -1;
    const int64_t wb = report.window.begin_ns, we = report.window.end_ns;
    auto flush = [&] {
        if (open_end > open_begin) busy += std::max<int64_t>(0, std::min(open_end, we) - std::max(open_begin, wb));
    };
    for (const auto& [b, e] : kernels) {
        if (b > open_end) {
            flush();
            open_begin = b;
            open_end = e;
        } else {
            open_end = std::max(open_end, e);
        }
    }
    flush();
    const double truth_utilization = static_cast<double>(busy) / static_cast<double>(we - wb);

    int failures = 0;
    std::printf("kernels: truth %zu, trace %lld\n", kernels.size(), static_cast<long long>(report.kernels.total));
    std::printf("utilization: truth %.6f, report %.6f\n", truth_utilization, report.gpu_utilization);
    if (std::fabs(truth_utilization - report.gpu_utilization) > 0.001) ++failures;
    std::printf("fp32 flops: truth %.17g, report %.17g\n", fp32_flops, report.flops.fp32_flops);
    if (fp32_flops != report.flops.fp32_flops) ++failures;
    for (int p = 0; p < kPrecisionCount; ++p) {
        const char* name = precision_name(static_cast<Precision>(p));
        const double want = truth_by_precision.count(name) ? truth_by_precision[name] : 0.0;
        const double got = report.flops.by_precision[static_cast<size_t>(p)].flops;
        if (want == 0 && got == 0) continue;
        std::printf("%s flops: truth %.17g, report %.17g\n", name, want, got);
        if (want != got) ++failures;
    }
    std::printf("peak memory: truth %lld, report %lld\n", static_cast<long long>(peak),
                static_cast<long long>(report.memory.peak_bytes));
    if (peak != report.memory.peak_bytes) ++failures;
    if (kernels.empty()) {
        std::printf("the truth file has no kernels\n");
        ++failures;
    }
    std::printf(failures ? "MISMATCH\n" : "all match\n");
    return failures ? 1 : 0;
}
