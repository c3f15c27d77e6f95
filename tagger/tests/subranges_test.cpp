// Sub-ranges of pooled segments on small made-up models whose tensors are known.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

TEST_CASE("tensors at two offsets: exact size from a set, the other runs to the segment end") {
    Pool p(1 << 20);
    p.set(0, 1024);
    p.kernel({{0, Access::Read}, {4096, Access::Write}});
    p.kernel({{4096, Access::Read}});
    SubRangeSet set = derive_subranges(p.model, {});
    REQUIRE_EQ(set.ranges.size(), 2u);
    CHECK_EQ(at(set, 0).at(0).bytes, 1024);
    CHECK(at(set, 0).at(0).exact);
    CHECK_EQ(at(set, 4096).at(0).bytes, (1 << 20) - 4096);
    CHECK(std::all_of(set.owner.begin(), set.owner.end(), [](int32_t o) { return o != kNone; }));
}

TEST_CASE("an address written first in a later step is a new tensor; read first, the same one") {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}, {8192, Access::Write}}, 7);  // setup: initialises both
    for (int s = 0; s < 3; ++s) {
        size_t first = p.kernel({{0, Access::Read}, {8192, Access::Write}, {65536, Access::Write}}, 1);
        size_t last = p.kernel({{8192, Access::Read}, {65536, Access::Read}}, 2);
        p.step(first, last + 1);
    }
    IterationSet its = steps_of(p.model);
    REQUIRE_EQ(its.iterations.size(), 3u);
    SubRangeSet set = derive_subranges(p.model, its);
    CHECK_EQ(at(set, 0).size(), 1u);      // only ever read after setup: carried over
    CHECK_EQ(at(set, 8192).size(), 4u);   // setup, then written first in every step
    CHECK_EQ(at(set, 65536).size(), 3u);  // one per step
    // A tensor ends where the next one in use at the same time starts.
    CHECK_EQ(at(set, 0).at(0).bytes, 8192);
}

// Gradient accumulation in a caching pool: two micro-batches per step, each a batch copied in and the
// same forward and backward kernels. The activations a micro-batch makes and reads are released at
// its end, and the next micro-batch's are placed on the same blocks; a gradient accumulated over the
// micro-batches (written in each, read by nothing but the update) and a weight stay whole.
TEST_CASE("a tensor made and read in one micro-batch, written first in the next, is a new one") {
    constexpr uint64_t kInput = 0, kAct = 65536, kAct2 = 131072, kGrad = 262144, kWeight = 327680;
    Pool p(1 << 20);
    p.copy_in(kWeight, 1024);  // set-up: the weight
    std::vector<size_t> second_batches;
    for (int s = 0; s < 3; ++s) {
        size_t first = 0;
        for (int micro = 0; micro < 2; ++micro) {
            size_t copy = p.copy_in(kInput, 4096);
            (micro == 0 ? first : second_batches.emplace_back()) = copy;
            p.kernel({{kInput, Access::Read}, {kWeight, Access::Read}, {kAct, Access::Write}}, 1);
            p.kernel({{kAct, Access::Read}, {kAct2, Access::Write}}, 2);
            p.kernel({{kAct2, Access::Read}, {kGrad, Access::Write}}, 3);  // accumulates into the gradient
            p.kernel({{kAct2, Access::Read}}, 4);
            p.kernel({{kAct, Access::Read}}, 5);
        }
        size_t update = p.kernel({{kGrad, Access::Read}, {kWeight, Access::Write}}, 9);
        p.step(first, update + 1);
    }
    IterationSet its = steps_of(p.model);
    REQUIRE_EQ(its.iterations.size(), 3u);
    // The first step's batch arrives before the run's first kernel: its micro-batches count too.
    CHECK_EQ(micro_batch_starts(p.model, its), second_batches);
    SubRangeSet set = derive_subranges(p.model, its);
    CHECK_EQ(at(set, kAct).size(), 6u);  // one per micro-batch
    CHECK_EQ(at(set, kAct2).size(), 6u);
    CHECK_EQ(at(set, kGrad).size(), 3u);    // accumulated: one per step
    CHECK_EQ(at(set, kWeight).size(), 1u);  // read first in every micro-batch
    const std::vector<SubRange> activations = at(set, kAct);
    CHECK_EQ(activations[1].first_work, second_batches[0] + 1);
    CHECK_LT(activations[0].last_work, second_batches[0]);
}

// PyTorch's elementwise kernels take their pointers in a by-value struct: none is a pointer to const.
// A backward product consumed in its micro-batch through such a word (one that never starts a value,
// output_slots.h) is read all the same, and the next micro-batch writing the address through an
// output word makes a new tensor; a gradient a set zeroed, accumulated into through such a word and
// added into in place in the next micro-batch (one pointer in two words) stays one.
TEST_CASE("a product read through a kernel's input word in one micro-batch is a new tensor in the next") {
    constexpr uint64_t kInput = 0, kProduct = 65536, kOut = 131072, kGrad = 262144;
    constexpr uint32_t kOutWord = 0, kInWord = 1, kAccumulateWord = 2;
    Pool p(1 << 20);
    p.model.kernel_slots = 3;
    auto words = [&](size_t work, std::vector<std::pair<uint64_t, uint32_t>> slots) {
        for (PointerUse& u : p.model.pointer_uses)
            for (const auto& [offset, slot] : slots)
                if (u.work == work && u.offset == offset) u.slot = slot;
    };
    for (int s = 0; s < 3; ++s) {
        size_t first = 0;
        for (int micro = 0; micro < 2; ++micro) {
            size_t copy = p.copy_in(kInput, 4096);
            if (micro == 0) first = copy;
            if (micro == 0) p.set(kGrad, 4096);
            words(p.kernel({{kInput, Access::Read}, {kProduct, Access::Unknown}}, 1), {{kProduct, kOutWord}});
            words(p.kernel({{kProduct, Access::Unknown}, {kOut, Access::Unknown}}, 2),
                  {{kProduct, kInWord}, {kOut, kOutWord}});
            p.kernel({{kOut, Access::Read}}, 3);
            if (micro == 0)
                words(p.kernel({{kOut, Access::Read}, {kGrad, Access::Unknown}}, 4), {{kGrad, kAccumulateWord}});
            else
                words(p.kernel({{kOut, Access::Read}, {kGrad, Access::Write}}, 4), {{kGrad, kSeveralSlots}});
            p.kernel({{kOut, Access::Read}}, 5);
        }
        size_t update = p.kernel({{kGrad, Access::Read}}, 9);
        p.step(first, update + 1);
    }
    IterationSet its = steps_of(p.model);
    REQUIRE_EQ(its.iterations.size(), 3u);
    REQUIRE_EQ(micro_batch_starts(p.model, its).size(), 3u);
    SubRangeSet set = derive_subranges(p.model, its);
    CHECK_EQ(at(set, kProduct).size(), 6u);  // one per micro-batch
    CHECK_EQ(at(set, kGrad).size(), 3u);     // accumulated: one per step
}

