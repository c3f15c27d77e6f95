// Autocast-style mixed precision in the what-if (whatif_autocast.h): which requests a caching pool
// gets under autocast, the copies of what the GEMMs read added.
#include <doctest/doctest.h>

#include <vector>

#include "whatif_autocast.h"

using namespace tbdprof::analyzer;
using namespace tbdprof::analyzer::whatif;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

PoolTensor tensor(int64_t bytes, int64_t begin_ns, int64_t end_ns, int category, uint8_t role) {
    PoolTensor t;
    t.bytes = bytes;
    t.begin_ns = begin_ns;
    t.end_ns = end_ns;
    t.category = category;
    t.gemm_role = role;
    return t;
}

// One pooled segment of process 0, and two training steps whose updates run at 400-450 and 900-950.
RecordedRun two_steps() {
    RecordedRun run;
    Allocation segment{};
    segment.bytes = 20 * kMiB;
    segment.free_ns = INT64_MAX;
    run.allocations.push_back(segment);
    run.real_count = 1;
    run.update_windows[0] = {{400, 450, 500}, {900, 950, INT64_MAX}};
    return run;
}

}  // namespace

TEST_CASE("autocast copies a weight a GEMM reads once per step, from its first read to its last") {
    const RecordedRun run = two_steps();
    PoolTensor weight = tensor(4 * kMiB, 0, INT64_MAX, kWeights, kGemmRead);
    weight.gemm_reads_ns = {100, 300, 600, 800};  // forward and backward of two steps
    const AutocastRequests out = autocast_requests(run, {weight}, {4 * kMiB}, 0.5);
    REQUIRE(out.tensors.size() == 3);
    CHECK(out.bytes == std::vector<int64_t>{4 * kMiB, 2 * kMiB, 2 * kMiB});
    CHECK(out.tensors[0].end_ns == INT64_MAX);  // the FP32 weight stays
    CHECK(out.tensors[1].begin_ns == 100);
    CHECK(out.tensors[1].end_ns == 300);
    CHECK(out.tensors[2].begin_ns == 600);
    CHECK(out.tensors[2].end_ns == 800);
}

TEST_CASE("autocast releases an FP32 activation a GEMM reads at its cast unless other work uses it after") {
    const RecordedRun run = two_steps();
    // A layer norm's output (FP32) read by a GEMM at 120 and by backward's weight GEMM at 300; a
    // softmax's output read by a GEMM at 130, and by the softmax's backward kernel after.
    PoolTensor norm = tensor(8 * kMiB, 110, 300, kActivations, kGemmRead);
    norm.gemm_reads_ns = {120, 300};
    PoolTensor softmax = tensor(2 * kMiB, 125, 320, kActivations, kGemmRead | kUsedAfterRead);
    softmax.gemm_reads_ns = {130, 310};
    // A GEMM's output (BF16 under autocast) read by the next GEMM: no copy.
    PoolTensor output = tensor(4 * kMiB, 140, 290, kActivations, kGemmWritten | kGemmRead | kLowerPrecision);
    output.gemm_reads_ns = {150, 280};
    const AutocastRequests out = autocast_requests(run, {norm, softmax, output}, {8 * kMiB, 2 * kMiB, 2 * kMiB}, 0.5);
    REQUIRE(out.tensors.size() == 5);
    CHECK(out.tensors[0].end_ns == 120);  // released at the cast
    CHECK(out.tensors[1].end_ns == 320);  // kept: its backward reads it
    CHECK(out.tensors[2].end_ns == 290);
    CHECK(out.bytes == std::vector<int64_t>{8 * kMiB, 2 * kMiB, 2 * kMiB, 4 * kMiB, kMiB});
    CHECK(out.tensors[3].begin_ns == 120);
    CHECK(out.tensors[3].end_ns == 300);
    CHECK(out.tensors[4].begin_ns == 130);
    CHECK(out.tensors[4].end_ns == 310);
}

TEST_CASE(
    "autocast halves lower-precision activations and temporaries, never weights, gradients or library workspaces") {
    CHECK(autocast_request_multiplier(kActivations, false, kGemmWritten | kLowerPrecision, 0.5) == 0.5);
    CHECK(autocast_request_multiplier(kWorkspace, false, kLowerPrecision, 0.5) == 0.5);
    CHECK(autocast_request_multiplier(kWorkspace, true, kLowerPrecision, 0.5) == 1.0);
    CHECK(autocast_request_multiplier(kActivations, false, kGemmRead, 0.5) == 1.0);  // FP32, its copy apart
    CHECK(autocast_request_multiplier(kGradients, false, kGemmWritten, 0.5) == 1.0);
    // Without the pool's requests: a weight a GEMM reads carries its copy, an FP32 tensor used after
    // its cast too, one released at the cast only the copy.
    CHECK(autocast_multiplier(kWeights, false, kGemmRead, 0.5) == 1.5);
    CHECK(autocast_multiplier(kActivations, false, kGemmRead | kUsedAfterRead, 0.5) == 1.5);
    CHECK(autocast_multiplier(kActivations, false, kGemmRead, 0.5) == 0.5);
    CHECK(autocast_multiplier(kActivations, false, 0, 0.5) == 1.0);
}
