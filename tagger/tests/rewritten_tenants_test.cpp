// Change 45 (docs/tagging.md): where the sub-ranges are derived, a new tenant begins where a kernel
// writes a new value at an address right after other work read the one there; a pointer inside a
// piece is no slice of it once the next tenant holds its start; and change 13b's product read is
// seen through such cuts (tagger/rewritten_tenants.h).
#include <doctest/doctest.h>

#include "output_slots.h"
#include "rewritten_tenants.h"
#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

TEST_CASE("a kernel's output word writing where other work has just read the value begins a new tenant") {
    // Per step at 40960: kernel 20 writes D through its output word, a GEMM reads D, kernel 21 writes
    // T there through its output word and kernel 22 reads T through its input word. Every pointer is
    // writable; only the words tell that T is a new value where D's was consumed.
    enum Slot : uint32_t { kIn20, kOut20, kOut21, kIn22, kOut22 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);                        // initialise W
    struct_kernel(p, {{16384, kIn20}, {53248, kOut20}}, 20);  // fresh space: the output words
    struct_kernel(p, {{57344, kOut21}}, 21);
    for (int s = 0; s < 3; ++s) {
        size_t first = p.copy_in(16384, 4096);
        struct_kernel(p, {{16384, kIn20}, {40960, kOut20}}, 20);  // D
        p.gemm(40960, 0, 24576);                                  // reads D
        struct_kernel(p, {{40960, kOut21}}, 21);                  // T
        size_t last = struct_kernel(p, {{40960, kIn22}, {49152, kOut22}}, 22);
        p.step(first, last + 1);
    }
    IterationSet its = steps_of(p.model);
    REQUIRE_EQ(its.iterations.size(), 3u);
    const SubRangeSet set = derive_subranges(p.model, its);
    const std::vector<SubRange> pieces = at(set, 40960);
    REQUIRE_EQ(pieces.size(), 6u);  // D and T apart in every step (3 without the cut: one a step)
    // Each but the first begins at such a write (D of a later step where the step before read T, too).
    for (size_t k = 0; k < pieces.size(); ++k) CHECK_EQ(pieces[k].after_rewrite, k > 0);
}

TEST_CASE("a pointer inside a tensor is no slice of it once the next tenant holds the tensor's start") {
    // T (a GEMM's output, 8192 B) at 40960 with a slice at 45056 read while T lives; then a copy
    // fills 40960 anew (T freed, the next tenant at its start) and only after that is 45056 read
    // again. That late read is of what the allocator placed there, not T's: T must not reach it.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);
    size_t first = p.copy_in(16384, 4096);
    p.gemm(16384, 0, 40960, {}, 8192);                             // T
    p.kernel({{45056, Access::Read}, {24576, Access::Write}}, 2);  // a slice of T
    p.kernel({{40960, Access::Read}, {20480, Access::Write}}, 4);  // T's last use
    const size_t next = p.work(WorkItem::Kind::CopyDtoD, {{40960, Access::Write, 4096, true}});
    const size_t late = p.kernel({{45056, Access::Read}, {28672, Access::Write}}, 3);
    p.step(first, late + 1);
    const SubRangeSet set = derive_subranges(p.model, steps_of(p.model));
    const std::vector<SubRange> tenants = at(set, 40960);
    REQUIRE_EQ(tenants.size(), 2u);
    CHECK_LT(tenants[0].last_work, next);  // T ends before its start's next tenant (the late read without the rule)
    CHECK_EQ(tenants[1].first_work, next);
    REQUIRE_EQ(at(set, 45056).size(), 1u);  // the late read: a tensor of its own
    CHECK_EQ(at(set, 45056)[0].first_work, late);
}

TEST_CASE("backward's value at an address a product read in the step is cut from the update's stale use") {
    // Per step at 40960: kernel 20 writes A, a GEMM reads A as an input, kernel 21 writes B there
    // through its output word (a rewrite cut), a device copy reads B, and the update's struct later
    // holds 40960 in a word that never starts a value. A weight gradient is read by nothing but the
    // update; B was read by the copy and was backward's (or forward's) data: B is an activation,
    // cut from the update's use, as change 13b cut such a piece before the rewrite cut split it.
    enum Slot : uint32_t { kIn20, kOut20, kOut21, kInU };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    struct_kernel(p, {{16384, kIn20}, {53248, kOut20}}, 20);
    struct_kernel(p, {{57344, kOut21}}, 21);
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        struct_kernel(p, {{16384, kIn20}, {40960, kOut20}}, 20);  // A
        p.gemm(40960, 0, 24576);                                  // reads A
        p.gemm(24576, 16384, 8192);                               // the weight gradient
        struct_kernel(p, {{40960, kOut21}}, 21);                  // B
        p.work(WorkItem::Kind::CopyDtoD, {{40960, Access::Read, 4096, true}, {32768, Access::Write, 4096, true}});
        p.kernel({{32768, Access::Read}, {36864, Access::Write}}, 8);
        size_t last = p.kernel({{8192, Access::Read}, {0, Access::Write}}, 3);  // the update
        struct_kernel(p, {{40960, kInU}}, 4);                                   // its stale word
        p.model.work.back().touches.clear();
        p.step(first, last + 2);
    }
    const TagResult r = tag_four_steps(p.model);
    CHECK_EQ(pieces(r, 40960, "gradients"), 0u);
    CHECK_GE(pieces(r, 8192, "gradients"), 3u);
    CHECK_EQ(pieces(r, 0, "weights"), 1u);
}

