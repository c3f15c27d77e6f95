// A library call's read of a slice of a value a kernel has just made below it carries nothing in from
// the step before (tagger/slice_reads.h), and a tensor's slices are not taken from before its own
// first use (tagger/subranges.cpp, absorb_interior; docs/tagging.md, change 48).
#include <doctest/doctest.h>

#include "output_slots.h"
#include "slice_reads.h"
#include "subranges_test_support.h"

#include <algorithm>
#include <tuple>

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

enum Slot : uint32_t { kOut30, kOut31 };

constexpr uint64_t kPacked = 65536;           // the packed value's start (its first slice)
constexpr int64_t kSliceBytes = 4096;         // each slice, as the call records it
constexpr uint64_t kSecond = kPacked + 4096;  // its second slice
constexpr uint64_t kResult = 131072;          // the call's output
constexpr uint64_t kElsewhere = 196608;       // other work's tensors

struct Run {
    TraceModel model;
    size_t second_read = 0;  // index into model.pointer_uses: the call's read of kSecond in step 1
};

// An attention-like call reading two slices laid end to end, each with its recorded extent.
size_t sliced_call(Pool& p, uint64_t first, uint64_t second) {
    const size_t work = p.kernel(
        {{first, Access::Read, kSliceBytes, true}, {second, Access::Read, kSliceBytes, true}, {kResult, Access::Write}},
        100);
    LibraryCall call;
    call.a = call.b = call.c = 0;
    p.call_on(work, call, {.a_address = kBase + first, .b_address = kBase + second, .c_address = kBase + kResult});
    return work;
}

// Two steps. Step 0: kernel 31 writes a tensor at kSecond through its output word and another
// kernel reads it. Step 1: kernel 30 writes a new value at kPacked through its output word (a
// copy making a packed buffer contiguous: no size), and a call reads its two slices, kPacked and
// kSecond. `fresh`: whether kernel 30's write is there (without it, kPacked's last use was a read).
Run packed_run(bool fresh) {
    Pool p(1 << 20);
    struct_kernel(p, {{kElsewhere, kOut30}}, 30);  // kernel 30's word first points at fresh space
    const size_t begin0 = struct_kernel(p, {{kSecond, kOut31}}, 31);
    p.kernel({{kSecond, Access::Read}, {kElsewhere + 8192, Access::Write}}, 5);
    p.kernel({{kPacked, Access::Read}, {kElsewhere + 16384, Access::Write}}, 6);
    const size_t end0 = p.kernel({{kElsewhere, Access::Read}}, 7) + 1;
    const size_t begin1 = fresh ? struct_kernel(p, {{kPacked, kOut30}}, 30) : p.kernel({{kPacked, Access::Read}}, 8);
    Run run;
    sliced_call(p, kPacked, kSecond);
    run.second_read = p.model.pointer_uses.size() - 2;
    const size_t end1 = p.kernel({{kResult, Access::Read}, {kElsewhere + 8192, Access::Write}}, 7) + 1;
    p.step(begin0, end0);
    p.step(begin1, end1);
    run.model = std::move(p.model);
    return run;
}

}  // namespace

TEST_CASE("a slice of a value just made below it is no value carried in from the step before") {
    const Run run = packed_run(true);
    const IterationSet its = steps_of(run.model);
    REQUIRE_EQ(its.iterations.size(), 2u);
    const SubRangeSet set = derive_subranges(run.model, its);
    const std::vector<SubRange> second = at(set, kSecond);
    // Without the rule, the step-1 read of kSecond, its first use in the step, is taken for a value
    // carried over and joins step 0's tensor there: one piece living across both steps.
    REQUIRE_EQ(second.size(), 2u);
    const int32_t owner = set.owner[run.second_read];
    REQUIRE_GE(owner, 0);
    CHECK_EQ(set.ranges[size_t(owner)].first_work, run.model.pointer_uses[run.second_read].work);
}

