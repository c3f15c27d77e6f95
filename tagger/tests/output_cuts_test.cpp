// Cuts of pooled activations at a kernel's output word (tagger/output_slots.h) on made-up runs:
// where the cut sets apart an operation's temporary it stays (docs/tagging.md, change 32); two
// activations apart stay apart since the cut is made as the sub-ranges are derived (change 45).
#include <doctest/doctest.h>

#include "output_slots.h"
#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

size_t pieces(const TagResult& r, uint64_t offset) {
    return size_t(std::count_if(r.subranges.begin(), r.subranges.end(),
                                [&](const SubRangeTag& t) { return t.offset == offset; }));
}

}  // namespace

TEST_CASE("an output word's slot: the first use of some address in the run; a word read first is none") {
    enum Slot : uint32_t { kIn, kOut };
    Pool p(1 << 20);
    p.copy_in(0, 4096);                             // a table filled from the host
    struct_kernel(p, {{0, kIn}, {8192, kOut}}, 7);  // a gather: reads the table, writes fresh space
    struct_kernel(p, {{0, kIn}, {8192, kOut}}, 7);  // again: nothing new
    const std::vector<bool> outputs = output_slots(p.model);
    REQUIRE_EQ(outputs.size(), 2u);
    CHECK_FALSE(outputs[kIn]);
    CHECK(outputs[kOut]);
}

TEST_CASE("an operation's temporary written where an activation's value was read is a tensor of its own") {
    // Per step: X at 16384 (copied in), A = X W at 24576, then at 40960 three tensors in turn: D =
    // f(A) (kernel 20's output word), which a weight-gradient GEMM reads; an operation's temporary T
    // that kernel 21 fills and kernel 22 reads right after; and V = f(A) again, read by two kernels
    // apart. Nothing but the output words tells where T begins: every pointer is writable.
    enum Slot : uint32_t { kOut20, kIn20, kOut21, kIn22, kOut22, kOut25 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);        // initialise W
    struct_kernel(p, {{53248, kOut21}}, 21);  // kernel 21 fills space nothing used yet: its output word
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);                                  // A = X W
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);  // D
        p.gemm(40960, 16384, 8192);                               // G = D^T X: reads D
        struct_kernel(p, {{40960, kOut21}}, 21);                  // T
        struct_kernel(p, {{40960, kIn22}, {45056, kOut22}}, 22);
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);  // V
        struct_kernel(p, {{45056, kIn22}, {49152, kOut25}}, 25);
        p.kernel({{40960, Access::Read}, {28672, Access::Write}}, 24);
        size_t last = p.kernel({{8192, Access::Read}, {4096, Access::Write}, {0, Access::Write}}, 3);  // the update
        p.step(first, last + 1);
    }
    const TagResult r = tag_four_steps(p.model);
    CHECK_GE(pieces(r, 40960, "workspace"), 3u);    // T in every step (the first may differ)
    CHECK_GE(pieces(r, 40960, "activations"), 6u);  // D and V, apart: T lies between them
    CHECK_GE(pieces(r, 8192, "gradients"), 3u);
    CHECK_EQ(pieces(r, 0, "weights"), 1u);
}

TEST_CASE("a tensor a device copy fills a slice of between its fill and its read is no temporary") {
    // As above, but between kernel 21's fill of T and kernel 22's read a device copy writes a slice
    // of T (a split's backward: zeros, the gradient copied into its part, then summed): three
    // operations use T, which carries data between them.
    enum Slot : uint32_t { kOut20, kIn20, kOut21, kIn22, kOut22, kOut25 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);
    struct_kernel(p, {{53248, kOut21}}, 21);
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);
        p.gemm(40960, 16384, 8192);
        struct_kernel(p, {{40960, kOut21}}, 21);  // T
        p.work(WorkItem::Kind::CopyDtoD, {{24576, Access::Read, 2048, true}, {43008, Access::Write, 2048, true}});
        struct_kernel(p, {{40960, kIn22}, {45056, kOut22}}, 22);
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);
        struct_kernel(p, {{45056, kIn22}, {49152, kOut25}}, 25);
        p.kernel({{40960, Access::Read}, {28672, Access::Write}}, 24);
        size_t last = p.kernel({{8192, Access::Read}, {4096, Access::Write}, {0, Access::Write}}, 3);
        p.step(first, last + 1);
    }
    const TagResult r = tag_four_steps(p.model);
    CHECK_EQ(pieces(r, 40960, "workspace"), 0u);  // T in every step without the copy counted
    CHECK_GE(pieces(r, 40960, "activations"), 9u);
}

