// Communication figures from hand-placed kernels: every expected value is worked out on paper.
#include <doctest/doctest.h>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/budget.h"
#include "tbdprof/analyzer/communication_timeline.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {

// Two ranks (devices 0 and 1) of one process, a device with computation only, one damaged row.
std::string two_ranks_trace() {
    tbdtest::TraceBuilder t("communication_two_ranks.sqlite");
    t.exec(
        "INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), "
        "(5, 'void ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)'), (6, 'my_nccl_like_helper')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4), (5, 5, 5), (6, 6, 6)");
    t.device(1, 1e12);
    t.device(2, 1e12);
    t.kernel(0, 400, 1, 0);                 // device 0: computation [0, 400)
    t.kernel(10, 10, 6, 0);                 // "nccl" inside the name, not at its start: computation
    t.kernel(300, 200, 4, 0);               // communication [300, 500): 100 overlapped, 100 exposed
    t.kernel(0, 450, 2, 1);                 // device 1 (the slow rank): computation [0, 450)
    t.kernel(350, 150, 5, 1);               // communication [350, 500): reaches the collective last
    t.kernel(0, 900, 3, 2);                 // device 2: computation only, no rank
    t.kernel(600, int64_t{1} << 60, 1, 0);  // a damaged row: left out
    return t.finish(1000);
}

AnalysisOptions whole_run() {
    AnalysisOptions options;
    options.window = WindowChoice::all;
    return options;
}

}  // namespace

TEST_CASE("communication, overlap, exposure and waits per rank") {
    const Report r = analyze_trace(two_ranks_trace(), whole_run());
    const CommunicationMetrics& m = r.communication;
    REQUIRE(m.present);
    REQUIRE(m.ranks.size() == 2);  // device 2 has no communication kernels: no rank
    const int64_t window_ns = r.window.end_ns - r.window.begin_ns;
    const RankCommunication& fast = m.ranks[0];
    const RankCommunication& slow = m.ranks[1];
    CHECK(fast.device == 0);
    CHECK(fast.figures.communication_ns == 200);
    CHECK(fast.figures.computation_ns == 400);
    CHECK(fast.figures.overlapped_ns == 100);
    CHECK(fast.figures.exposed_ns == 100);
    CHECK(fast.figures.idle_ns == window_ns - 500);
    CHECK(fast.figures.kernels == 1);
    CHECK(slow.device == 1);
    CHECK(slow.figures.communication_ns == 150);
    CHECK(slow.figures.overlapped_ns == 100);
    CHECK(slow.figures.exposed_ns == 50);
    CHECK(slow.figures.idle_ns == window_ns - 500);
    // Device 0 started its collective at 300, the last rank at 350.
    REQUIRE(fast.wait_ns);
    CHECK(*fast.wait_ns == 50);
    CHECK(*slow.wait_ns == 0);
    CHECK(m.total.communication_ns == 350);
    CHECK(m.total.overlapped_ns == 200);
    REQUIRE(m.slowest);
    CHECK(*m.slowest == 1);
    REQUIRE(m.imbalance);
    CHECK(*m.imbalance == doctest::Approx(450.0 / 425.0));
    CHECK_FALSE(fast.rank);  // the trace names no ranks
}

TEST_CASE("check limits on exposed communication and rank imbalance") {
    const Report r = analyze_trace(two_ranks_trace(), whole_run());
    const double exposed_share = 100.0 / static_cast<double>(r.window.end_ns - r.window.begin_ns);
    Budget budget;
    CHECK(apply_limit(budget, "max-exposed-communication", std::to_string(exposed_share * 1.01)).empty());
    CHECK(apply_limit(budget, "max-rank-imbalance", "1.06").empty());
    std::vector<CheckResult> results = check_budget(r, budget);
    REQUIRE(results.size() == 2);
    CHECK(results[0].passed);
    CHECK(results[1].passed);  // 450 / 425 = 1.0588
    CHECK(apply_limit(budget, "max-exposed-communication", std::to_string(exposed_share * 0.99)).empty());
    CHECK(apply_limit(budget, "max-rank-imbalance", "1.05").empty());
    results = check_budget(r, budget);
    CHECK_FALSE(results[0].passed);
    CHECK_FALSE(results[1].passed);
    CHECK_FALSE(apply_limit(budget, "max-rank-imbalance", "0.9").empty());
    CHECK_FALSE(apply_limit(budget, "max-rank-imbalance", "fast").empty());
    CHECK_FALSE(apply_limit(budget, "max-exposed-communication", "1.5").empty());
}

TEST_CASE("communication stretches for a timeline: exposed and overlapped per rank") {
    const std::vector<RankCommunicationStretches> ranks = communication_stretches(two_ranks_trace());
    REQUIRE(ranks.size() == 2);  // device 2 ran no communication
    using Pairs = std::vector<std::pair<int64_t, int64_t>>;
    CHECK(ranks[0].device == 0);
    CHECK(ranks[0].overlapped_ns == Pairs{{300, 400}});
    CHECK(ranks[0].exposed_ns == Pairs{{400, 500}});
    CHECK(ranks[1].device == 1);
    CHECK(ranks[1].overlapped_ns == Pairs{{350, 450}});
    CHECK(ranks[1].exposed_ns == Pairs{{450, 500}});
    CHECK_FALSE(ranks[0].rank);  // the trace names no ranks
}
