// Autocast's per-step copies of the weights and forward's values inside a pool, on made-up runs
// (tagger/carried_reads.h, tagger/forward_values.h; docs/tagging.md, change 38). Every pointer of
// the elementwise kernels sits in a by-value struct, writable: only the words show what they read.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

size_t pieces_in_steps(const TagResult& r, uint64_t offset) {
    return size_t(std::count_if(r.subranges.begin(), r.subranges.end(),
                                [&](const SubRangeTag& t) { return t.offset == offset && t.tag.category != "other"; }));
}

}  // namespace

TEST_CASE("a weight autocast copies for the products first in every step stays one tensor, a weight") {
    // W at 0, initialised before the steps. Per step: X copied in at 32768; kernel 20 casts W into
    // Wc at 16384 (source word kIn, result word kOut, both writable); A = X Wc; the weight gradient
    // G = A^T X at 8192; the update reads G and writes W. The cast's first use of W in each step is
    // a read of what the update left, not a new tensor.
    enum Slot : uint32_t { kIn, kOut };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(32768, 4096);
        struct_kernel(p, {{0, kIn}, {16384, kOut}}, 20);                        // Wc = cast(W)
        p.gemm(32768, 16384, 24576);                                            // A = X Wc
        p.gemm(24576, 32768, 8192);                                             // G = A^T X
        size_t last = p.kernel({{8192, Access::Read}, {0, Access::Write}}, 3);  // the update
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    CHECK_EQ(pieces_in_steps(r, 0), 1u);  // one tensor across the steps (one per step without)
    CHECK_EQ(pieces(r, 0, "weights"), 1u);
    CHECK_GE(pieces(r, 8192, "gradients"), 3u);
    CHECK_EQ(pieces(r, 16384, "weights"), 0u);  // the copy is made anew each step
}

TEST_CASE("a value forward hands to the next operation in a pool is an activation; backward's temporary stays") {
    // Per step: X at 32768 (copied in), A = X W at 24576; kernel 20 writes B at 40960 from A (a
    // normalization's output); kernel 21 reads B and writes C at 45056 (a ReLU), and nothing uses B
    // again. Backward: G = C^T X at 8192; kernel 22 fills T at 53248 from A, kernel 23 reads T right
    // after and writes D at 57344, which kernel 24 reads with A: T is backward's two-kernel temporary.
    enum Slot : uint32_t { kIn20, kOut20, kIn21, kOut21, kIn22, kOut22, kIn23, kOut23 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(32768, 4096);
        p.gemm(32768, 0, 24576);                                  // A = X W
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);  // B
        struct_kernel(p, {{40960, kIn21}, {45056, kOut21}}, 21);  // C = relu(B)
        p.gemm(45056, 32768, 8192);                               // G = C^T X
        struct_kernel(p, {{24576, kIn22}, {53248, kOut22}}, 22);  // T
        struct_kernel(p, {{53248, kIn23}, {57344, kOut23}}, 23);  // D
        p.kernel({{57344, Access::Read}, {24576, Access::Read}, {28672, Access::Write}}, 24);
        size_t last = p.kernel({{8192, Access::Read}, {0, Access::Write}}, 3);  // the update
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    CHECK_GE(pieces(r, 8192, "gradients"), 3u);
    CHECK_EQ(pieces(r, 40960, "workspace"), 0u);  // B: workspace in every step without the rule
    CHECK_GE(pieces(r, 40960, "activations"), 3u);
    CHECK_GE(pieces(r, 53248, "workspace"), 3u);  // T
}