TEST_CASE("two activations an output word's write sets apart are two pieces, both activations") {
    // Per step: A = X W at 24576; kernel 20 writes D at 40960 from A through its output word; a GEMM
    // reads D; kernel 20 writes V at 40960 again (a new value where D's was read), and two kernels
    // apart read V. D and V are two tensors, both activations. Change 32 cut them apart after the
    // first tags and joined them again (apart they change no category); since change 45 the cut is
    // made where the sub-ranges are derived, before pointers inside are taken for slices of a piece
    // joined over both lives, and the two stay apart.
    enum Slot : uint32_t { kIn20, kOut20, kIn22, kOut22, kIn23, kOut23 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);                        // initialise W
    struct_kernel(p, {{24576, kIn20}, {53248, kOut20}}, 20);  // kernel 20 writes fresh space: its output word
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);                                  // A = X W
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);  // D
        p.gemm(40960, 16384, 8192);                               // G = D^T X: reads D
        struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20);  // V
        struct_kernel(p, {{40960, kIn22}, {45056, kOut22}}, 22);
        p.kernel({{32768, Access::Write}}, 26);
        struct_kernel(p, {{40960, kIn23}, {49152, kOut23}}, 23);
        p.gemm(49152, 16384, 12288);
        size_t last = p.kernel({{8192, Access::Read}, {12288, Access::Read}, {4096, Access::Write}, {0, Access::Write}},
                               3);  // the update
        p.step(first, last + 1);
    }
    const TagResult r = tag_four_steps(p.model);
    CHECK_EQ(pieces(r, 40960, "workspace"), 0u);
    CHECK_EQ(pieces(r, 40960), 8u);  // two a step: D and V
    CHECK_EQ(pieces(r, 40960, "activations"), 8u);
}

TEST_CASE("a gradient a cast writes where a product's input was read begins at the cast, not at the update") {
    // Per step, as under autocast: H = X W1 at 40960, read by a GEMM in backward (dW2 = dY^T H);
    // then, H freed, a cast (kernel 30) writes W1's FP32 gradient at 40960 from its BF16 one through
    // its output word, while backward's own tensor at 45056 is written and read inside H's old
    // extent; clipping (kernel 33) reads both gradients in one launch, then the update. The gradient
    // is the cast's value from the cast on; before, the piece was cut at the update, and its part
    // from the cast on, read by clipping but not by the update, was an activation.
    enum Slot : uint32_t { kIn30, kOut30, kOut31, kIn32, kOut32, kIn33a, kIn33b, kOut33 };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}, {4096, Access::Write}}, 9);  // initialise W1 and W2
    struct_kernel(p, {{57344, kIn30}, {98304, kOut30}}, 30);   // the cast writes fresh space: its output word
    struct_kernel(p, {{102400, kOut31}}, 31);
    struct_kernel(p, {{102400, kIn32}, {106496, kOut32}}, 32);
    struct_kernel(p, {{98304, kIn33a}, {98304, kIn33b}, {110592, kOut33}}, 33);
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 40960, {}, 8192);                             // H = X W1
        p.gemm(40960, 4096, 24576);                                    // Y = H W2
        p.kernel({{24576, Access::Read}, {28672, Access::Write}}, 8);  // dY
        p.gemm(28672, 40960, 32768);                                   // dW2 (BF16) = dY^T H: reads H
        struct_kernel(p, {{32768, kIn30}, {49152, kOut30}}, 30);       // W2's FP32 gradient
        p.gemm(28672, 4096, 36864);                                    // dH
        p.gemm(36864, 16384, 57344);                                   // dW1 (BF16)
        struct_kernel(p, {{57344, kIn30}, {40960, kOut30}}, 30);       // W1's FP32 gradient, where H was
        struct_kernel(p, {{45056, kOut31}}, 31);                       // backward's own tensor inside
        struct_kernel(p, {{45056, kIn32}, {61440, kOut32}}, 32);
        struct_kernel(p, {{49152, kIn33a}, {40960, kIn33b}, {53248, kOut33}}, 33);  // clipping's norm
        size_t last = p.kernel({{49152, Access::Read},
                                {40960, Access::Read},
                                {53248, Access::Read},
                                {0, Access::Write},
                                {4096, Access::Write}},
                               3);  // the update
        p.step(first, last + 1);
    }
    const TagResult r = tag_four_steps(p.model);
    CHECK_GE(pieces(r, 49152, "gradients"), 3u);
    size_t cast_gradients = 0;  // gradients at 40960 that begin at the cast, short of backward's tensor
    for (const SubRangeTag& t : r.subranges) {
        if (t.offset != 40960 || t.tag.category != "gradients" || t.bytes > 4096) continue;
        for (const WorkItem& w : p.model.work)
            if (w.function == 30 && w.launch_ns == t.begin_ns) ++cast_gradients;
    }
    CHECK_GE(cast_gradients, 3u);
    CHECK_GE(pieces(r, 40960, "activations"), 3u);  // H
    CHECK_GE(pieces(r, 45056), 3u);  // backward's tensor, a piece of its own, not a slice of the gradient
    CHECK_EQ(pieces(r, 45056, "gradients"), 0u);
    CHECK_EQ(pieces(r, 0, "weights"), 1u);
}

