// Checks a `tbdprof record --sim --metrics flops` trace against the simulated GPU's ground truth
// (TBDSIM_TRUTH file), kernel by kernel and in the report:
//  - every kernel has a row for each of the six FLOP metrics the simulated chip knows;
//  - a kernel whose work the simulator knows (truth FLOPs > 0, FP32/TF32/FP16/BF16) has counter FLOPs
//    equal to the truth exactly, all in the truth's precision (counters count whole instructions: an
//    auxiliary kernel's fractional cost-model FLOPs, as cuFFT's, are compared rounded; GEMM and
//    convolution FLOPs are whole numbers and compared as they are); every other kernel has every
//    value NULL (not available), never 0;
//  - the report (window: all) counts the same kernels, its FLOPs per precision equal the truth's,
//    its sources add up (library shapes + counters = the figures), and where both sources exist they
//    agree exactly;
//  - BASELINE (the same program recorded without --metrics): no kernel_metrics rows, and the same
//    kernel count and FLOP figures.
//   tbdprof_counter_truth_check TRACE TRUTH BASELINE_TRACE
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/trace/tables.h"
#include "tbdprof/trace/trace_reader.h"

using namespace tbdprof::analyzer;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
    if (!ok) {
        ++failures;
        std::printf("FAIL: %s\n", what.c_str());
    }
}

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    std::string field;
    while (std::getline(in, field, '\t')) fields.push_back(field);
    return fields;
}

struct TruthKernel {
    double flops = 0;
    int precision = 0;  // TbdsimPrecision: 1 FP32, 2 TF32, 3 FP16, 4 BF16, 5 FP64
    bool countable() const { return flops > 0 && precision >= 1 && precision <= 4; }
};