TEST_CASE("without micro-batches, or in a buffer used only from its start, nothing is cut at a batch copy") {
    // Two batches copied into one step, followed by different kernels: not micro-batches.
    Pool p(1 << 20);
    size_t first = p.copy_in(0, 4096);
    p.kernel({{0, Access::Read}, {65536, Access::Write}}, 1);
    p.kernel({{65536, Access::Read}}, 2);
    p.copy_in(8192, 4096);
    for (int32_t f = 3; f < 8; ++f) p.kernel({{8192, Access::Read}, {65536, Access::Write}}, f);
    p.step(first, p.model.work.size());
    size_t again = p.copy_in(0, 4096);
    p.kernel({{0, Access::Read}, {65536, Access::Write}}, 1);
    p.kernel({{65536, Access::Read}}, 2);
    p.copy_in(8192, 4096);
    for (int32_t f = 3; f < 8; ++f) p.kernel({{8192, Access::Read}, {65536, Access::Write}}, f);
    p.step(again, p.model.work.size());
    IterationSet its = steps_of(p.model);
    REQUIRE_EQ(its.iterations.size(), 2u);
    CHECK(micro_batch_starts(p.model, its).empty());
    CHECK_EQ(at(derive_subranges(p.model, its), 65536).size(), 2u);  // one per step
}

TEST_CASE("pointers inside a tensor of known size while it is in use belong to it") {
    Pool p(2 << 20);
    p.copy_in(0, 16384);  // a sequence of 4 time steps of 4096 bytes
    for (uint64_t t = 0; t < 4; ++t) p.kernel({{t * 4096, Access::Read, 4096}, {32768 + t * 512, Access::Write, 512}});
    p.kernel({{0, Access::Read, 4096}});  // the first step again (backward through time)
    p.set(8192, 1024);                    // after the last use: the space holds a new tensor
    SubRangeSet set = derive_subranges(p.model, {});
    REQUIRE_EQ(at(set, 0).size(), 1u);
    CHECK_EQ(at(set, 0).at(0).bytes, 16384);
    CHECK(at(set, 4096).empty());
    CHECK(at(set, 12288).empty());
    REQUIRE_EQ(at(set, 8192).size(), 1u);
    CHECK_EQ(at(set, 8192).at(0).first_work, 6u);
    // The outputs have lower bounds only: each is at least 512 bytes, and the last runs on to its
    // bound.
    CHECK_EQ(at(set, 32768).at(0).bytes, 512);
    CHECK_EQ(at(set, 32768 + 3 * 512).at(0).bytes, 512);
}

TEST_CASE("a tensor at an inner address used only before and after the outer tensor's life is not part of it") {
    Pool p(2 << 20);
    p.kernel({{4096, Access::Write}});     // an activation at 4096 ...
    p.kernel({{4096, Access::Read}});      // ... read ...
    p.copy_in(0, 16384);                   // a tensor of 16384 bytes at 0 meanwhile ...
    p.kernel({{0, Access::Read, 16384}});  // ... used once
    p.kernel({{4096, Access::Read}});      // ... and 4096 read again after it
    SubRangeSet set = derive_subranges(p.model, {});
    REQUIRE_EQ(at(set, 0).size(), 1u);
    CHECK_EQ(at(set, 0).at(0).first_work, 2u);  // not stretched over the other tensor's life
    CHECK_EQ(at(set, 0).at(0).last_work, 3u);
    REQUIRE_EQ(at(set, 4096).size(), 1u);  // a tensor of its own
    CHECK_EQ(at(set, 4096).at(0).first_work, 0u);
    CHECK_EQ(at(set, 4096).at(0).last_work, 4u);
}

TEST_CASE("a library call overwriting an address after other work used it starts a new tensor") {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write, 4096}, {8192, Access::Write}});  // an activation gradient ...
    p.gemm(0, 65536, 131072);                                     // ... read by a GEMM
    p.gemm(196608, 262144, 0);                                    // a weight gradient written into its space
    p.kernel({{8192, Access::Read}});  // a tensor without size evidence (it would run to the next start) ...
    p.gemm(196608, 262144, 8192);      // ... is not cut
    p.set(4096, 512);                  // zeroed for a GEMM to accumulate into
    p.gemm(196608, 262144, 4096);      // (beta is not recorded: it may accumulate)
    p.gemm(196608, 262144, 4096);      // and again, one call per micro-batch
    SubRangeSet set = derive_subranges(p.model, {});
    CHECK_EQ(at(set, 0).size(), 2u);
    CHECK_EQ(at(set, 8192).size(), 1u);
    CHECK_EQ(at(set, 4096).size(), 1u);
}