namespace {

// Work item `work` also holds `offset` in the words `slots`: one pointer use, as load_model makes it.
void several_words(Pool& p, size_t work, uint64_t offset, const std::vector<uint32_t>& slots) {
    PointerUse use{uint32_t(work), 0, offset, 0, false, Access::Write};
    use.slot = kSeveralSlots;
    use.several_at = uint32_t(p.model.several_word_slots.size());
    p.model.several_word_slots.push_back(uint32_t(slots.size()));
    p.model.several_word_slots.insert(p.model.several_word_slots.end(), slots.begin(), slots.end());
    p.model.pointer_uses.push_back(use);
    for (uint32_t slot : slots) p.model.kernel_slots = std::max(p.model.kernel_slots, slot + 1);
}

// One step after another: the batch X copied in at 16384, A = X W (a convolution's product), then
// an elementwise add (kernel 20) writing B at 40960 from A through its output word while its struct
// holds X's address again in the words `x_words` (one pointer in several words: one use, as
// load_model makes it), a GEMM reading X (the weight's gradient G = B^T X) and the update.
// With `moment`: after G, an Adam moment kernel (30) updates M at 65536 from G and also keeps X's
// address in two words (the foreach metadata's stale slots); the update reads G and M.
TagResult batch_in_struct_words(const std::vector<uint32_t>& x_words, bool moment = false) {
    enum Slot : uint32_t { kIn20, kOut20, kStaleA, kStaleB, kM30, kG30, kStale30a, kStale30b };
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);                        // initialise W
    struct_kernel(p, {{24576, kIn20}, {53248, kOut20}}, 20);  // kernel 20 writes fresh space: its output word
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);  // A = X W
        several_words(p, struct_kernel(p, {{24576, kIn20}, {40960, kOut20}}, 20), 16384, x_words);
        p.gemm(40960, 16384, 8192);  // G = B^T X
        if (moment) {
            if (s == 0) p.set(65536, 4096);
            several_words(p, struct_kernel(p, {{65536, kM30}, {8192, kG30}}, 30), 16384, {kStale30a, kStale30b});
        }
        size_t last = p.kernel({{8192, Access::Read}, {65536, Access::Read}, {4096, Access::Write}, {0, Access::Write}},
                               3);  // the update
        p.step(first, last + 1);
    }
    return tag_four_steps(p.model);
}

}  // namespace

TEST_CASE("the batch whose address an elementwise kernel's struct keeps in words that never start a value is input") {
    // Words 2 and 3 of kernel 20 never start a value (the batch was copied in before any of its
    // launches): stale copies of the address, not a write, so X is still copied in each step and
    // only read. Before, any writable word made X "written by a kernel", and X was `activations`.
    TagResult stale = batch_in_struct_words({2, 3});
    CHECK_GE(pieces(stale, 16384, "input"), 3u);
    CHECK_EQ(pieces(stale, 16384, "activations"), 0u);
    // Among the words one that starts values (kernel 20's output word, 1): an in-place write of X.
    TagResult in_place = batch_in_struct_words({1, 2});
    CHECK_EQ(pieces(in_place, 16384, "input"), 0u);
}

TEST_CASE("an Adam kernel that keeps the batch's address in stale words is still the update's") {
    // The batch's only kernel "writes" are stale words (kernel 20's and the moment kernel's), so it
    // holds no value backward computed on the device: it does not tie the moment kernel to backward,
    // and M, updated by the update alone, is optimizer state. Before, kernel 20's stale words made X
    // a value of the device's, read by backward's GEMM, and the update began at its last kernel.
    TagResult r = batch_in_struct_words({2, 3}, true);
    CHECK_GE(pieces(r, 16384, "input"), 3u);
    CHECK_GE(pieces(r, 65536, "optimizer_state"), 1u);
    CHECK_EQ(pieces(r, 65536, "gradients"), 0u);
    CHECK_EQ(pieces(r, 65536, "activations"), 0u);
}
