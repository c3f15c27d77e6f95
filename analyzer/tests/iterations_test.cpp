// Iterations: sources in order, statistics, window fallbacks, CPU utilization over the window.
#include <doctest/doctest.h>

#include <string>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/render.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

TEST_CASE("iteration statistics from step ranges") {
    tbdtest::TraceBuilder t("iter_stats.sqlite");
    // Durations 100, 200, 300, 400, 500 ns; the steady window drops the first.
    int64_t at = 0;
    for (int i = 0; i < 5; ++i) {
        t.range(at, at + 100 * (i + 1), "ProfilerStep#" + std::to_string(i));
        at += 100 * (i + 1);
    }
    t.range(0, 1500, "outer");  // not a step name
    t.kernel(0, 10);
    AnalysisOptions options;
    options.batch_size = 32;
    const Report r = analyze_trace(t.finish(2000), options);
    CHECK(r.iterations.detected == 5);
    CHECK(r.iterations.count == 4);
    CHECK(r.iterations.mean_s == doctest::Approx(350e-9));
    CHECK(r.iterations.median_s == doctest::Approx(350e-9));
    CHECK(r.iterations.p95_s == doctest::Approx(500e-9));
    CHECK(r.iterations.per_s == doctest::Approx(4 / 1400e-9));
    REQUIRE(r.iterations.samples_per_s.has_value());
    CHECK(*r.iterations.samples_per_s == doctest::Approx(32 * 4 / 1400e-9));
    CHECK(r.window.begin_ns == 100);
    CHECK(r.window.end_ns == 1500);
}

TEST_CASE("the iterations table comes before ranges") {
    tbdtest::TraceBuilder t("iter_table.sqlite");
    t.range(0, 10, "step");
    t.range(10, 20, "step");
    t.iteration(0, 100);
    t.iteration(100, 300);
    t.iteration(300, 600);
    t.kernel(0, 10);
    AnalysisOptions options;
    options.window = WindowChoice::iterations;
    const Report r = analyze_trace(t.finish(1000), options);
    CHECK(r.iterations.source == "iterations table");
    CHECK(r.iterations.count == 3);
    CHECK(r.window.used == "iterations");
    CHECK(r.window.end_ns == 600);
}

TEST_CASE("spans set apart as not training are not iterations, and the report says how many") {
    tbdtest::TraceBuilder t("iter_set_apart.sqlite");
    t.iteration(0, 100);
    t.iteration(100, 200);
    t.iteration(300, 400);
    // A checkpoint save between steps 2 and 3, and one after the last step; another process's
    // set-apart span does not count for this one.
    t.exec(
        "INSERT INTO iterations (process, idx, begin_ns, end_ns, source, kind) VALUES "
        "(1, -1, 200, 300, 'repetition', 'non_training'), (1, -1, 400, 500, 'repetition', 'non_training'), "
        "(2, -1, 0, 50, 'repetition', 'non_training')");
    t.kernel(0, 10);
    const Report r = analyze_trace(t.finish(1000), AnalysisOptions{});
    CHECK(r.iterations.detected == 3);
    CHECK(r.iterations.set_apart == 2);
    CHECK(r.iterations.count == 2);
    const std::string text = render_report(r, Format::text);
    CHECK(text.find("3 detected, from iterations table; 2 spans between steps set apart as not training") !=
          std::string::npos);
    CHECK(render_report(r, Format::json).find("\"set_apart\": 2") != std::string::npos);
}

TEST_CASE("a user-named iteration range") {
    tbdtest::TraceBuilder t("iter_user.sqlite");
    t.range(0, 100, "train_batch");
    t.range(100, 200, "train_batch");
    t.range(200, 300, "train_batch");
    t.range(0, 5, "step");
    t.kernel(0, 10);
    AnalysisOptions options;
    options.iteration_range = "train_batch";
    const Report r = analyze_trace(t.finish(1000), options);
    CHECK(r.iterations.detected == 3);
    CHECK(r.window.begin_ns == 100);
}

TEST_CASE("without iterations every window is the whole run, and the report says so") {
    tbdtest::TraceBuilder t("iter_none.sqlite");
    t.kernel(0, 10);
    const Report r = analyze_trace(t.finish(1000), AnalysisOptions{});
    CHECK(r.window.requested == "steady");
    CHECK(r.window.used == "all");
    CHECK_FALSE(r.window.note.empty());
    CHECK(r.window.end_ns == 1000);
    CHECK(r.iterations.count == 0);
}