TEST_CASE("a buffer only ever used from its start is refilled, not handed out anew") {
    // An im2col buffer: filled by a kernel, read by a GEMM as B, then written by a GEMM as C (its
    // other operands in other allocations) and read by col2im. Within a segment that also holds a
    // tensor at another start, the same uses make the GEMM's output a tensor of its own.
    for (bool other_start : {false, true}) {
        Pool p(1 << 20);
        auto call_on = [&](size_t work, bool output) {
            LibraryCall call;
            CallOperands operands;
            (output ? call.c : call.b) = 0;
            (output ? operands.c_address : operands.b_address) = kBase;
            p.call_on(work, call, operands);
        };
        p.kernel({{0, Access::Write, 4096}});
        call_on(p.kernel({{0, Access::Read, 4096}}, 100), false);
        call_on(p.kernel({{0, Access::Write, 4096}}, 100), true);
        p.kernel({{0, Access::Read, 4096}});
        if (other_start) p.kernel({{8192, Access::Write}});
        SubRangeSet set = derive_subranges(p.model, {});
        CHECK_EQ(at(set, 0).size(), other_start ? 2u : 1u);
    }
}

TEST_CASE("a library call's workspace holds nothing carried in from other work") {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}});
    p.kernel({{0, Access::Read}});     // an activation, freed
    p.gemm(65536, 131072, 196608, 0);  // its space handed to a GEMM as workspace
    p.gemm(65536, 131072, 262144, 0);  // the next call's workspace: scratch again
    SubRangeSet set = derive_subranges(p.model, {});
    CHECK_EQ(at(set, 0).size(), 3u);
}

TEST_CASE("a library call's workspace holds nothing carried in where every tensor starts at the segment's start") {
    // A caching allocator's segment whose every tensor happened to begin at its start: a tensor of at
    // least 4096 bytes written there (a lower bound, as a GEMM's output gives), a kernel reads it,
    // then a call takes the space as its workspace (change 48).
    Pool p(1 << 20);
    p.kernel({{0, Access::Write, 4096}});
    p.kernel({{0, Access::Read}});
    const size_t call = p.kernel({{0, Access::Write, 8192}}, 100);
    LibraryCall scratch;
    scratch.workspace = 0;
    p.call_on(call, scratch, {.workspace_address = kBase});
    SubRangeSet set = derive_subranges(p.model, {});
    // Without the rule the workspace joined the tensor before it: one piece at 0.
    const std::vector<SubRange> pieces = at(set, 0);
    REQUIRE_EQ(pieces.size(), 2u);
    CHECK_LT(pieces.front().last_work, call);
    CHECK_EQ(pieces.back().first_work, call);
}

TEST_CASE("a call's workspace inside a tensor's lower bound is a tensor of its own, and it caps that bound") {
    Pool p(4 << 20);
    p.gemm(1 << 20, (1 << 20) + 65536, 0, {}, 393216);  // writes a tensor at 0: at least 393216 bytes
    p.kernel({{0, Access::Read}});                      // read by the next operation
    // A GEMM reads the tensor again while its workspace lies past 131072: the allocator had freed
    // the space after 131072 and given it to the call as scratch.
    p.gemm(0, (2 << 20), (2 << 20) + 65536, 131072);
    SubRangeSet set = derive_subranges(p.model, {});
    REQUIRE_EQ(at(set, 131072).size(), 1u);  // not absorbed into the tensor at 0
    REQUIRE_EQ(at(set, 0).size(), 1u);
    CHECK_EQ(at(set, 0).at(0).bytes, 131072);  // capped where the workspace begins
}

// A tensor at 0 of at least 524288 bytes owns a pointer at 262144 used in its life and again later;
// another tensor starts at 131072 in that longer life. Where that one is in use only while the
// first one uses nothing at or above 131072, the bytes are shared in turn and the first tensor
// keeps its pointer's bytes; where it is in use when the pointer is, it caps the first one there.
void tensor_owning_a_pointer_past_a_neighbour(Pool& p, bool neighbour_in_use_meanwhile) {
    p.gemm(2 << 20, (2 << 20) + 65536, 0, {}, 524288);                   // work 0: writes at least 524288 bytes at 0
    p.kernel({{0, Access::Read}, {262144, Access::Read}});               // work 1: the tensor and a pointer inside it
    p.kernel({{131072, Access::Write}});                                 // work 2: another tensor at 131072 ...
    p.kernel({{131072, Access::Read}});                                  // work 3: ... read
    p.kernel({{262144, Access::Read}});                                  // work 4: the pointer again
    if (neighbour_in_use_meanwhile) p.kernel({{131072, Access::Read}});  // work 5
}

TEST_CASE("a tensor is not capped below a pointer it owns by a neighbour in use only at other times") {
    for (bool meanwhile : {false, true}) {
        CAPTURE(meanwhile);
        Pool p(4 << 20);
        tensor_owning_a_pointer_past_a_neighbour(p, meanwhile);
        SubRangeSet set = derive_subranges(p.model, {});
        REQUIRE_EQ(at(set, 0).size(), 1u);
        REQUIRE_EQ(at(set, 131072).size(), 1u);  // the neighbour stays a tensor of its own
        CHECK(at(set, 262144).empty());          // the pointer belongs to the tensor at 0
        CHECK_EQ(at(set, 0).at(0).last_work, 4u);
        CHECK_EQ(at(set, 0).at(0).reach_bytes, 262145);
        CHECK_EQ(at(set, 0).at(0).bytes, meanwhile ? 131072 : 524288);
        // The floor holds through a new extent pass (as after pool_tagging's merges), not past it.
        assign_extents(p.model, set);
        CHECK_EQ(at(set, 0).at(0).bytes, meanwhile ? 131072 : 524288);
    }
}