TEST_CASE("without a new value written below it, a slice read first in a step is carried in as before") {
    const Run run = packed_run(false);
    const IterationSet its = steps_of(run.model);
    REQUIRE_EQ(its.iterations.size(), 2u);
    CHECK_EQ(at(derive_subranges(run.model, its), kSecond).size(), 1u);
    const std::vector<size_t> order = [&] {
        std::vector<size_t> all(run.model.pointer_uses.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        std::sort(all.begin(), all.end(), [&](size_t a, size_t b) {
            const PointerUse& x = run.model.pointer_uses[a];
            const PointerUse& y = run.model.pointer_uses[b];
            return std::tie(x.offset, x.work, a) < std::tie(y.offset, y.work, b);
        });
        return all;
    }();
    CHECK_FALSE(slices_of_new_values(run.model, order, output_slots(run.model))[run.second_read]);
}

TEST_CASE("a sized tensor takes no uses of an inner address from before its own first use") {
    // A tensor at kSecond lives and dies; then a GEMM writes 8192 bytes at kPacked (covering
    // kSecond) and a kernel reads kPacked and kSecond together.
    Pool p(1 << 20);
    const size_t early = p.kernel({{kSecond, Access::Write}}, 3);
    p.kernel({{kSecond, Access::Read}, {kElsewhere, Access::Write}}, 4);
    const size_t made = p.gemm(kElsewhere, kElsewhere, kPacked, {}, 8192);
    p.kernel({{kPacked, Access::Read}, {kSecond, Access::Read}, {kResult, Access::Write}}, 5);
    const SubRangeSet set = derive_subranges(p.model, IterationSet{});
    const std::vector<SubRange> packed = at(set, kPacked);
    REQUIRE_EQ(packed.size(), 1u);
    // Without the rule the GEMM's tensor absorbs every use of kSecond, the early ones with them:
    // its life begins at the early write and it covers what the space held before.
    CHECK_EQ(packed.front().first_work, made);
    const std::vector<SubRange> second = at(set, kSecond);
    REQUIRE_EQ(second.size(), 1u);
    CHECK_EQ(second.front().first_work, early);
    CHECK_LT(second.front().last_work, made);
}

TEST_CASE("a sized tensor's slices run from its own first use to the next tenant at its start") {
    // As above, and then another GEMM writes a new 8192-byte tensor at kPacked and a kernel reads
    // kPacked and kSecond again: the inner address's uses fall in three lives (docs/tagging.md,
    // changes 45 and 48 together).
    Pool p(1 << 20);
    const size_t early = p.kernel({{kSecond, Access::Write}}, 3);
    p.kernel({{kSecond, Access::Read}, {kElsewhere, Access::Write}}, 4);
    const size_t made = p.gemm(kElsewhere, kElsewhere, kPacked, {}, 8192);
    const size_t inside = p.kernel({{kPacked, Access::Read}, {kSecond, Access::Read}, {kResult, Access::Write}}, 5);
    const size_t next = p.gemm(kResult, kResult, kPacked, {}, 8192);
    const size_t late =
        p.kernel({{kPacked, Access::Read}, {kSecond, Access::Read}, {kElsewhere + 8192, Access::Write}}, 6);
    const SubRangeSet set = derive_subranges(p.model, IterationSet{});
    const std::vector<SubRange> packed = at(set, kPacked);
    REQUIRE_EQ(packed.size(), 2u);
    // Change 48 alone: the first tensor takes the late read too (a read after its life stays with
    // it), living on past the next tenant's start. Change 45 alone: it takes the early uses.
    CHECK_EQ(packed[0].first_work, made);
    CHECK_EQ(packed[0].last_work, inside);
    CHECK_EQ(packed[1].first_work, next);
    CHECK_EQ(packed[1].last_work, late);
    const std::vector<SubRange> second = at(set, kSecond);
    REQUIRE_EQ(second.size(), 1u);
    CHECK_EQ(second.front().first_work, early);
    CHECK_LT(second.front().last_work, made);
}
