// Words that echo an operand's address (tagger/echoed_words.h) on made-up pooled runs: a stale word
// beside a kernel's output word no longer makes the write look in place (docs/tagging.md, change 46).
#include <doctest/doctest.h>

#include "echoed_words.h"
#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

// The last pointer use (work item `work`'s) held in `slots` as well: one use in several words, as
// load_model makes it when a launch passes one pointer in several words of its parameters.
void also_in_words(Pool& p, size_t work, const std::vector<uint32_t>& slots) {
    PointerUse& use = p.model.pointer_uses.back();
    REQUIRE_EQ(use.work, work);
    use.several_at = uint32_t(p.model.several_word_slots.size());
    p.model.several_word_slots.push_back(uint32_t(slots.size() + 1));
    p.model.several_word_slots.push_back(use.slot);
    p.model.several_word_slots.insert(p.model.several_word_slots.end(), slots.begin(), slots.end());
    use.slot = kSeveralSlots;
    for (uint32_t slot : slots) p.model.kernel_slots = std::max(p.model.kernel_slots, slot + 1);
}

enum Slot : uint32_t { kOut20, kIn20, kOut21, kIn22, kOut22, kStale21 };

// Per step: X copied in at 16384, A = X W at 24576; at 40960 D = f(A) (kernel 20's output word),
// which a weight-gradient GEMM reads; then an operation's temporary T that kernel 21 fills through
// its output word and kernel 22 reads right after. Kernel 21's struct also holds T's address in a
// word it leaves unfilled (kStale21: a pointer there in the steps' launches, not in its first one),
// so its launch passes T in two words, as an operation in place does.
TraceModel temporary_beside_stale_word() {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);                        // initialise W
    struct_kernel(p, {{24576, kIn20}, {61440, kOut20}}, 20);  // kernel 20 fills fresh space: its output word
    struct_kernel(p, {{53248, kOut21}}, 21);                  // so does kernel 21, its stale word empty
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);                                                // A = X W
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);                // D
        p.gemm(40960, 16384, 8192);                                             // G = D^T X: reads D
        also_in_words(p, struct_kernel(p, {{40960, kOut21}}, 21), {kStale21});  // T
        struct_kernel(p, {{40960, kIn22}, {45056, kOut22}}, 22);
        p.gemm(45056, 16384, 12288);
        size_t last = p.kernel({{8192, Access::Read}, {12288, Access::Read}, {4096, Access::Write}, {0, Access::Write}},
                               3);  // the update
        p.step(first, last + 1);
    }
    return std::move(p.model);
}

}  // namespace

TEST_CASE("a word holding a pointer in only some launches is dropped beside one that holds it in every launch") {
    TraceModel m = temporary_beside_stale_word();
    drop_echoed_words(m);
    size_t several = 0, output_word = 0;
    for (const PointerUse& u : m.pointer_uses) {
        several += u.slot == kSeveralSlots ? 1 : 0;
        output_word += u.offset == 40960 && u.slot == kOut21 ? 1 : 0;
    }
    CHECK_EQ(several, 0u);
    CHECK_EQ(output_word, 4u);  // kernel 21's write of T, every step, through its output word alone
}

TEST_CASE("an operation in place keeps its several words: each holds a pointer in every launch") {
    Pool p(1 << 20);
    for (int k = 0; k < 3; ++k) also_in_words(p, struct_kernel(p, {{4096u * k, kOut21}}, 21), {kIn22});
    drop_echoed_words(p.model);
    for (const PointerUse& u : p.model.pointer_uses) CHECK_EQ(u.slot, kSeveralSlots);
}

TEST_CASE("an operation's temporary written beside a stale word of its own address is a tensor of its own") {
    // Without the pass, T's write seems in place (its output word and the stale one): no cut there,
    // and T is one piece with D, an activation. With it, T is cut apart and is workspace.
    TraceModel before = temporary_beside_stale_word();
    const TagResult joined = tag_four_steps(before);
    CHECK_EQ(pieces(joined, 40960, "workspace"), 0u);
    TraceModel m = temporary_beside_stale_word();
    drop_echoed_words(m);
    const TagResult r = tag_four_steps(m);
    CHECK_GE(pieces(r, 40960, "workspace"), 3u);    // T in every step (the first may differ)
    CHECK_GE(pieces(r, 40960, "activations"), 3u);  // D
    CHECK_GE(pieces(r, 8192, "gradients"), 3u);
    CHECK_EQ(pieces(r, 0, "weights"), 1u);
}
