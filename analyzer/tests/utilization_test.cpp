// GPU utilization from hand-placed intervals: every expected value is worked out on paper.
#include <doctest/doctest.h>

#include "tbdprof/analyzer/analyze.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {
AnalysisOptions all_window() {
    AnalysisOptions options;
    options.window = WindowChoice::all;
    return options;
}
}  // namespace

TEST_CASE("utilization is the union of kernel intervals over the window") {
    tbdtest::TraceBuilder t("util_union.sqlite");
    t.kernel(100, 200);  // [100, 300)
    t.kernel(200, 200);  // [200, 400): overlaps, union so far [100, 400)
    t.kernel(250, 50);   // inside
    t.kernel(600, 100);  // [600, 700)
    const Report r = analyze_trace(t.finish(1000), all_window());
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].kernel_busy_ns == 400);
    CHECK(r.gpu_utilization == doctest::Approx(0.4).epsilon(1e-12));
    CHECK(r.kernels.count == 4);
    CHECK(r.window.used == "all");
}

TEST_CASE("busy including copies and sets adds their intervals") {
    tbdtest::TraceBuilder t("util_copies.sqlite");
    t.copy(0, 100);       // [0, 100)
    t.kernel(50, 100);    // [50, 150): union with the copy [0, 150)
    t.set(300, 100);      // [300, 400)
    t.kernel(500, 100);   // [500, 600)
    t.copy(550, 100);     // [550, 650)
    const Report r = analyze_trace(t.finish(1000), all_window());
    CHECK(r.devices[0].kernel_busy_ns == 200);
    CHECK(r.devices[0].busy_ns == 150 + 100 + 150);
    CHECK(r.busy_utilization == doctest::Approx(0.4));
}

TEST_CASE("utilization per device, the overall figure is their mean") {
    tbdtest::TraceBuilder t("util_devices.sqlite");
    t.device(1, 2e12);
    t.kernel(0, 500, 1, 0);     // device 0: 50%
    t.kernel(100, 100, 1, 1);   // device 1: 10%
    const Report r = analyze_trace(t.finish(1000), all_window());
    REQUIRE(r.devices.size() == 2);
    CHECK(r.devices[0].utilization == doctest::Approx(0.5));
    CHECK(r.devices[1].utilization == doctest::Approx(0.1));
    CHECK(r.gpu_utilization == doctest::Approx(0.3));
}

TEST_CASE("steady window: every iteration but the first, kernels clipped at its edges") {
    tbdtest::TraceBuilder t("util_steady.sqlite");
    t.range(0, 1000, "ProfilerStep#0");
    t.range(1000, 2000, "ProfilerStep#1");
    t.range(2000, 3000, "ProfilerStep#2");
    t.kernel(100, 800);    // first iteration only: outside the window
    t.kernel(900, 200);    // [900, 1100): 100 inside
    t.kernel(1500, 100);   // inside
    t.kernel(2500, 1000);  // [2500, 3500): 500 inside
    const Report r = analyze_trace(t.finish(4000), AnalysisOptions{});
    CHECK(r.window.used == "steady");
    CHECK(r.window.begin_ns == 1000);
    CHECK(r.window.end_ns == 3000);
    CHECK(r.devices[0].kernel_busy_ns == 700);
    CHECK(r.gpu_utilization == doctest::Approx(0.35));
    CHECK(r.kernels.count == 2);  // kernels that start in the window
    CHECK(r.iterations.count == 2);
}

TEST_CASE("host-timed kernels are counted but left out of utilization") {
    tbdtest::TraceBuilder t("util_host_timed.sqlite");
    t.kernel(0, 100);
    t.kernel(200, std::nullopt);
    const Report r = analyze_trace(t.finish(1000), all_window());
    CHECK(r.kernels.host_timed == 1);
    CHECK(r.kernels.count == 2);
    CHECK(r.gpu_utilization == doctest::Approx(0.1));
}

TEST_CASE("kernels stored out of time order give the same answer") {
    tbdtest::TraceBuilder t("util_unordered.sqlite");
    t.kernel(600, 100, 1, 0, std::nullopt, 1);
    t.kernel(100, 200, 1, 0, std::nullopt, 2);
    t.kernel(200, 200, 1, 0, std::nullopt, 3);
    const Report r = analyze_trace(t.finish(1000), all_window());
    CHECK(r.devices[0].kernel_busy_ns == 400);
    bool noted = false;
    for (const auto& note : r.notes) noted = noted || note.find("time order") != std::string::npos;
    CHECK(noted);
}

TEST_CASE("utilization timeline buckets add up to the busy time") {
    tbdtest::TraceBuilder t("util_series.sqlite");
    t.kernel(0, 250);
    t.kernel(700, 300);
    AnalysisOptions options = all_window();
    options.utilization_buckets = 10;
    const Report r = analyze_trace(t.finish(1000), options);
    REQUIRE(r.utilization_series.devices.size() == 1);
    const auto& values = r.utilization_series.devices[0].second;
    REQUIRE(values.size() == 10);
    CHECK(values[0] == doctest::Approx(1.0));
    CHECK(values[2] == doctest::Approx(0.5));
    CHECK(values[5] == doctest::Approx(0.0));
    CHECK(values[9] == doctest::Approx(1.0));
}
