// Cuts of a pooled gradient's piece at a kernel's output word (tagger/pool_tagging.cpp,
// split_rewritten_activations, docs/tagging.md change 40) on a made-up run: backward's data that
// the caching allocator placed at a weight gradient's address earlier in the step, read and
// dropped before the gradient was written there, is an activation, not part of the gradient.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

// Pieces at `offset` tagged `category` that begin at a launch of kernel function `function`.
size_t pieces_begun_by(const Pool& p, const TagResult& r, uint64_t offset, const char* category, int32_t function) {
    size_t count = 0;
    for (const SubRangeTag& t : r.subranges) {
        if (t.offset != offset || t.tag.category != category) continue;
        for (const WorkItem& w : p.model.work)
            if (w.function == function && w.launch_ns == t.begin_ns) ++count;
    }
    return count;
}

}  // namespace

TEST_CASE("an activation gradient read and dropped where a weight gradient is written next is no gradient") {
    // Per step: X copied in at 16384, H = X W at 24576, Y = f(H) at 28672; in backward a GEMM
    // writes dH = dY W^T at 40960, kernel 40 reads it through an input word into 45056 (ReLU's
    // backward) and nothing reads dH again; then kernel 41 writes W's gradient G at 40960 through
    // its output word (as an attention backward's kernel writes its gradients into the space the
    // allocator freed), and the update reads G and rewrites W. Every pointer of kernels 40 and 41
    // is writable; only their output words tell where G begins.
    enum Slot : uint32_t { kIn40, kOut40, kIn41a, kIn41b, kOut41, kIn8, kOut8 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);                                  // initialise W
    struct_kernel(p, {{0, kIn40}, {65536, kOut40}}, 40);                // kernel 40 writes fresh space
    struct_kernel(p, {{0, kIn41a}, {0, kIn41b}, {69632, kOut41}}, 41);  // kernel 41 too: output words
    struct_kernel(p, {{0, kIn8}, {73728, kOut8}}, 8);
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);                                                    // H = X W
        struct_kernel(p, {{24576, kIn8}, {28672, kOut8}}, 8);                       // Y = f(H)
        p.gemm(28672, 0, 40960);                                                    // dH, from Y and W
        struct_kernel(p, {{40960, kIn40}, {45056, kOut40}}, 40);                    // reads dH: its last use
        struct_kernel(p, {{45056, kIn41a}, {16384, kIn41b}, {40960, kOut41}}, 41);  // G, where dH was
        p.gemm(28672, 16384, 49152);  // another weight gradient: backward goes on past G
        size_t last = p.kernel({{40960, Access::Read}, {49152, Access::Read}, {0, Access::Write}}, 3);  // the update
        p.step(first, last + 1);
    }
    const TagResult r = tag_four_steps(p.model);
    CHECK_EQ(pieces(r, 0, "weights"), 1u);
    CHECK_GE(pieces_begun_by(p, r, 40960, "gradients", 41), 3u);  // G begins at kernel 41
    CHECK_GE(pieces(r, 40960, "activations"), 3u);                // dH apart, in every step (the first may differ)
}