// A caching allocator frees a per-call workspace right after the call and hands its space to the next
// request, which it makes before that tensor's first use (docs/tagging.md, change 25): held until the
// next use of its bytes, the workspace covered the start of the tensor placed there.
TEST_CASE("a call's workspace ends at its call; a step's other tensors are held until their space is used again") {
    constexpr uint64_t kInput = 0, kWeight = 8192, kAct = 16384, kWorkspace = 65536, kOther = 196608;
    Pool p(1 << 20);
    p.kernel({{kWeight, Access::Write}}, 9);  // initialise the weight
    std::vector<size_t> workspace_calls, reuses, activations;
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(kInput, 4096);
        activations.push_back(p.kernel({{kInput, Access::Read}, {kAct, Access::Write}}, 1));
        workspace_calls.push_back(p.gemm(kAct, kWeight, kOther, kWorkspace, 4096));
        p.kernel({{kOther, Access::Read}}, 2);
        p.kernel({{kOther, Access::Read}}, 3);
        // The workspace's space, freed after its call, now holds an activation gradient.
        reuses.push_back(p.kernel({{kOther, Access::Read}, {kWorkspace, Access::Write}}, 4));
        p.kernel({{kWorkspace, Access::Read}, {kAct, Access::Read}}, 5);
        size_t last = p.kernel({{kWeight, Access::Write}}, 6);  // the update
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    size_t workspaces = 0;
    for (const SubRangeTag& t : r.subranges) {
        if (t.offset != kWorkspace || t.tag.rule != "library-workspace") continue;
        auto call = std::find_if(workspace_calls.begin(), workspace_calls.end(),
                                 [&](size_t w) { return p.model.work[w].launch_ns == t.begin_ns; });
        REQUIRE(call != workspace_calls.end());
        // Ends when its call is done, not when the next tensor uses the space.
        CHECK_EQ(t.end_ns, p.model.work[*call].end_ns);
        CHECK_LT(t.end_ns, p.model.work[reuses[size_t(call - workspace_calls.begin())]].launch_ns);
        ++workspaces;
    }
    CHECK_EQ(workspaces, 4u);
    // Any other tensor made in a step is held until its space is used again or the step ends: the
    // activation at kAct, last read with the workspace's next tensor, lasts to its step's end.
    for (const SubRangeTag& t : r.subranges) {
        if (t.offset != kAct) continue;
        auto step = std::find_if(its.iterations.begin(), its.iterations.end(), [&](const Iteration& it) {
            return it.begin_ns <= t.begin_ns && t.begin_ns < it.end_ns;
        });
        REQUIRE(step != its.iterations.end());
        CHECK_EQ(t.end_ns, step->end_ns);
    }
}

TEST_CASE("a tensor held until its refill takes in only the pointers that read it") {
    // A batch copied in at 0 each step, read image by image (slices of it), and a gradient zeroed by
    // a set at 65536 each step, written and read by the update; after the update, the next step's
    // activations are placed inside the gradient's freed space before the next zeroing.
    Pool p(1 << 20);
    for (int s = 0; s < 3; ++s) {
        size_t first = p.copy_in(0, 16384);
        p.kernel({{0, Access::Read, 4096}, {131072, Access::Write}});
        p.kernel({{8192, Access::Read, 4096}, {131072, Access::Read}});  // a later image: a slice
        p.kernel({{65536 + 4096, Access::Write}});                       // an activation in the freed space
        p.kernel({{65536 + 4096, Access::Read}});
        p.set(65536, 16384);                                                       // the gradient, zeroed ...
        p.kernel({{65536, Access::Write}});                                        // ... and written in backward
        size_t last = p.kernel({{65536, Access::Read}, {262144, Access::Write}});  // read by the update
        p.step(first, last + 1);
    }
    p.copy_in(0, 16384);  // the next batch
    IterationSet its = steps_of(p.model);
    REQUIRE_EQ(its.iterations.size(), 3u);
    SubRangeSet set = derive_subranges(p.model, its);
    CHECK(at(set, 8192).empty());                // a slice of the batch, held until its refill
    CHECK_EQ(at(set, 65536 + 4096).size(), 3u);  // the activations are tensors of their own
    for (const SubRange& gradient : at(set, 65536)) CHECK_EQ(gradient.last_work - gradient.first_work, 2u);
}

TEST_CASE("a parameter every step first converts for its GEMMs is one tensor across the steps: a weight") {
    // An FP32 weight at 0 that each step's first kernel casts into a fresh BF16 copy (through a
    // writable pointer) which the forward GEMM reads; a bias at 8192 read by forward; backward
    // writes both gradients; the update rewrites weight and bias from them.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write, 4096}, {8192, Access::Write, 256}}, 9);  // initialised before the steps
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(131072, 8192);                                          // the batch
        p.kernel({{0, Access::Write}, {65536 + 8192 * uint64_t(s), Access::Write}}, 1);  // the cast
        p.gemm(65536 + 8192 * uint64_t(s), 131072, 196608, {}, 8192);                    // forward
        p.kernel({{196608, Access::Write}, {8192, Access::Read}}, 2);                    // bias add
        p.gemm(196608, 131072, 262144, {}, 4096);                                        // weight gradient
        p.kernel({{270336, Access::Write}, {196608, Access::Read}}, 3);                  // bias gradient
        size_t last =
            p.kernel({{0, Access::Write}, {8192, Access::Write}, {262144, Access::Read}, {270336, Access::Read}},
                     4);  // the update
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    size_t in_steps = 0;
    for (const SubRangeTag& t : r.subranges) {
        if (t.offset != 0 || t.end_ns < its.iterations[1].begin_ns) continue;
        ++in_steps;
        CHECK_EQ(t.tag.category, "weights");
    }
    CHECK_EQ(in_steps, 1u);  // one tensor through the steps, not one per step
}

