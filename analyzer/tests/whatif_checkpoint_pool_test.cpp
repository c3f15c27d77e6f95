// Checkpointing the tensors of a caching pool (whatif_checkpoint.h, whatif_checkpoint_pool.cpp): a
// hand-built step in one pooled segment, with the tagger's forward phase ending too early.
#include <doctest/doctest.h>

#include <vector>

#include "tbdprof/trace/categories.h"
#include "whatif_checkpoint.h"

using namespace tbdprof::analyzer;

namespace {

constexpr int kWeights = static_cast<int>(tbdprof::trace::Category::weights);
constexpr int kActivations = static_cast<int>(tbdprof::trace::Category::activations);

PoolTensor tensor(int64_t offset, int64_t begin_ns, int64_t end_ns, int category) {
    PoolTensor t;
    t.offset = offset;
    t.bytes = 4096;
    t.begin_ns = begin_ns;
    t.end_ns = end_ns;
    t.category = category;
    return t;
}

// The one 2 MiB segment the steps below hold their tensors in, freed at the end (1000 ns).
Allocation pooled_segment() {
    Allocation segment{};
    segment.bytes = int64_t{2} << 20;
    segment.free_ns = 1000;
    segment.freed = true;
    segment.by_subrange = true;
    return segment;
}

// One 2 MiB segment (allocation 0) holding three layers' weights (W1 at 0, W2 at 4096, W3 at 8192: the
// head) and activations: A1 (layer 0's output, read by layer 1), T1 (inside layer 0, read in
// backward), A2 (layer 1's output, read by the head). Forward 100-249, backward 250-400.
struct Step {
    std::vector<Allocation> allocations;
    std::vector<PoolTensor> tensors{tensor(0, 0, 1000, kWeights),          tensor(4096, 0, 1000, kWeights),
                                    tensor(8192, 0, 1000, kWeights),       tensor(16384, 110, 350, kActivations),
                                    tensor(20480, 115, 340, kActivations), tensor(24576, 130, 300, kActivations)};
    MappedSegments mapped;
    CheckpointFacts facts;

    Step(int64_t tagger_forward_end_ns) {
        allocations.push_back(pooled_segment());
        facts.kernel_accesses = true;
        facts.forward = {{100, tagger_forward_end_ns}};
        facts.backward = {{tagger_forward_end_ns, 400}};
        auto touch = [&](int64_t ns, int64_t offset, int64_t call, bool writes) {
            facts.segment_touches.push_back({ns, 0, offset, call, writes});
        };
        touch(110, 0, 1, false);      // layer 0: GEMM 1 reads W1,
        touch(110, 16384, 1, true);   // writes A1
        touch(115, 20480, -1, true);  // a kernel of layer 0 writes T1
        touch(118, 20480, -1, false);
        touch(130, 4096, 2, false);  // layer 1: GEMM 2 reads W2 and A1, writes A2
        touch(130, 16384, 2, false);
        touch(130, 24576, 2, true);
        touch(150, 8192, 3, false);  // the head reads W3 and A2
        touch(150, 24576, 3, false);
        touch(250, 8192, 4, false);   // backward: the head's input gradient reads W3 again
        touch(300, 24576, 5, false);  // A2, T1 and A1 read by backward
        touch(340, 20480, 6, false);
        touch(350, 16384, 7, false);
    }
};

}  // namespace

TEST_CASE("forward's end is the first call re-reading a weight, wherever the tagger's phase ends") {
    Step early(112);  // the tagger's forward ended after the first GEMM
    checkpoint_detail::align_phases(early.facts, early.allocations, nullptr);
    CHECK(early.facts.forward[0].second == 112);  // without the pool's tensors nothing says where weights lie
    const PooledTensors pooled{early.tensors, early.mapped};
    checkpoint_detail::align_phases(early.facts, early.allocations, &pooled);
    CHECK(early.facts.forward[0].second == 249);
    CHECK(early.facts.backward[0].first == 250);

    // The tagger's forward ending after the head's input gradient (backward's, at 250: the tagger
    // begins backward at the first weight gradient written) is cut back to it: otherwise that call
    // counts as a forward layer.
    Step late(260);
    const PooledTensors late_pooled{late.tensors, late.mapped};
    checkpoint_detail::align_phases(late.facts, late.allocations, &late_pooled);
    CHECK(late.facts.forward[0].second == 249);
    CHECK(late.facts.backward[0].first == 250);
}

TEST_CASE("a pooled activation saved inside a checkpointed segment is released and requested again") {
    Step step(112);
    const PooledTensors pooled{step.tensors, step.mapped};
    const CheckpointPlan plan = plan_checkpointing(step.facts, step.allocations, 1, &pooled);
    REQUIRE(plan.cannot_predict.empty());
    CHECK(plan.layers == 3);
    CHECK(plan.pooled);
    // T1 (index 4) is layer 0's own: released after its last forward use, requested again at the
    // segment's first backward read. A1 crosses into layer 1 (kept); A2 is read by the head, the last
    // segment's (kept).
    REQUIRE(plan.pool_tensors.size() == step.tensors.size() + 1);
    CHECK(plan.pool_tensors[4].end_ns == 118);
    CHECK(plan.pool_origin.back() == 4);
    CHECK(plan.pool_tensors.back().begin_ns == 340);
    CHECK(plan.pool_tensors.back().end_ns == 340);
    CHECK(plan.pool_tensors[3].end_ns == 350);
    CHECK(plan.pool_tensors[5].end_ns == 300);
    CHECK(plan.recomputed_bytes == 4096);

    // Without the pool's tensors, activations inside a segment stop the prediction.
    Allocation piece = step.allocations[0];
    piece.real = false;
    piece.by_subrange = false;
    piece.segment = 0;
    piece.category = kActivations;
    piece.bytes = 4096;
    piece.alloc_ns = 115;
    piece.free_ns = 340;
    step.allocations.push_back(piece);
    CHECK_FALSE(plan_checkpointing(step.facts, step.allocations, 1).cannot_predict.empty());
}

