// The ends of pooled weights and optimizer state after their last use (tagger/pool_tagging.cpp,
// hold_carried_state, docs/tagging.md change 42) on a made-up run: the update leaves them for a
// later step, so the last step's pieces stay held until their segment is freed or the run ends,
// unless a later tensor is placed on their bytes; an activation still ends with its step.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

constexpr uint64_t kWeight = 0, kMomentum = 8192, kBatch = 16384, kHidden = 24576, kGradient = 40960;

// Four steps of SGD with momentum on one segment: W at kWeight, its momentum at kMomentum, the
// batch copied in at kBatch, H = X W at kHidden, G = X^T H at kGradient; the update reads G and
// the momentum and rewrites both the momentum and W. Returns the launch of the last step's update.
int64_t train(Pool& p) {
    p.kernel({{kWeight, Access::Write}}, 9);  // initialise W
    int64_t update_ns = 0;
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(kBatch, 4096);
        p.gemm(kBatch, kWeight, kHidden);
        p.gemm(kBatch, kHidden, kGradient);
        size_t last = p.kernel({{kGradient, Access::Read},
                                {kMomentum, Access::Write},
                                {kMomentum, Access::Read},
                                {kWeight, Access::Write}},
                               3);
        update_ns = p.model.work[last].launch_ns;
        p.step(first, last + 1);
    }
    return update_ns;
}

// The latest end of the pieces starting at `offset` tagged `category` (0: none).
int64_t last_end_ns(const TagResult& r, uint64_t offset, const char* category) {
    int64_t end = 0;
    for (const SubRangeTag& t : r.subranges)
        if (t.offset == offset && t.tag.category == category) end = std::max(end, t.end_ns);
    return end;
}

}  // namespace

TEST_CASE("the last step's weights and optimizer state are held until the run ends, its activations are not") {
    Pool p(1 << 20);
    const int64_t last_update_ns = train(p);
    p.model.run_end_ns = p.now + 1'000'000;  // the program runs on after its last kernel
    const TagResult r = tag_four_steps(p.model);
    CHECK_EQ(last_end_ns(r, kWeight, "weights"), p.model.run_end_ns);
    CHECK_EQ(last_end_ns(r, kMomentum, "optimizer_state"), p.model.run_end_ns);
    // The last step's activation is dead after its readers: it ends by its step, long before.
    const int64_t hidden_end_ns = last_end_ns(r, kHidden, "activations");
    CHECK_GT(hidden_end_ns, 0);
    CHECK_LT(hidden_end_ns, last_update_ns + 1000);
}

TEST_CASE("a weight's piece is held until its segment is freed, and not past a later tensor on its bytes") {
    SUBCASE("the segment freed after the last kernel") {
        Pool p(1 << 20);
        train(p);
        p.model.run_end_ns = p.now + 1'000'000;
        p.model.allocations[0].free_ns = p.now + 500;
        IterationSet its;
        TagResult r = tag_model(p.model, "", its);
        CHECK_EQ(last_end_ns(r, kWeight, "weights"), *p.model.allocations[0].free_ns);
    }
    SUBCASE("another buffer written whole over the weight's bytes after training") {
        Pool p(1 << 20);
        train(p);
        const int64_t set_ns = p.now;
        p.set(kWeight, 4096);                     // the allocator handed W's block to a new buffer
        p.kernel({{kWeight, Access::Read}}, 20);  // that something reads
        p.model.run_end_ns = p.now + 1'000'000;
        IterationSet its;
        TagResult r = tag_model(p.model, "", its);
        const int64_t weight_end_ns = last_end_ns(r, kWeight, "weights");
        CHECK_GT(weight_end_ns, 0);
        CHECK_LE(weight_end_ns, set_ns);
    }
}