TEST_CASE("bad input: no argument info, one offset only, sizes past the end, stray uses") {
    SUBCASE("a pooled segment no work points into has no sub-ranges, and tagging still works") {
        Pool p(1 << 20);
        p.model.work.push_back({});
        SubRangeSet set = derive_subranges(p.model, {});
        CHECK(set.ranges.empty());
        IterationSet its;
        TagResult r = tag_model(p.model, "", its);
        CHECK_EQ(r.tags.size(), 1u);
        CHECK(r.subranges.empty());
    }
    SUBCASE("a model that is not pooled gets none, whatever its uses") {
        Pool p(1 << 20);
        p.kernel({{0, Access::Write}, {512, Access::Read}});
        p.model.pooled = false;
        CHECK(derive_subranges(p.model, {}).ranges.empty());
    }
    SUBCASE("touched at one offset only, with no smaller size: the allocation is one tensor") {
        Pool p(1 << 20);
        p.kernel({{0, Access::Write}});
        p.kernel({{0, Access::Read}});
        CHECK(derive_subranges(p.model, {}).ranges.empty());
    }
    SUBCASE("touched at one offset with a smaller exact size: a tensor inside a segment") {
        Pool p(1 << 20);
        p.set(0, 4096);
        p.kernel({{0, Access::Read}});
        SubRangeSet set = derive_subranges(p.model, {});
        REQUIRE_EQ(set.ranges.size(), 1u);
        CHECK_EQ(set.ranges[0].bytes, 4096);
    }
    SUBCASE("a size running past the segment end is cut at the end") {
        Pool p(8192);
        p.copy_in(4096, 1 << 20);
        p.kernel({{0, Access::Write}, {4096, Access::Read, 1 << 20}});
        SubRangeSet set = derive_subranges(p.model, {});
        REQUIRE_EQ(at(set, 4096).size(), 1u);
        CHECK_EQ(at(set, 4096).at(0).bytes, 4096);
        CHECK_EQ(at(set, 0).at(0).bytes, 4096);
    }
    SUBCASE("uses outside the segment, of unknown allocations or work are dropped") {
        Pool p(4096);
        p.kernel({{0, Access::Write}, {512, Access::Write}});
        p.model.pointer_uses.push_back({0, 0, 1 << 20, 0, false, Access::Read});
        p.model.pointer_uses.push_back({0, 5, 0, 0, false, Access::Read});
        p.model.pointer_uses.push_back({99, 0, 0, 0, false, Access::Read});
        SubRangeSet set = derive_subranges(p.model, {});
        CHECK_EQ(set.ranges.size(), 2u);
        CHECK_EQ(set.owner.size(), p.model.pointer_uses.size());
        CHECK_EQ(set.owner[2], kNone);
        std::vector<int32_t> index;
        TraceModel v = with_subranges(p.model, set, index);
        CHECK_EQ(v.allocations.size(), 3u);
    }
}

TEST_CASE("tagging a pooled run: weights, optimizer state and per-step data inside one segment") {
    // Segment layout: W at 0 (GEMM operand), momentum M at 4096, gradient G at 8192, and per step
    // an input X at 16384 (copied in) and an activation A at 20480 reused every step.
    Pool p(1 << 20);
    LibraryCall call;
    call.a = call.b = call.c = 0;
    const CallOperands forward{.a_address = kBase + 16384, .b_address = kBase, .c_address = kBase + 20480};
    const CallOperands backward{.a_address = kBase + 20480, .b_address = kBase + 16384, .c_address = kBase + 8192};
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        size_t gemm = p.kernel({{16384, Access::Read, 4096}, {0, Access::Read, 4096}, {20480, Access::Write, 4096}}, 1);
        // One library call per GEMM, as a trace has (their operands are remapped per sub-range).
        p.call_on(gemm, call, forward);
        p.kernel({{20480, Access::Read}, {20480 + 0, Access::Write}}, 2);
        size_t back =
            p.kernel({{20480, Access::Read, 4096}, {16384, Access::Read, 4096}, {8192, Access::Write, 4096}}, 3);
        p.call_on(back, call, backward);
        size_t last = p.kernel({{0, Access::Write}, {4096, Access::Write}, {8192, Access::Read}},
                               4);  // optimizer
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    auto category_at = [&](uint64_t offset) {
        std::vector<std::string> seen;
        for (const SubRangeTag& t : r.subranges)
            if (t.offset == offset && std::find(seen.begin(), seen.end(), t.tag.category) == seen.end())
                seen.push_back(t.tag.category);
        return seen;
    };
    CHECK_EQ(category_at(0), std::vector<std::string>{"weights"});
    CHECK_EQ(category_at(4096), std::vector<std::string>{"optimizer_state"});
    CHECK_EQ(category_at(8192), std::vector<std::string>{"gradients"});
    CHECK_EQ(category_at(16384), std::vector<std::string>{"input"});
    CHECK_EQ(category_at(20480), std::vector<std::string>{"activations"});
    // The momentum, cut once per step by its in-place update, is one tensor again.
    CHECK_EQ(
        std::count_if(r.subranges.begin(), r.subranges.end(), [](const SubRangeTag& t) { return t.offset == 4096; }),
        1);
    CHECK_EQ(r.segments_with_subranges, 1u);
    CHECK(!r.segment_level);
    CHECK_EQ(r.tags[0].rule, "pooled-segment-dominant");
}