namespace {

// Two pre-norm residual blocks' worth of a step in one pooled segment (one weights call each, then
// a head), K=1: block 1's GEMM writes F; the residual add writes X (block 1's output, block 2's
// input); block 2's LayerNorm reads X and writes N (normed, read by block 2's GEMM) and S (its
// statistics, read only in backward); block 2's GEMM writes G; its residual add reads X and G and
// writes Y, which the head reads. Forward 100-249, backward 250-400.
struct PreNormStep {
    enum : size_t { W1, W2, W3, F, X, N, S, G, Y };
    std::vector<Allocation> allocations;
    std::vector<PoolTensor> tensors{tensor(0, 0, 1000, kWeights),
                                    tensor(4096, 0, 1000, kWeights),
                                    tensor(8192, 0, 1000, kWeights),
                                    tensor(4096 * 3, 110, 115, kActivations),
                                    tensor(4096 * 4, 115, 320, kActivations),
                                    tensor(4096 * 5, 120, 300, kActivations),
                                    tensor(4096 * 6, 120, 310, kActivations),
                                    tensor(4096 * 7, 130, 135, kActivations),
                                    tensor(4096 * 8, 135, 330, kActivations)};
    MappedSegments mapped;
    CheckpointFacts facts;

    PreNormStep() {
        allocations.push_back(pooled_segment());
        facts.kernel_accesses = true;
        facts.forward = {{100, 249}};
        facts.backward = {{250, 400}};
        auto touch = [&](int64_t ns, size_t t, int64_t call, bool writes) {
            facts.segment_touches.push_back({ns, 0, tensors[t].offset, call, writes, call >= 0});
        };
        touch(110, W1, 1, false);  // block 1's GEMM writes F
        touch(110, F, 1, true);
        touch(115, F, -1, false);  // residual add: X
        touch(115, X, -1, true);
        touch(120, X, -1, false);  // block 2's LayerNorm: N and S
        touch(120, N, -1, true);
        touch(120, S, -1, true);
        touch(130, W2, 2, false);  // block 2's GEMM reads N, writes G
        touch(130, N, 2, false);
        touch(130, G, 2, true);
        touch(135, X, -1, false);  // residual add: Y
        touch(135, G, -1, false);
        touch(135, Y, -1, true);
        touch(150, W3, 3, false);  // the head reads Y
        touch(150, Y, 3, false);
        touch(250, W3, 4, false);  // backward: the head's input gradient, then the saved activations
        touch(300, N, 5, false);
        touch(310, S, -1, false);
        touch(320, X, -1, false);
        touch(330, Y, 6, false);
    }
};

size_t request_again(const CheckpointPlan& plan, size_t tensor) {
    for (size_t i = 0; i < plan.pool_origin.size(); ++i)
        if (i >= plan.pool_tensors.size() - plan.recomputed_allocations && plan.pool_origin[i] == tensor) return i;
    return SIZE_MAX;
}

}  // namespace

TEST_CASE("a pre-norm block's first LayerNorm is recomputed with its block, not kept by the one before") {
    PreNormStep step;
    const PooledTensors pooled{step.tensors, step.mapped};
    const CheckpointPlan plan = plan_checkpointing(step.facts, step.allocations, 1, &pooled);
    REQUIRE(plan.cannot_predict.empty());
    CHECK(plan.layers == 3);
    // Block 2 begins at its LayerNorm: only X (block 1's output) crosses there; at block 2's GEMM, N
    // would cross too and be kept through forward, as a checkpoint of block 2 does not keep it.
    REQUIRE(request_again(plan, PreNormStep::N) != SIZE_MAX);
    CHECK(plan.pool_tensors[PreNormStep::N].end_ns == 130);
    CHECK(plan.pool_tensors[request_again(plan, PreNormStep::N)].begin_ns == 300);
    // S is block 2's: requested again when block 2's recomputation begins (its first backward read, of N).
    REQUIRE(request_again(plan, PreNormStep::S) != SIZE_MAX);
    CHECK(plan.pool_tensors[request_again(plan, PreNormStep::S)].begin_ns == 300);
    // X, the checkpoint between the blocks, and Y, read by the head, are kept.
    CHECK(request_again(plan, PreNormStep::X) == SIZE_MAX);
    CHECK(plan.pool_tensors[PreNormStep::X].end_ns == 320);
    CHECK(request_again(plan, PreNormStep::Y) == SIZE_MAX);
    CHECK(plan.recomputed_bytes == 2 * 4096);
}
