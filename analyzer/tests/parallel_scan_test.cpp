// The kernel scan split over threads (ranges of kernel ids, merged at the seams) gives exactly the
// numbers of one pass: generated traces with overlapping kernels across the split points, library
// calls whose kernels straddle them, copies and sets, host-timed kernels, several devices.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "tbdprof/analyzer/analyze.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {

// `round_rows`: kernels per round of the scan (0: the default; huge: one round, every call held).
Report analyze_with(const std::string& path, int threads, WindowChoice window, int64_t round_rows = 0) {
    AnalysisOptions options;
    options.threads = threads;
    options.window = window;
    options.top_kernels = 100;
    options.scan_round_rows = round_rows;
    return analyze_trace(path, options);
}

constexpr int64_t kOneRound = int64_t{1} << 40;

// Every number the GPU scan produces, compared exactly (no tolerance).
void check_same(const Report& a, const Report& b) {
    REQUIRE(a.devices.size() == b.devices.size());
    for (size_t i = 0; i < a.devices.size(); ++i) {
        const DeviceMetrics &x = a.devices[i], &y = b.devices[i];
        CHECK(x.id == y.id);
        CHECK(x.name == y.name);
        CHECK(x.kernel_busy_ns == y.kernel_busy_ns);
        CHECK(x.busy_ns == y.busy_ns);
        CHECK(x.utilization == y.utilization);
        CHECK(x.busy_utilization == y.busy_utilization);
        CHECK(x.fp32_flops == y.fp32_flops);
        CHECK(x.fp32_utilization == y.fp32_utilization);
        CHECK(x.kernels == y.kernels);
    }
    CHECK(a.gpu_utilization == b.gpu_utilization);
    CHECK(a.busy_utilization == b.busy_utilization);
    const FlopMetrics &f = a.flops, &g = b.flops;
    CHECK(f.fp32_flops == g.fp32_flops);
    CHECK(f.fp32_flops_per_s == g.fp32_flops_per_s);
    CHECK(f.fp32_flops_per_busy_s == g.fp32_flops_per_busy_s);
    CHECK(f.fp32_peak_flops == g.fp32_peak_flops);
    CHECK(f.fp32_utilization == g.fp32_utilization);
    CHECK(f.tensor_flops == g.tensor_flops);
    CHECK(f.tensor_flops_per_s == g.tensor_flops_per_s);
    CHECK(f.other_flops == g.other_flops);
    CHECK(f.kernel_time_ns == g.kernel_time_ns);
    CHECK(f.kernel_time_without_flops_ns == g.kernel_time_without_flops_ns);
    CHECK(f.no_flop_info_share == g.no_flop_info_share);
    CHECK(f.library_calls == g.library_calls);
    CHECK(a.kernels.count == b.kernels.count);
    CHECK(a.kernels.total == b.kernels.total);
    CHECK(a.kernels.host_timed == b.kernels.host_timed);
    REQUIRE(a.kernels.top.size() == b.kernels.top.size());
    for (size_t i = 0; i < a.kernels.top.size(); ++i) {
        const KernelStat &x = a.kernels.top[i], &y = b.kernels.top[i];
        CHECK(x.name == y.name);
        CHECK(x.count == y.count);
        CHECK(x.total_ns == y.total_ns);
        CHECK(x.mean_ns == y.mean_ns);
        CHECK(x.flops == y.flops);
        CHECK(x.share == y.share);
    }
    CHECK(a.utilization_series.bucket_ns == b.utilization_series.bucket_ns);
    CHECK(a.utilization_series.devices == b.utilization_series.devices);
    CHECK(a.notes == b.notes);
}

// Kernels in start order per device (device ids interleaved), on several overlapping "streams",
// with long kernels around the middle id so that the split points fall inside busy stretches.
// `spanning`: one library call with a kernel near each end of the trace.
std::string random_trace(const std::string& name, int kernels, uint64_t seed, bool spanning = true) {
    tbdtest::TraceBuilder t(name);
    t.device(1, 2e12);
    t.device(2, 5e11);
    std::mt19937_64 random(seed);
    auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(random); };
    int64_t last_start[3] = {0, 0, 0};
    int64_t run_end = 0;
    int64_t call = 0;
    int call_kernels_left = 0;
    // A call with kernels of two functions at both ends of the trace (spans every seam).
    const int64_t spanning_call = spanning ? t.library_call(3e9, 68, 0, "cublasGemmEx", 0) : -1;
    for (int i = 0; i < kernels; ++i) {
        const int64_t device = uniform(0, 9) < 6 ? 0 : uniform(1, 2);
        const int64_t start = last_start[device] + uniform(0, 300);
        last_start[device] = start;
        std::optional<int64_t> duration = uniform(1, 600);
        if (uniform(0, 99) < 2) duration = std::nullopt;  // host-timed
        if (uniform(0, 99) < 3) duration = 0;
        if (uniform(0, 199) == 0) duration = uniform(5000, 40000);
        const int distance_to_middle = std::abs(i - kernels / 2);
        if (distance_to_middle < 40 && distance_to_middle % 7 == 0) duration = uniform(20000, 90000);
        const int64_t function = uniform(1, 3);
        std::optional<int64_t> library_call;
        if (spanning && (i == 3 || i == kernels - 4)) {
            library_call = spanning_call;
        } else if (call_kernels_left > 0) {
            library_call = call;
            --call_kernels_left;
        } else if (uniform(0, 9) < 4) {
            static constexpr int64_t kTypes[][2] = {{68, 0}, {64, 2}, {70, 1}, {68, 0}};
            const auto& type = kTypes[uniform(0, 3)];
            call = t.library_call(static_cast<double>(uniform(1, 1000000)) * 1000.0, type[0], type[1], "cublasGemmEx",
                                  start);
            library_call = call;
            call_kernels_left = static_cast<int>(uniform(0, 5));
        }
        t.kernel(start, duration, function, device, library_call);
        if (duration) run_end = std::max(run_end, start + *duration);
    }
    for (int i = 0; i < kernels / 20; ++i) {
        const int64_t start = uniform(0, run_end);
        if (i % 2) {
            t.copy(start, uniform(0, 2000), uniform(0, 2));
        } else {
            t.set(start, uniform(0, 2000), uniform(0, 2));
        }
    }
    const int64_t step = run_end / 5 + 1;
    for (int i = 0; i < 5; ++i) t.range(i * step, (i + 1) * step, "ProfilerStep#" + std::to_string(i));
    return t.finish(run_end + 1000);
}

}  // namespace

