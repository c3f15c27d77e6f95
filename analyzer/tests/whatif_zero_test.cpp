// The what-if's ZeRO sizes (whatif_sizes.h, docs/whatif.md "ZeRO"): a rank updates only its shard, so
// the update's own temporaries shrink with it, as the optimizer state does; and the share of a
// partition by whole tensors (--zero-partition tensors, whatif_factors.h).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "whatif_replay.h"
#include "whatif_run.h"
#include "whatif_sizes.h"

using namespace tbdprof::analyzer;
using namespace tbdprof::analyzer::whatif;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

Allocation allocation(int64_t bytes, int64_t alloc_ns, int64_t free_ns, int category, const char* rule = "") {
    Allocation a{};
    a.bytes = bytes;
    a.alloc_ns = alloc_ns;
    a.free_ns = free_ns;
    a.freed = free_ns != INT64_MAX;
    a.stack = -1;
    a.category = a.listed_category = category;
    a.rule = rule;
    a.process = 7;
    return a;
}

}  // namespace

TEST_CASE("ZeRO divides the update's own temporaries by the ranks, not forward's activations") {
    // One process, two steps; the optimizer phase of step 1 is [300, 400], step 2 begins at 500.
    RecordedRun run;
    run.allocations = {
        allocation(16 * kMiB, 310, 450, kActivations),                     // an Adam denominator: made in the update
        allocation(16 * kMiB, 120, 250, kActivations),                     // forward's activation
        allocation(16 * kMiB, 320, 2000, kActivations),                    // made in the update, kept past the step
        allocation(32 * kMiB, 330, 450, kWorkspace, "library-workspace"),  // a library's: fixed
        allocation(16 * kMiB, 305, 450, kOptimizer),                       // the state: divided as before
    };
    run.real_count = run.allocations.size();
    run.update_windows[7] = {{300, 400, 500}, {800, 900, INT64_MAX}};
    Model model;
    model.ranks = 2;
    ScenarioSpec zero1;
    zero1.zero_stage = 1;
    std::vector<int64_t> pool_bytes;
    const std::vector<int64_t> bytes = scenario_bytes(run, model, zero1, {}, pool_bytes);
    REQUIRE(bytes.size() == 5);
    CHECK(bytes[0] == 8 * kMiB);
    CHECK(bytes[1] == 16 * kMiB);
    CHECK(bytes[2] == 16 * kMiB);
    CHECK(bytes[3] == 32 * kMiB);
    CHECK(bytes[4] == 8 * kMiB);
    // Without ZeRO nothing changes.
    const std::vector<int64_t> recorded = scenario_bytes(run, model, ScenarioSpec{}, {}, pool_bytes);
    CHECK(recorded[0] == 16 * kMiB);
    CHECK(recorded[4] == 16 * kMiB);
}

TEST_CASE("a partition by whole tensors gives the busiest rank its tensors' share") {
    // Three weights tensors of 16, 16 and 2 MiB over 2 ranks, largest first to the rank with the
    // least so far: one rank keeps 18 of 34 MiB; the state is divided by that share, not by 2.
    RecordedRun run;
    run.allocations = {allocation(16 * kMiB, 10, INT64_MAX, kWeights), allocation(16 * kMiB, 11, INT64_MAX, kWeights),
                       allocation(2 * kMiB, 12, INT64_MAX, kWeights), allocation(34 * kMiB, 20, INT64_MAX, kOptimizer)};
    run.real_count = run.allocations.size();
    const std::vector<Event> events = ordered_events(run.allocations);
    WhatIfOptions options;
    options.zero_stage = 1;
    options.ranks = 2;
    options.zero_bucket_bytes = 0;
    const Replayed recorded{};
    Model even = read_model(run, events, recorded, options);
    CHECK(shard_share(even) == doctest::Approx(0.5));
    options.zero_partition_tensors = true;
    Model tensors = read_model(run, events, recorded, options);
    CHECK(shard_share(tensors) == doctest::Approx(18.0 / 34.0));
    even.granularity = tensors.granularity = 1;  // the sizes unrounded (these are all multiples of 2 MiB)
    ScenarioSpec zero1;
    zero1.zero_stage = 1;
    std::vector<int64_t> pool_bytes;
    CHECK(scenario_bytes(run, tensors, zero1, {}, pool_bytes)[3] == 18 * kMiB);
    CHECK(scenario_bytes(run, even, zero1, {}, pool_bytes)[3] == 17 * kMiB);
}

TEST_CASE("a caching pool's 2 MiB granularity holds beside the small buffers a library allocated for itself") {
    // cuBLAS's handle buffers on the H200 (1 KiB, 128 KiB, through the driver) beside a pool's segments:
    // the library's own sizes are not the program's allocator's, so the pool replay still applies.
    RecordedRun run;
    run.allocations = {
        allocation(2 * kMiB, 100, 900, kActivations),
        allocation(20 * kMiB, 100, 900, kActivations),
        allocation(2 * kMiB, 200, 900, kWeights),
        allocation(1024, 50, INT64_MAX, kWorkspace, "library-handle-workspace"),
        allocation(128 * 1024, 60, INT64_MAX, kWorkspace, "library-handle-workspace"),
        allocation(64 * kMiB, 70, INT64_MAX, kWorkspace, "library-handle-workspace"),
    };
    run.real_count = run.allocations.size();
    CHECK(granularity_of(run) == 2 * kMiB);
    // A small allocation of the program's own is its allocator's granularity.
    run.allocations[3].rule = "persistent-unused";
    CHECK(granularity_of(run) == 512);
}
