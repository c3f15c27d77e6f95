// Sub-ranges of gradients that travel through a communication bucket (DDP's .grad copied into a slot,
// summed over the ranks in place, copied back) on small made-up models whose tensors are known.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

// A DDP-shaped step inside one pooled segment (DistributedDataParallel's default: .grad apart from its
// communication buckets). Two weights W1 at 0 and W2 at 4096 with their momenta at 8192 and 12288; the
// input X at 16384; per step, activations at 24576, 28672, 32768 and 36864, the weight gradients G1
// at 40960 and G2 at 45056 (backward's GEMMs write them), each scaled into its slot of the bucket B
// (8192 bytes at 65536, G1's slot at its start, G2's inside), B summed over the ranks in place, each
// slot copied back into its gradient, and the update reading the gradients. `fill_g1_from`: the address
// the kernel filling G1's slot takes its value from (G1's own, or another tensor's). The slots are
// filled from the bucket's end (G2's first) and copied back from its start, as in DDP's first step.
// `first_update_copies`: the first step's update reads no gradient in its kernel but copies each into
// the momentum it makes, then reads the momenta (SGD's first step).
constexpr uint64_t kGrad1 = 40960, kGrad2 = 45056, kBucket = 65536;

void ddp_update(Pool& p, bool copies_into_momentum) {
    if (copies_into_momentum) {
        p.work(WorkItem::Kind::CopyDtoD, {{8192, Access::Write, 4096, true}, {kGrad1, Access::Read, 4096, true}});
        p.work(WorkItem::Kind::CopyDtoD, {{12288, Access::Write, 4096, true}, {kGrad2, Access::Read, 4096, true}});
        p.kernel({{8192, Access::Read}, {12288, Access::Read}, {0, Access::Write}, {4096, Access::Write}}, 6);
        return;
    }
    p.kernel({{kGrad1, Access::Read},
              {kGrad2, Access::Read},
              {8192, Access::Write},
              {12288, Access::Write},
              {0, Access::Write},
              {4096, Access::Write}},
             5);
}

Pool ddp_shaped_run(bool reduce, uint64_t fill_g1_from = kGrad1, bool first_update_copies = false) {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}, {4096, Access::Write}}, 9);  // initialise the weights
    LibraryCall all_reduce;
    all_reduce.a = all_reduce.c = 0;
    all_reduce.collective = Collective::Reduction;
    const CallOperands bucket{.a_address = kBase + kBucket, .c_address = kBase + kBucket};
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);                                                  // forward: A = X W1
        p.gemm(24576, 4096, 28672);                                               // Y = A W2
        p.kernel({{28672, Access::Read}, {32768, Access::Write}}, 2);             // the loss gradient dY
        p.gemm(24576, 32768, kGrad2, {}, 4096);                                   // G2 = A^T dY
        p.kernel({{kGrad2, Access::Write}, {kBucket + 4096, Access::Write}}, 3);  // G2 / ranks into B
        p.gemm(32768, 4096, 36864);                                               // dA = dY W2^T
        p.gemm(16384, 36864, kGrad1, {}, 4096);                                   // G1 = X^T dA
        p.kernel({{fill_g1_from, Access::Write}, {kBucket, Access::Write}}, 3);   // G1 / ranks into B
        if (reduce) {
            size_t sum = p.kernel({{kBucket, Access::Read, 8192, true}, {kBucket, Access::Write, 8192, true}}, 300);
            p.call_on(sum, all_reduce, bucket);
        }
        p.work(WorkItem::Kind::CopyDtoD, {{kGrad1, Access::Write, 4096, true}, {kBucket, Access::Read, 4096, true}});
        p.work(WorkItem::Kind::CopyDtoD,
               {{kGrad2, Access::Write, 4096, true}, {kBucket + 4096, Access::Read, 4096, true}});
        ddp_update(p, first_update_copies && s == 0);
        p.step(first, p.model.work.size());
    }
    return p;
}

}  // namespace

TEST_CASE("a gradient copied into a bucket, summed over the ranks and copied back is one tensor: gradients") {
    Pool p = ddp_shaped_run(true);
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    auto pieces = [&](uint64_t offset, const char* category) {
        return std::count_if(r.subranges.begin(), r.subranges.end(), [&](const SubRangeTag& t) {
            return t.offset == offset && (!category || t.tag.category == category);
        });
    };
    for (uint64_t grad : {kGrad1, kGrad2}) {
        CAPTURE(grad);
        CHECK_EQ(pieces(grad, nullptr), 4);  // one per step: not cut where the sum comes back
        CHECK_EQ(pieces(grad, "gradients"), 4);
    }
    // The bucket, one tensor per step (its all-reduce reads it before writing it: no cut there), summed
    // for the update.
    CHECK_EQ(pieces(kBucket, nullptr), 4);
    CHECK_EQ(pieces(kBucket, "gradients"), 4);
    CHECK_EQ(pieces(0, "weights"), 1);
    CHECK_EQ(pieces(8192, "optimizer_state"), 1);
}

TEST_CASE("a copy brings a new value when the bucket held another tensor's, or nothing summed it") {
    // The slot G1 is copied back from was filled from another tensor's value (the activation at
    // 32768): G1's value before is gone, the copy starts a tensor of its own. And without the sum over
    // the ranks, no gradient comes back: the copy is an ordinary one, as before.
    for (const auto& shape : {std::pair{true, uint64_t{32768}}, std::pair{false, kGrad1}}) {
        // Not a structured binding: CAPTURE's lambda cannot capture one under clang 14 (the sanitizer build).
        const bool reduce = shape.first;
        const uint64_t from = shape.second;
        CAPTURE(reduce);
        Pool p = ddp_shaped_run(reduce, from);
        IterationSet its = steps_of(p.model);
        REQUIRE_EQ(its.iterations.size(), 4u);
        SubRangeSet set = derive_subranges(p.model, its);
        CHECK_EQ(at(set, kGrad1).size(), 8u);  // two per step: cut at the copy
        CHECK_EQ(at(set, kGrad2).size(), reduce ? 4u : 8u);
    }
}

TEST_CASE("a bucket all-reduced whole is one tensor with the slots filled before and copied back after it") {
    // The slot at the bucket's start is filled last and copied back first (DDP's first step: one
    // bucket of the whole model), so G2's slot is used only before and after the life of the piece at
    // the start; the all-reduce read and wrote its bytes while it held G2's value: one bucket. And in
    // the step whose update copies the gradients into the momentum it makes (SGD's first step), the
    // bucket's sum still goes to the update: gradients.
    Pool p = ddp_shaped_run(true, kGrad1, true);
    IterationSet its = steps_of(p.model);
    REQUIRE_EQ(its.iterations.size(), 4u);
    SubRangeSet set = derive_subranges(p.model, its);
    CHECK(at(set, kBucket + 4096).empty());  // no tensor of its own: inside the bucket
    REQUIRE_EQ(at(set, kBucket).size(), 4u);
    for (const SubRange& bucket : at(set, kBucket)) CHECK_EQ(bucket.bytes, 8192);
    TagResult r = tag_model(p.model, "", its);
    size_t buckets = 0;
    for (const SubRangeTag& t : r.subranges) {
        if (t.offset != kBucket) continue;
        ++buckets;
        CHECK_EQ(t.tag.category, "gradients");
        CHECK_EQ(t.tag.rule, "reduced-gradient-bucket");
    }
    CHECK_EQ(buckets, 4u);
}