// FLOP metric -> (simulator precision, FLOPs per count).
const std::map<std::string, std::pair<int, double>> kMetrics = {
    {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", {1, 1}},
    {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", {1, 1}},
    {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", {1, 2}},
    {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", {2, 1}},
    {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", {3, 1}},
    {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", {4, 1}},
};

struct TraceKernel {
    int rows = 0, nulls = 0;
    std::array<double, 5> flops{};  // by simulator precision 1..4
};

std::map<int64_t, TraceKernel> read_trace(const char* path, int64_t& kernels, int64_t& metric_rows) {
    namespace trace = tbdprof::trace;
    std::map<int64_t, TraceKernel> out;
    metric_rows = 0;
    try {
        const trace::Database db = trace::open_trace(path);
        std::map<int64_t, int64_t> correlation;  // kernels.id -> correlation id, the truth's key
        trace::RowReader<trace::KernelRow> kernel_rows(db);
        for (trace::KernelRow k; kernel_rows.next(k);) correlation[k.id] = k.correlation.value_or(0);
        kernels = static_cast<int64_t>(correlation.size());
        trace::RowReader<trace::KernelMetricRow> metrics(db);
        for (trace::KernelMetricRow m; metrics.next(m);) {
            const auto kernel = correlation.find(m.kernel);
            if (kernel == correlation.end()) continue;
            ++metric_rows;
            TraceKernel& k = out[kernel->second];
            ++k.rows;
            if (!m.value) {
                ++k.nulls;
                continue;
            }
            auto known = kMetrics.find(std::string(m.metric));
            check(known != kMetrics.end(), "unknown metric " + std::string(m.metric));
            if (known != kMetrics.end())
                k.flops[static_cast<size_t>(known->second.first)] += *m.value * known->second.second;
        }
    } catch (const std::exception& e) {
        check(false, std::string(path) + ": " + e.what());
    }
    return out;
}

Precision analyzer_precision(int sim) {
    switch (sim) {
        case 1:
            return Precision::fp32;
        case 2:
            return Precision::tf32;
        case 3:
            return Precision::fp16;
        case 4:
            return Precision::bf16;
        default:
            return Precision::other;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: tbdprof_counter_truth_check TRACE TRUTH BASELINE_TRACE\n");
        return 2;
    }
    std::ifstream truth_file(argv[2]);
    if (!truth_file) {
        std::fprintf(stderr, "cannot read %s\n", argv[2]);
        return 2;
    }
    std::map<int64_t, TruthKernel> truth;
    for (std::string line; std::getline(truth_file, line);) {
        const auto f = split(line);
        if (f.size() >= 12 && f[0] == "kernel") truth[std::stoll(f[2])] = {std::stod(f[6]), std::stoi(f[10])};
    }
    int64_t kernels = 0, metric_rows = 0;
    const auto trace = read_trace(argv[1], kernels, metric_rows);
    check(!truth.empty(), "the truth file has kernels");
    check(static_cast<int64_t>(trace.size()) == kernels,
          "every kernel has counter rows (" + std::to_string(trace.size()) + " of " + std::to_string(kernels) + ")");
    int64_t countable = 0, not_countable = 0;
    std::array<double, 5> truth_by_precision{};
    for (const auto& [correlation, t] : truth) {
        const auto found = trace.find(correlation);
        const std::string name = "kernel with correlation " + std::to_string(correlation);
        if (found == trace.end()) {
            check(false, name + " has no counter rows");
            continue;
        }
        const TraceKernel& k = found->second;
        check(k.rows == static_cast<int>(kMetrics.size()), name + ": " + std::to_string(k.rows) + " metric rows");
        if (t.countable()) {
            ++countable;
            truth_by_precision[static_cast<size_t>(t.precision)] += t.flops;
            check(k.nulls == 0, name + ": a countable kernel has NULL values");
            for (int p = 1; p <= 4; ++p) {
                const double want = p == t.precision ? std::round(t.flops) : 0;
                if (k.flops[static_cast<size_t>(p)] != want) {
                    char text[200];
                    std::snprintf(text, sizeof text, ": precision %d counter FLOPs %.17g, truth %.17g", p,
                                  k.flops[static_cast<size_t>(p)], want);
                    check(false, name + text);
                }
            }
        } else {
            ++not_countable;
            check(k.nulls == k.rows, name + ": not countable, yet " + std::to_string(k.rows - k.nulls) + " values");
        }
    }
    std::printf("kernels: %zu in truth, %lld in trace; %lld counted exactly, %lld not available\n", truth.size(),
                static_cast<long long>(kernels), static_cast<long long>(countable),
                static_cast<long long>(not_countable));

    AnalysisOptions options;
    options.window = WindowChoice::all;
    const Report report = analyze_trace(argv[1], options);
    const FlopMetrics& f = report.flops;
    const CounterFlopSources& c = f.counters;
    check(c.collected, "the report sees the counters");
    check(c.kernels_counted == countable, "report counts " + std::to_string(c.kernels_counted) + " kernels");
    check(c.kernels_not_available == not_countable,
          "report: " + std::to_string(c.kernels_not_available) + " kernels not available");
    double counter_part = 0;
    for (int p = 1; p <= 4; ++p) {
        const PrecisionFlops& x = f.by_precision[static_cast<size_t>(analyzer_precision(p))];
        counter_part += x.counter_flops;
        char text[200];
        std::snprintf(text, sizeof text, "precision %d: report %.17g, truth %.17g", p, x.flops,
                      truth_by_precision[static_cast<size_t>(p)]);
        std::printf("%s\n", text);
        // Library shapes are exact; each kernel whose counters are the figure may differ by its rounding.
        check(std::fabs(x.flops - truth_by_precision[static_cast<size_t>(p)]) <=
                  0.5 * static_cast<double>(c.kernels_added),
              text);
    }
    check(counter_part == c.added_flops, "the counter parts per precision add up to the counter FLOPs");
    check(c.compared_counter_flops == c.compared_library_flops,
          "both sources agree where both exist (" + std::to_string(c.calls_compared) + " calls)");
    std::printf(
        "sources: %.17g from counters (%lld kernels), %lld library calls compared: %.17g shapes, %.17g counters\n",
        c.added_flops, static_cast<long long>(c.kernels_added), static_cast<long long>(c.calls_compared),
        c.compared_library_flops, c.compared_counter_flops);

    int64_t baseline_kernels = 0, baseline_rows = 0;
    read_trace(argv[3], baseline_kernels, baseline_rows);
    check(baseline_rows == 0, "the run without --metrics has no kernel_metrics rows");
    const Report baseline = analyze_trace(argv[3], options);
    check(!baseline.flops.counters.collected, "the run without --metrics has no counter source");
    check(baseline_kernels == kernels, "same kernels with and without --metrics");
    // Without counters only library shapes count: the figures are the --metrics run's minus its counter part.
    for (int p = 0; p < kPrecisionCount; ++p) {
        const double with =
            f.by_precision[static_cast<size_t>(p)].flops - f.by_precision[static_cast<size_t>(p)].counter_flops;
        check(baseline.flops.by_precision[static_cast<size_t>(p)].flops == with,
              "baseline FLOPs of precision " + std::to_string(p) + " are the library-shape part");
    }
    std::printf(failures == 0 ? "PASS\n" : "%d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