TEST_CASE("one iteration: steady falls back to that iteration") {
    tbdtest::TraceBuilder t("iter_one.sqlite");
    t.range(100, 600, "iteration");
    t.kernel(0, 10);
    const Report r = analyze_trace(t.finish(1000), AnalysisOptions{});
    CHECK(r.window.used == "iterations");
    CHECK_FALSE(r.window.note.empty());
    CHECK(r.window.begin_ns == 100);
}

TEST_CASE("CPU utilization over the window from cumulative samples") {
    tbdtest::TraceBuilder t("iter_cpu.sqlite");
    t.kernel(0, 10);
    t.cpu_sample(0, 0, 0);
    t.cpu_sample(1000, 400, 100);   // 0.5 cores
    t.cpu_sample(2000, 1400, 100);  // 1.0 cores
    t.cpu_sample(0, 0, 0, 2);
    t.cpu_sample(2000, 200, 0, 2);  // 0.1 cores
    AnalysisOptions options;
    options.window = WindowChoice::all;
    const Report r = analyze_trace(t.finish(2000), options);
    REQUIRE(r.cpu.available);
    CHECK(r.cpu.utilization == doctest::Approx(0.75 + 0.1));
    REQUIRE(r.cpu.processes.size() == 2);
    CHECK(r.cpu.processes[0].utilization == doctest::Approx(0.75));
    // Readings in 100 ns units: the true time in [0, 2000] lies between 1500 - 100 and 1500 + 100 ns.
    CHECK(r.cpu.tick_ns == 100);
    CHECK(r.cpu.processes[0].utilization_low == doctest::Approx(0.7));
    CHECK(r.cpu.processes[0].utilization_high == doctest::Approx(0.8));
    // Process 2 is known only to 0.05 to 0.15 cores: 0.2 cores apart in all is coarse.
    CHECK(r.cpu.utilization_low == doctest::Approx(0.75));
    CHECK(r.cpu.utilization_high == doctest::Approx(0.95));
    CHECK(r.cpu.coarse);
}

TEST_CASE("over a window of seconds the CPU samples' ticks matter little") {
    tbdtest::TraceBuilder t("iter_cpu_fine.sqlite");
    t.kernel(0, 10);
    for (int64_t i = 0; i <= 40; ++i) t.cpu_sample(i * 50'000'000, i * 30'000'000, 0);  // 0.6 cores
    AnalysisOptions options;
    options.window = WindowChoice::all;
    const Report r = analyze_trace(t.finish(2'000'000'000), options);
    REQUIRE(r.cpu.available);
    CHECK(r.cpu.utilization == doctest::Approx(0.6));
    // Every reading is a multiple of 30 ms, so the scan takes that for the tick: bounds wider than the
    // true 10 ms would give, never narrower.
    CHECK(r.cpu.tick_ns == 30'000'000);
    CHECK(r.cpu.utilization_low == doctest::Approx(0.585));
    CHECK(r.cpu.utilization_high == doctest::Approx(0.615));
    CHECK_FALSE(r.cpu.coarse);
}

TEST_CASE("a window shorter than the CPU samples' resolution gets bounds, not a bare zero") {
    // As the collector samples: every 50 ms, readings in 10 ms ticks; no tick falls in the window.
    tbdtest::TraceBuilder t("iter_cpu_coarse.sqlite");
    t.kernel(0, 10);
    t.cpu_sample(0, 0, 0);
    t.cpu_sample(50'000'000, 10'000'000, 0);
    t.cpu_sample(100'000'000, 10'000'000, 0);
    t.cpu_sample(150'000'000, 20'000'000, 0);
    t.range(60'000'000, 65'000'000, "iteration");
    t.range(65'000'000, 70'000'000, "iteration");
    t.range(70'000'000, 75'000'000, "iteration");
    AnalysisOptions options;
    options.window = WindowChoice::iterations;
    const Report r = analyze_trace(t.finish(150'000'000), options);
    REQUIRE(r.cpu.available);
    CHECK(r.window.begin_ns == 60'000'000);
    CHECK(r.cpu.utilization == doctest::Approx(0.0));
    CHECK(r.cpu.tick_ns == 10'000'000);
    CHECK(r.cpu.sample_interval_ns == 50'000'000);
    // In [60, 75] ms: at least 0; at most the reading at 100 ms plus a tick minus the one at 50 ms.
    CHECK(r.cpu.utilization_low == doctest::Approx(0.0));
    CHECK(r.cpu.utilization_high == doctest::Approx(10e6 / 15e6));
    CHECK(r.cpu.coarse);
    const std::string text = render_report(r, Format::text, 200);
    CHECK(text.find("coarse: the samples (every 50.000 ms, 10.000 ms ticks) only bound it between 0 and 0.667") !=
          std::string::npos);
}