TEST_CASE("a pointer to const in a word some launch pointed at fresh space is no rewrite") {
    // Kernel 5 reads through a pointer to const; its first launch reads space nothing used before
    // (the word is then taken for an output word). Later, at 40960, a GEMM reads the tensor P that
    // kernel 4 wrote, and kernel 5 reads P after it: a read, not a new tenant (an arena of
    // parameters read by every step's kernels, llm.c's, was cut at such reads).
    Pool p(1 << 20);
    size_t fresh = p.kernel({{65536, Access::Read}, {69632, Access::Write}}, 5);
    p.model.pointer_uses[p.model.pointer_uses.size() - 2].slot = 0;
    p.model.pointer_uses[p.model.pointer_uses.size() - 1].slot = 1;
    p.model.kernel_slots = 2;
    REQUIRE(output_slots(p.model)[0]);  // the const word, taken for an output word
    p.kernel({{40960, Access::Write}}, 4);
    p.gemm(40960, 0, 24576);
    size_t last = p.kernel({{40960, Access::Read}, {73728, Access::Write}}, 5);
    p.model.pointer_uses[p.model.pointer_uses.size() - 2].slot = 0;
    p.model.pointer_uses[p.model.pointer_uses.size() - 1].slot = 1;
    p.step(fresh, last + 1);
    const SubRangeSet set = derive_subranges(p.model, steps_of(p.model));
    CHECK_EQ(at(set, 40960).size(), 1u);
}

TEST_CASE("a rewritten tenant without size evidence at a segment's top is no larger than the one before") {
    // At 40960, the top start of a 1 MiB segment: a GEMM writes C (8192 B at least), kernel 22 reads
    // it through its input word, kernel 21 writes a new value there through its output word and
    // kernel 22 reads that. Nothing tells the new tenant's size and nothing starts above it: it takes
    // the tenant before's 8192 B, not the segment's free tail up to 1 MiB.
    enum Slot : uint32_t { kOut21, kIn22, kOut22 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);
    struct_kernel(p, {{16384, kOut21}}, 21);  // fresh space: kernel 21's output word
    struct_kernel(p, {{16384, kIn22}, {20480, kOut22}}, 22);
    size_t first = p.copy_in(24576, 4096);
    p.gemm(24576, 0, 40960, {}, 8192);
    struct_kernel(p, {{40960, kIn22}, {28672, kOut22}}, 22);
    struct_kernel(p, {{40960, kOut21}}, 21);
    size_t last = struct_kernel(p, {{40960, kIn22}, {32768, kOut22}}, 22);
    p.step(first, last + 1);
    const SubRangeSet set = derive_subranges(p.model, steps_of(p.model));
    const std::vector<SubRange> tenants = at(set, 40960);
    REQUIRE_EQ(tenants.size(), 2u);
    CHECK(tenants[1].after_rewrite);
    CHECK_EQ(tenants[1].bytes, 8192);
}

TEST_CASE("a rewritten tenant's start overwritten by a library call begins the call's tenant") {
    // At 40960: a GEMM writes C (8192 B at least), kernel 22 reads it, kernel 21 writes a new value T
    // there (a rewrite cut: T has no size evidence of its own), kernel 22 reads T, and then a GEMM
    // writes its product G over 40960, which kernel 22 reads. G is the call's tensor, as it was when
    // C and T were one piece with C's size: T's cut must not take that evidence away (a weight
    // gradient a GEMM writes in the space of a rewritten activation was tagged that activation).
    enum Slot : uint32_t { kOut21, kIn22, kOut22 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);
    struct_kernel(p, {{16384, kOut21}}, 21);  // fresh space: kernel 21's output word
    struct_kernel(p, {{16384, kIn22}, {20480, kOut22}}, 22);
    size_t first = p.copy_in(24576, 4096);
    p.gemm(24576, 0, 40960, {}, 8192);                        // C
    struct_kernel(p, {{40960, kIn22}, {28672, kOut22}}, 22);  // reads C
    const size_t t = struct_kernel(p, {{40960, kOut21}}, 21);
    struct_kernel(p, {{40960, kIn22}, {32768, kOut22}}, 22);  // reads T
    const size_t g = p.gemm(24576, 0, 40960);                 // G
    size_t last = struct_kernel(p, {{40960, kIn22}, {36864, kOut22}}, 22);
    p.step(first, last + 1);
    const SubRangeSet set = derive_subranges(p.model, steps_of(p.model));
    const std::vector<SubRange> tenants = at(set, 40960);
    REQUIRE_EQ(tenants.size(), 3u);  // C, T, G (T and G one piece without the cut)
    CHECK_EQ(tenants[1].first_work, t);
    CHECK_LT(tenants[1].last_work, g);
    CHECK_EQ(tenants[2].first_work, g);
}
