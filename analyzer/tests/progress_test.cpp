// The analyzer reports progress through the caller's callback (AnalysisOptions::progress), which
// tbdprof draws as its progress line: the stage and rows read of the rows expected while the kernel
// scan runs, then a null stage once the analysis is done with it, finished or failed.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tbdprof/analyzer/analyze.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {

struct Call {
    std::string stage;  // "(end)" for a null stage
    int64_t done, total;
};

AnalysisOptions recording(std::vector<Call>& calls) {
    AnalysisOptions options;
    options.threads = 1;  // one part: every report comes from the calling thread
    options.progress = [&calls](const char* stage, int64_t done, int64_t total) {
        calls.push_back({stage ? stage : "(end)", done, total});
    };
    return options;
}

}  // namespace

TEST_CASE("progress: rows read of the rows expected during the kernel scan, then the end") {
    // More kernels than the scan reads between two reports (0x40000), inserted by SQLite itself.
    constexpr int64_t kKernels = 300000;
    tbdtest::TraceBuilder t("progress_kernels.sqlite");
    t.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(kKernels) +
           ") INSERT INTO kernels (id, process, device, function, start_ns, duration_ns) "
           "SELECT i, 1, 0, 1, i * 100, 50 FROM n");
    std::vector<Call> calls;
    analyze_trace(t.finish(kKernels * 100 + 1000), recording(calls));

    REQUIRE(!calls.empty());
    CHECK(calls.back().stage == "(end)");
    int updates = 0;
    for (const Call& c : calls) {
        if (c.stage == "(end)") continue;
        ++updates;
        CHECK(c.stage == "reading kernels");
        CHECK(c.total == kKernels);
        CHECK(c.done > 0);
        CHECK(c.done <= c.total);
    }
    CHECK(updates >= 1);
}

TEST_CASE("progress: no stage for a trace that cannot be read; an empty callback is never called") {
    std::vector<Call> calls;
    CHECK_THROWS_AS(analyze_trace("no-such-trace.sqlite", recording(calls)), TraceError);
    for (const Call& c : calls) CHECK(c.stage == "(end)");  // no stage reported for it

    tbdtest::TraceBuilder t("progress_none.sqlite");
    t.kernel(0, 10);
    AnalysisOptions quiet;
    CHECK(!quiet.progress);
    const Report r = analyze_trace(t.finish(100), quiet);
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].kernels == 1);
}