TEST_CASE("a kernel scan split over 2 or 3 threads gives exactly the numbers of one pass") {
    const std::string path = random_trace("parallel_random.sqlite", 6000, 42);
    for (WindowChoice window : {WindowChoice::steady, WindowChoice::all}) {
        CAPTURE(window_name(window));
        const Report one = analyze_with(path, 1, window);
        REQUIRE(one.kernels.total == 6000);
        CHECK(one.kernels.host_timed > 0);
        CHECK(one.flops.fp32_flops > 0);
        CHECK(one.flops.tensor_flops > 0);
        CHECK(one.devices.size() == 3);
        CHECK(one.devices[0].busy_ns > one.devices[0].kernel_busy_ns);
        for (int threads : {2, 3}) {
            CAPTURE(threads);
            check_same(one, analyze_with(path, threads, window));
        }
    }
}

TEST_CASE("a kernel before the split that outlasts thousands of stretches after it: still exact") {
    tbdtest::TraceBuilder t("parallel_long_kernel.sqlite");
    t.kernel(0, 10'000'000);  // covers everything that follows
    for (int i = 1; i < 12000; ++i) t.kernel(i * 100, 10, 1 + i % 3);
    t.kernel(20'000'000, 100);
    t.copy(5'000'000, 10'000'000);
    const std::string path = t.finish(30'000'000);
    const Report one = analyze_with(path, 1, WindowChoice::all);
    CHECK(one.devices[0].kernel_busy_ns == 10'000'000 + 100);
    CHECK(one.devices[0].busy_ns == 15'000'000 + 100);  // [0, 15 ms) with the copy, and the last kernel
    check_same(one, analyze_with(path, 2, WindowChoice::all));
}

TEST_CASE("kernels out of time order across the split are sorted, with the same numbers") {
    tbdtest::TraceBuilder t("parallel_unordered.sqlite");
    for (int i = 0; i < 500; ++i) t.kernel(100000 + i * 50, 70);
    for (int i = 0; i < 500; ++i) t.kernel(i * 50, 70, 2);  // earlier than the first half
    const std::string path = t.finish(200000);
    const Report one = analyze_with(path, 1, WindowChoice::all);
    const Report two = analyze_with(path, 2, WindowChoice::all);
    CHECK(one.devices[0].kernel_busy_ns == 2 * (499 * 50 + 70));
    CHECK(std::count(two.notes.begin(), two.notes.end(), "kernels were not stored in time order; sorted them first") == 1);
    check_same(one, two);
}

TEST_CASE("a kernel scan in rounds attributes each call once its kernels are passed: the numbers of one pass") {
    // Calls of 1-6 neighbouring kernels, some of several functions, cut by the rounds' and the
    // parts' seams; calls without kernels in between.
    const std::string path = random_trace("rounds_random.sqlite", 6000, 7, false);
    for (WindowChoice window : {WindowChoice::steady, WindowChoice::all}) {
        CAPTURE(window_name(window));
        const Report one = analyze_with(path, 1, window, kOneRound);
        CHECK(one.flops.library_calls > 500);
        for (int threads : {1, 2, 3})
            for (int64_t round_rows : {97, 500, 2048}) {
                CAPTURE(threads);
                CAPTURE(round_rows);
                check_same(one, analyze_with(path, threads, window, round_rows));
            }
    }
}

TEST_CASE("a call with kernels rounds apart: the scan starts over holding every call, with the same numbers") {
    const std::string path = random_trace("rounds_spanning_call.sqlite", 3000, 11);
    const Report one = analyze_with(path, 1, WindowChoice::all, kOneRound);
    for (int threads : {1, 2}) {
        CAPTURE(threads);
        const Report rounds = analyze_with(path, threads, WindowChoice::all, 200);
        check_same(one, rounds);
        CHECK(std::count(rounds.notes.begin(), rounds.notes.end(),
                         "kernels were not stored in time order; sorted them first") == 0);
    }
}