TEST_CASE(
    "an update's per-step temporaries at one address, whose space other tensors use between steps, "
    "are no optimizer state") {
    // W at 0 (updated), momentum M at 4096 (only the update uses it, kept), and per step: an
    // activation of at least 8192 bytes at 24576 in forward, and the update's temporary T at
    // 28672, inside the activation's space, made and consumed by the update.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);
    for (int s = 0; s < 4; ++s) {
        size_t first = p.kernel({{0, Access::Read}, {24576, Access::Write, 8192}}, 1);  // a GEMM's C
        p.kernel({{24576, Access::Read}, {8192, Access::Write}}, 2);                    // backward: the gradient G
        // The update: M from G, then T from M, then W from T.
        p.kernel({{8192, Access::Read}, {4096, Access::Write}, {0, Access::Write}}, 3);
        p.kernel({{4096, Access::Read}, {28672, Access::Write}}, 4);
        size_t last = p.kernel({{0, Access::Write}, {28672, Access::Read}}, 5);
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    auto pieces = [&](uint64_t offset, const char* category) {
        return std::count_if(r.subranges.begin(), r.subranges.end(),
                             [&](const SubRangeTag& t) { return t.offset == offset && t.tag.category == category; });
    };
    CHECK_EQ(pieces(4096, "optimizer_state"), 1);   // carried: one tensor
    CHECK_EQ(pieces(28672, "optimizer_state"), 0);  // never state, whatever else it is
    CHECK_GE(
        std::count_if(r.subranges.begin(), r.subranges.end(), [](const SubRangeTag& t) { return t.offset == 28672; }),
        3);  // one per step (the first step may differ)
}

TEST_CASE("splitting a sub-range at a work item: sizes from each part's own uses, later indices shift") {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write, 4096, true}});                  // work 0: a set-like write of 4096 bytes
    p.kernel({{0, Access::Read}, {1024, Access::Read}});         // work 1: the tensor and a pointer inside it
    p.kernel({{0, Access::Write}});                              // work 2: the next tensor there
    p.kernel({{0, Access::Read, 512}, {65536, Access::Write}});  // work 3
    SubRangeSet set = derive_subranges(p.model, {});
    REQUIRE_EQ(set.ranges.size(), 2u);  // one tensor at 0 (the interior pointer absorbed), one at 65536
    REQUIRE_EQ(set.ranges[0].offset, 0u);
    CHECK(!split_subrange(p.model, set, 0, 0));   // nothing before work 0: unchanged
    CHECK(!split_subrange(p.model, set, 0, 99));  // nothing after: unchanged
    REQUIRE_EQ(set.ranges.size(), 2u);
    REQUIRE(split_subrange(p.model, set, 0, 2));
    REQUIRE_EQ(set.ranges.size(), 3u);
    CHECK_EQ(set.ranges[0].first_work, 0u);
    CHECK_EQ(set.ranges[0].last_work, 1u);
    CHECK_EQ(set.ranges[0].known_bytes, 4096);
    CHECK(set.ranges[0].exact);
    CHECK_EQ(set.ranges[0].reach_bytes, 1025);  // each part's floor from its own pointers
    CHECK_EQ(set.ranges[1].reach_bytes, 0);
    CHECK_EQ(set.ranges[1].offset, 0u);
    CHECK_EQ(set.ranges[1].first_work, 2u);
    CHECK_EQ(set.ranges[1].last_work, 3u);
    CHECK_EQ(set.ranges[1].known_bytes, 512);  // a lower bound only
    CHECK(!set.ranges[1].exact);
    CHECK_EQ(set.ranges[2].offset, 65536u);
    // Owners follow: the uses of works 2 and 3 at 0 belong to the new range, 65536's range moved up.
    for (size_t u = 0; u < p.model.pointer_uses.size(); ++u) {
        const PointerUse& use = p.model.pointer_uses[u];
        int32_t expected = use.offset == 65536 ? 2 : use.work >= 2 ? 1 : 0;
        CHECK_EQ(set.owner[u], expected);
    }
}

TEST_CASE("a tensor a product call consumed in backward and the update's temporary after it are two") {
    // W at 0 (a GEMM operand, updated), the momentum M at 4096, the input X at 16384 (copied in),
    // per step an activation A at 24576 (forward's GEMM output, backward's GEMM input) and the
    // gradient G at 8192 (backward's GEMM output, read by the update). The caching allocator hands
    // A's space to the update's temporary T once A is freed: the update writes T there and reads it
    // back.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);                      // forward: A = X W
        p.kernel({{32768, Access::Write, 4096}}, 2);  // the loss gradient dY
        p.gemm(24576, 32768, 8192);                   // backward: G = A^T dY (consumes A)
        // The update: M and W from G, T from M, W from T.
        p.kernel({{8192, Access::Read}, {4096, Access::Write}, {0, Access::Write}}, 3);
        p.kernel({{4096, Access::Read}, {24576, Access::Write}}, 4);
        size_t last = p.kernel({{24576, Access::Read}, {0, Access::Write}}, 5);
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    auto pieces = [&](uint64_t offset, const char* category) {
        return std::count_if(r.subranges.begin(), r.subranges.end(),
                             [&](const SubRangeTag& t) { return t.offset == offset && t.tag.category == category; });
    };
    CHECK_GE(pieces(24576, "activations"), 3);  // A in every step (the first may differ)
    CHECK_EQ(pieces(24576, "gradients"), 0);    // neither A nor T is a gradient
    CHECK_GE(pieces(8192, "gradients"), 3);     // G, which no product call reads, stays one
    CHECK_EQ(pieces(0, "weights"), 1);
    CHECK_EQ(pieces(4096, "optimizer_state"), 1);
}

