// Copies an operation makes of its input for its own kernels (tagger/copies_for_next_kernels.cpp,
// docs/tagging.md change 41) on a made-up pooled run: an attention backward copies the output's
// gradient into contiguous space, reads the copy with a product kernel and with its attention
// kernel, and drops it. The copy is that operation's workspace, not data handed between operations.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

constexpr uint64_t kCopy = 53248;  // where the copy is made in every step

enum class Variant {
    kAttention,          // the copy's readers are the operation's own kernels
    kSourceUsedBetween,  // a kernel among the readers also uses the copy's source
    kReadByProduct,      // a GEMM reads the copy: another operation's input
    kOtherWorkBetween,   // work on buffers the copy's stretch never touched runs among its readers
    kSourceSliced,       // the copy takes a slice from inside a larger tensor, whose start a reader uses
    kSourceWithOwnWork,  // a kernel among the readers uses the source and the readers' reduction
};

// Four steps: X copied in at 16384, H = X W at 24576, Y = f(H) at 28672; backward: a GEMM writes
// dO at 40960 and another a weight gradient at 69632 from it; kernel 20 copies dO to kCopy (two
// operands), kernel 21 multiplies the copy by Y into 57344, kernel 22 reduces that into 61440,
// kernel 23 (the attention's backward kernel) reads the copy and the reduction and writes dQ at
// 65536; a GEMM makes a weight gradient from dQ and X at 73728, and the update reads both and
// rewrites W. Every plain kernel takes its pointers in a struct (writable).
TagResult tag_run(Variant variant) {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);
        struct_kernel(p, {{24576, 0}, {28672, 1}}, 8);
        const bool sliced = variant == Variant::kSourceSliced;
        p.gemm(28672, 0, 40960, {}, sliced ? 8192 : 0);  // with a size: a slice at 45056 lies inside it
        p.gemm(28672, 40960, 69632);                     // W's gradient: backward has begun
        struct_kernel(p, {{sliced ? 45056 : 40960, 2}, {kCopy, 3}}, 20);
        if (variant == Variant::kSourceUsedBetween || sliced)
            struct_kernel(p, {{kCopy, 4}, {40960, 5}, {57344, 6}}, 21);
        else
            struct_kernel(p, {{kCopy, 4}, {28672, 5}, {57344, 6}}, 21);
        struct_kernel(p, {{57344, 7}, {61440, 8}}, 22);
        if (variant == Variant::kSourceWithOwnWork) struct_kernel(p, {{40960, 13}, {61440, 14}, {77824, 15}}, 24);
        if (variant == Variant::kOtherWorkBetween) p.kernel({{32768, Access::Write}}, 26);
        if (variant == Variant::kReadByProduct)
            p.gemm(kCopy, 61440, 65536);
        else
            struct_kernel(p, {{kCopy, 9}, {61440, 10}, {24576, 11}, {65536, 12}}, 23);
        p.gemm(65536, 16384, 73728);  // another weight gradient, from dQ
        size_t last = p.kernel({{69632, Access::Read}, {73728, Access::Read}, {0, Access::Write}}, 3);
        p.step(first, last + 1);
    }
    return tag_four_steps(p.model);
}

}  // namespace

TEST_CASE("a copy only the next kernels of its operation read is that operation's workspace") {
    const TagResult r = tag_run(Variant::kAttention);
    CHECK_EQ(pieces(r, 0, "weights"), 1u);
    CHECK_GE(pieces(r, kCopy, "workspace"), 3u);  // every step's copy (the first step may differ)
    CHECK_EQ(pieces(r, kCopy, "activations"), 0u);
    for (const SubRangeTag& t : r.subranges)
        if (t.offset == kCopy) CHECK_EQ(t.tag.rule, "copy-for-next-kernels");
}

TEST_CASE("a copy of a slice is workspace though a reader uses the larger tensor's start") {
    // The copy read from inside the tensor at 40960 (8192 bytes), the multiply reads its start: which
    // bytes each touched the pieces do not say, so that use is no evidence that the copy's readers
    // are two operations (change 46). Before, the copy was an activation, as when the multiply read
    // the copied bytes themselves (kSourceUsedBetween, below).
    const TagResult r = tag_run(Variant::kSourceSliced);
    CHECK_GE(pieces(r, kCopy, "workspace"), 3u);
    CHECK_EQ(pieces(r, kCopy, "activations"), 0u);
}

TEST_CASE("a copy is workspace though a reader uses its source when that reader takes in the readers' work") {
    // Kernel 24, among the copy's readers, reads the source dO and the reduction kernel 22 made of
    // the copy: a step of the same operation using its input twice (an attention backward's kernel
    // preparing the attention kernel's input), not another operation handed the copy.
    const TagResult r = tag_run(Variant::kSourceWithOwnWork);
    CHECK_GE(pieces(r, kCopy, "workspace"), 3u);
    CHECK_EQ(pieces(r, kCopy, "activations"), 0u);
}

TEST_CASE("a copy whose readers look like two operations, or that a GEMM reads, is data") {
    // The source used between the readers: the copy's maker belongs to another operation than the
    // work around it (a softmax whose input's space the loss's gradient takes). A GEMM reading it: a
    // library call takes strided operands, so the copy was the result of an operation of its own.
    // Work on other buffers among its readers: they are two operations, and the copy was handed on.
    for (Variant variant : {Variant::kSourceUsedBetween, Variant::kReadByProduct, Variant::kOtherWorkBetween}) {
        const TagResult r = tag_run(variant);
        CHECK_EQ(pieces(r, kCopy, "workspace"), 0u);
        CHECK_GE(pieces(r, kCopy, "activations"), 3u);
    }
}