TEST_CASE("forward reaches the product that first reads the last weight, whatever a stray gradient write says") {
    // Per step, as a checkpointed block's first forward whose bias add looks like a gradient write:
    // kernel 27 writes S at 12288 first thing (the update reads it: a "gradient"); A = X W at 24576;
    // kernel 20 writes B at 40960 from A, kernel 21 reads B and writes C at 45056; L = C W2 at 61440
    // (the last weight's first product); backward's kernels 30 and 31 (the latter reading A) write the
    // weight gradients at 8192 and 20480 (no product call writes one); the update reads them and S,
    // and writes W and W2.
    enum Slot : uint32_t { kIn20, kOut20, kIn21, kOut21 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);     // initialise W
    p.kernel({{4096, Access::Write}}, 9);  // initialise W2
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(32768, 4096);
        p.kernel({{12288, Access::Write}}, 27);                   // S
        p.gemm(32768, 0, 24576);                                  // A = X W
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);  // B
        struct_kernel(p, {{40960, kIn21}, {45056, kOut21}}, 21);  // C = relu(B)
        p.gemm(45056, 4096, 61440);                               // L = C W2
        p.kernel({{61440, Access::Read}, {45056, Access::Read}, {8192, Access::Write}}, 30);
        p.kernel({{61440, Access::Read}, {24576, Access::Read}, {20480, Access::Write}}, 31);
        size_t last = p.kernel({{8192, Access::Read},
                                {20480, Access::Read},
                                {12288, Access::Read},
                                {0, Access::Write},
                                {4096, Access::Write}},
                               3);  // the update
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    REQUIRE_GE(pieces(r, 12288, "gradients"), 3u);  // the stray write the forward end must not stop at
    CHECK_EQ(pieces(r, 40960, "workspace"), 0u);    // B: workspace in every step without the floor
    CHECK_GE(pieces(r, 40960, "activations"), 3u);
}

TEST_CASE(
    "under autocast forward reaches the product reading a weight's copy, whatever the update's stale words touch") {
    // Per step, as the real cnn_bf16 (H200, foreach SGD, cuDNN's kernels plain): kernel 20 casts W
    // at 0 into Wc at 16384 (source word kIn, result word kOut, both writable); kernel 23 (a
    // convolution whose call shows no operands) reads X and Wc and writes A at 24576; kernel 21
    // writes B at 40960 from A, kernel 22 reads B and writes C at 45056 and nothing uses B again;
    // kernel 25 casts W2 at 4096 into W2c at 12288; L = C W2c at 61440 (the only product call: it
    // reads the copy, never W2). Backward's kernels 30 and 31 write the weight gradients G2 at 20480
    // and G at 8192 (no product call writes one); the update reads them and writes W and W2, and its
    // by-value metadata still holds Wc's address: Wc looks like a gradient the update reads, and the
    // cast's write of it like the step's first gradient write. Forward runs up to the product that
    // reads W2's copy.
    enum Slot : uint32_t { kIn, kOut, kIn21, kOut21, kIn22, kOut22, kIn25, kOut25 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);     // initialise W
    p.kernel({{4096, Access::Write}}, 9);  // initialise W2
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(32768, 4096);
        struct_kernel(p, {{0, kIn}, {16384, kOut}}, 20);                                       // Wc = cast(W)
        p.kernel({{32768, Access::Read}, {16384, Access::Read}, {24576, Access::Write}}, 23);  // A = conv(X, Wc)
        struct_kernel(p, {{24576, kIn21}, {40960, kOut21}}, 21);                               // B
        struct_kernel(p, {{40960, kIn22}, {45056, kOut22}}, 22);                               // C = relu(B)
        struct_kernel(p, {{4096, kIn25}, {12288, kOut25}}, 25);                                // W2c = cast(W2)
        p.gemm(45056, 12288, 61440);                                                           // L = C W2c
        p.kernel({{61440, Access::Read}, {24576, Access::Read}, {20480, Access::Write}}, 30);  // G2
        p.kernel({{61440, Access::Read}, {32768, Access::Read}, {8192, Access::Write}}, 31);   // G
        size_t last = p.kernel({{8192, Access::Read},
                                {20480, Access::Read},
                                {16384, Access::Read},
                                {0, Access::Write},
                                {4096, Access::Write}},
                               3);  // the update
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    CHECK_EQ(pieces(r, 0, "weights"), 1u);
    CHECK_EQ(pieces(r, 4096, "weights"), 1u);
    CHECK_GE(pieces(r, 8192, "gradients"), 3u);
    CHECK_EQ(pieces(r, 40960, "workspace"), 0u);  // B: workspace in every step without the copies' floor
    CHECK_GE(pieces(r, 40960, "activations"), 3u);
}