TEST_CASE("a copy reading from a tensor bounds its size from below; a copy or set writing it sizes it") {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write, 8192}});                               // at least 8192 bytes (a GEMM's shape)
    p.work(WorkItem::Kind::CopyDtoH, {{0, Access::Read, 1024, true}});  // the first 1024 copied out
    p.kernel({{0, Access::Read}});
    p.set(262144, 2048);  // a set writing a tensor whole gives its size
    SubRangeSet set = derive_subranges(p.model, {});
    REQUIRE_EQ(at(set, 0).size(), 1u);  // one tensor: the read of fewer bytes is no other size
    CHECK_EQ(at(set, 0).at(0).bytes, 8192);
    CHECK(!at(set, 0).at(0).exact);
    REQUIRE_EQ(at(set, 262144).size(), 1u);
    CHECK_EQ(at(set, 262144).at(0).bytes, 2048);
    CHECK(at(set, 262144).at(0).exact);
}

TEST_CASE("step-made tensors the update reuses the space of: zeroed then read by a GEMM, or split by the update") {
    // W at 0 (updated), the momentum M at 4096, the input X at 16384, per step: the gradient G at
    // 8192 (backward's GEMM output, read by the update); at 24576 a buffer zeroed by a set and read
    // by backward's GEMM (a gradient assembled from slices), whose space the update's temporary T
    // takes afterwards; at 40960 an activation gradient D of 8192 bytes that a GEMM writes and one
    // kernel reads, whose space the update's temporaries U1 and U2 (4096 bytes each) take.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 32768);  // forward
        p.set(24576, 4096);       // backward: zeroed ...
        p.kernel({{32768, Access::Read}, {36864, Access::Write}}, 2);
        p.gemm(24576, 32768, 8192);         // ... read by the weight-gradient GEMM: G
        p.gemm(32768, 0, 40960, {}, 8192);  // D
        p.kernel({{40960, Access::Read}, {49152, Access::Write}}, 6);
        // The update: M and W from G; T, U1 and U2 from M; W from them.
        p.kernel({{8192, Access::Read}, {4096, Access::Write}, {0, Access::Write}}, 3);
        p.kernel({{4096, Access::Read}, {24576, Access::Write}, {40960, Access::Write}, {45056, Access::Write}}, 4);
        size_t last =
            p.kernel({{24576, Access::Read}, {40960, Access::Read}, {45056, Access::Read}, {0, Access::Write}}, 5);
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    auto pieces = [&](uint64_t offset, const char* category) {
        return std::count_if(r.subranges.begin(), r.subranges.end(),
                             [&](const SubRangeTag& t) { return t.offset == offset && t.tag.category == category; });
    };
    CHECK_EQ(pieces(24576, "weights"), 0);    // made in the step: no weight
    CHECK_EQ(pieces(40960, "gradients"), 0);  // D is no gradient, nor are U1 and U2
    CHECK_GE(pieces(8192, "gradients"), 3);   // G stays one
    CHECK_EQ(pieces(0, "weights"), 1);
    CHECK_EQ(pieces(4096, "optimizer_state"), 1);
}

TEST_CASE("data read in the step, then overwritten by a weight-gradient GEMM at its address, is no gradient") {
    // W at 0 (updated), the momentum M at 4096, the input X at 16384, per step: an activation A at
    // 24576 that kernels write and read (no size evidence: PyTorch's elementwise kernels) in forward
    // and read again in backward; once A is freed, the caching allocator gives its space to the
    // weight gradient G that backward's GEMM writes (4096 bytes), which the update reads.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 32768);                                        // forward
        p.kernel({{32768, Access::Write}, {24576, Access::Write}}, 2);  // A from the GEMM's output
        p.kernel({{24576, Access::Read}, {40960, Access::Write}}, 6);   // read-only: A used
        p.kernel({{24576, Access::Read}, {49152, Access::Write}}, 7);   // backward reads A again
        p.gemm(16384, 49152, 24576, {}, 4096);                          // G over A's space
        p.kernel({{24576, Access::Read}, {4096, Access::Write}, {0, Access::Write}}, 3);
        size_t last = p.kernel({{4096, Access::Read}, {0, Access::Write}}, 5);
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    auto pieces = [&](uint64_t offset, const char* category) {
        return std::count_if(r.subranges.begin(), r.subranges.end(),
                             [&](const SubRangeTag& t) { return t.offset == offset && t.tag.category == category; });
    };
    CHECK_GE(pieces(24576, "activations"), 3);  // A, apart from G
    CHECK_GE(pieces(24576, "gradients"), 3);    // G
    CHECK_EQ(pieces(0, "weights"), 1);
}

TEST_CASE("a weight gradient only its GEMM and the update use stays one, whatever the update points inside") {
    // W at 0 (updated), the momentum M at 4096, the input X at 16384, per step the gradient G at
    // 8192 (8192 bytes, backward's GEMM output), read by the update, whose argument struct also
    // carries a stale pointer inside G (an address of an earlier launch, in an unused slot).
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 32768);               // forward
        p.gemm(16384, 32768, 8192, {}, 8192);  // backward: G
        p.kernel({{8192, Access::Write}, {12288, Access::Write}, {4096, Access::Write}, {0, Access::Write}}, 3);
        size_t last = p.kernel({{4096, Access::Read}, {0, Access::Write}}, 5);
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    auto pieces = [&](uint64_t offset, const char* category) {
        return std::count_if(r.subranges.begin(), r.subranges.end(),
                             [&](const SubRangeTag& t) { return t.offset == offset && t.tag.category == category; });
    };
    CHECK_GE(pieces(8192, "gradients"), 3);
    CHECK_EQ(pieces(8192, "activations"), 0);
}

