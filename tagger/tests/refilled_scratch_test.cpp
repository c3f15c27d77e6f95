// Change 49 (docs/tagging.md): an address of a planned block that is filled and consumed at once,
// again and again within each step, each fill made from other data than the one before, is an
// operation's scratch (tagger/refilled_scratch.h), also once change 45 cuts each fill apart.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

enum Slot : uint32_t { kIn, kOut };
constexpr int kImages = 10;

// A step's start: the batch copied in (16384).
size_t begin_step(Pool& p) {
    return p.copy_in(16384, 4096 * kImages);
}

// The step's end: a loss over the outputs (98304), the weight gradient (8192) from them, and the
// update of the weights (0) from it.
size_t end_step(Pool& p) {
    p.kernel({{98304, Access::Read}, {196608, Access::Write}}, 30);
    p.gemm(196608, 16384, 8192, {}, 4096);
    return p.kernel({{8192, Access::Read}, {0, Access::Write}}, 31);
}

}  // namespace

TEST_CASE("a scratch refilled from each image and consumed by the next GEMM is workspace, fill by fill") {
    // Per step and image: kernel 20 (an im2col) reads the image's slice of the batch through its
    // input word and writes the columns at 65536 through its output word; a GEMM reads them with the
    // weights and writes the image's output slice. The kernel's write after the GEMM's read begins a
    // new tenant each time (change 45): ten tensors a step at 65536, each written and read once.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise the weights
    struct_kernel(p, {{16384, kIn}, {245760, kOut}}, 20);
    for (int s = 0; s < 4; ++s) {
        const size_t first = begin_step(p);
        for (int b = 0; b < kImages; ++b) {
            struct_kernel(p, {{16384 + 4096u * b, kIn}, {65536, kOut}}, 20);
            p.gemm(0, 65536, 98304 + 4096u * b, {}, 4096);
        }
        p.step(first, end_step(p) + 1);
    }
    const TagResult r = tag_four_steps(p.model);
    REQUIRE_GE(pieces(r, 65536, "workspace"), 4u * kImages);  // one tensor a fill (else one a step)
    CHECK_EQ(pieces(r, 65536, "activations"), 0u);            // each fill alone: data between two operations
    CHECK_GE(pieces(r, 0, "weights"), 1u);
}

TEST_CASE("an address refilled from what read the fill before carries a recurrence: activations") {
    // Per step, ten times: a GEMM writes D at 65536 from G (73728) and the weights; kernel 21 reads D
    // through a pointer to const and writes the next G. Each D is written and
    // read once, right away, as a scratch is; but each is made from what read the one before (an
    // LSTM's gradient through time): data carried from operation to operation.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);
    for (int s = 0; s < 4; ++s) {
        const size_t first = begin_step(p);
        p.kernel({{16384, Access::Read}, {73728, Access::Write}}, 23);  // the first G
        for (int t = 0; t < kImages; ++t) {
            p.gemm(73728, 0, 65536, {}, 4096);
            p.kernel({{65536, Access::Read}, {73728, Access::Write}}, 21);
        }
        p.kernel({{73728, Access::Read}, {98304, Access::Write}}, 22);
        p.step(first, end_step(p) + 1);
    }
    const TagResult r = tag_four_steps(p.model);
    CHECK_EQ(pieces(r, 65536, "workspace"), 0u);
    CHECK_GE(pieces(r, 65536, "activations"), 4u * kImages);
}