TEST_CASE("copies of fewer bytes into a tensor a set has just zeroed fill slices of it") {
    // A tensor of 12288 bytes assembled from three 4096-byte slices (the backward of a split): a set
    // zeroes it, device copies fill each slice, a GEMM reads it whole. Then a copy of 4096 bytes
    // into an address last used by other work starts a tensor of its own, as before.
    Pool p(1 << 20);
    p.set(0, 12288);
    p.work(WorkItem::Kind::CopyDtoD, {{0, Access::Write, 4096, true}, {65536, Access::Read, 4096, true}});
    p.work(WorkItem::Kind::CopyDtoD, {{4096, Access::Write, 4096, true}, {69632, Access::Read, 4096, true}});
    p.work(WorkItem::Kind::CopyDtoD, {{8192, Access::Write, 4096, true}, {73728, Access::Read, 4096, true}});
    p.gemm(0, 131072, 196608);
    p.work(WorkItem::Kind::CopyDtoD, {{0, Access::Write, 4096, true}, {65536, Access::Read, 4096, true}});
    SubRangeSet set = derive_subranges(p.model, {});
    REQUIRE_EQ(at(set, 0).size(), 2u);
    CHECK_EQ(at(set, 0).at(0).bytes, 12288);  // the zeroed tensor and its slices
    CHECK(at(set, 0).at(0).exact);
    CHECK(at(set, 4096).empty());            // the other slices' copies are inside it
    CHECK_EQ(at(set, 0).at(1).bytes, 4096);  // the last copy: a tensor of its own
}

TEST_CASE("a tensor one kernel makes and the next consumes is an operation's output when its input died first") {
    // Per step: A = X W at 24576; kernel 30 makes I at 32768 from A; kernel 31 makes O at 36864
    // from I, I's last use; kernel 32 reads O right after and makes R at 45056, which a GEMM reads.
    // (Struct-argument kernels: every pointer writable.)
    // O outlives its maker's input: handed from one operation to the next, an activation, not a
    // temporary of kernel 31's operation (which would die before that operation's inputs).
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);  // initialise W
    for (int s = 0; s < 4; ++s) {
        size_t first = p.copy_in(16384, 4096);
        p.gemm(16384, 0, 24576);
        p.kernel({{24576, Access::Write}, {32768, Access::Write}}, 30);
        p.kernel({{32768, Access::Write}, {36864, Access::Write}}, 31);
        p.kernel({{36864, Access::Write}, {45056, Access::Write}}, 32);
        p.gemm(45056, 16384, 8192);
        size_t last = p.kernel({{8192, Access::Read}, {4096, Access::Write}, {0, Access::Write}}, 3);  // the update
        p.step(first, last + 1);
    }
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    auto pieces = [&](uint64_t offset, const char* category) {
        return std::count_if(r.subranges.begin(), r.subranges.end(),
                             [&](const SubRangeTag& t) { return t.offset == offset && t.tag.category == category; });
    };
    CHECK_EQ(pieces(36864, "workspace"), 0);
    CHECK_GE(pieces(36864, "activations"), 3);
}

// A tensor zeroed whole, a slice of it filled by a copy while it is in use, then read whole for the
// last time. Past that, the allocator may hand its bytes on: a kernel writing at the slice's address
// then makes another tensor (the update's temporary placed where an activation gradient of backward
// was), which must not stretch the zeroed tensor's life to the update. A read there instead may be
// of the zeroed tensor's own value, and stays with it.
TEST_CASE("an inner pointer's uses absorbed into a tensor stop at its first write after the tensor's life") {
    constexpr uint64_t kSlice = 131072;
    Pool p(2 << 20);
    const size_t zero = p.set(0, 393216);
    p.work(WorkItem::Kind::CopyDtoD, {{kSlice, Access::Write, 131072, true}});
    const size_t last = p.kernel({{0, Access::Read}});
    const size_t later = p.kernel({{kSlice, Access::Write}});
    p.kernel({{kSlice, Access::Read}});
    SubRangeSet set = derive_subranges(p.model, {});
    REQUIRE_EQ(at(set, 0).size(), 1u);
    CHECK_EQ(at(set, 0).at(0).first_work, zero);
    CHECK_EQ(at(set, 0).at(0).last_work, last);
    REQUIRE_EQ(at(set, kSlice).size(), 1u);
    CHECK_EQ(at(set, kSlice).at(0).first_work, later);
    CHECK_EQ(at(set, kSlice).at(0).last_work, later + 1);

    Pool q(2 << 20);
    q.set(0, 393216);
    q.work(WorkItem::Kind::CopyDtoD, {{kSlice, Access::Write, 131072, true}});
    q.kernel({{0, Access::Read}});
    const size_t late_read = q.kernel({{kSlice, Access::Read}});
    SubRangeSet held = derive_subranges(q.model, {});
    REQUIRE_EQ(at(held, 0).size(), 1u);
    CHECK_EQ(at(held, 0).at(0).last_work, late_read);
    CHECK(at(held, kSlice).empty());
}

// An arena zeroed whole at once (llm.c's gradients) is the allocation itself: the update going tensor
// by tensor through it after the zeroed start's last use writes parts of it, not new tensors. The
// arena stays one tensor, tagged as a whole (no sub-ranges).
TEST_CASE("an arena written whole keeps its inner pointers' later writes") {
    constexpr int64_t kArena = 393216;
    constexpr uint64_t kSlice = 131072;
    Pool p(kArena);
    p.set(0, kArena);
    p.kernel({{kSlice, Access::Write}}, 2);  // backward writes a gradient inside
    p.kernel({{0, Access::Write}}, 3);       // the update of the first tensor: the start's last use
    p.kernel({{kSlice, Access::Write}}, 3);  // and of the one inside
    SubRangeSet set = derive_subranges(p.model, {});
    CHECK(set.ranges.empty());
}
