// A library call's kernel that points outside every operand the call recorded points at a tensor the
// call uses without a record: it is kept as a pointer use (tagger/unrecorded_operands.h;
// docs/tagging.md, change 51). Without it the bytes there lie in no piece.
#include <doctest/doctest.h>

#include "subranges_test_support.h"
#include "unrecorded_operands.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

constexpr int64_t kSlice = 65536;        // each of three slices of one packed value
constexpr uint64_t kThird = 2 * kSlice;  // the slice the call records no operand at
constexpr uint64_t kOut = 4 * kSlice;    // the call's output

// A value of three slices written by a plain kernel, then a library call whose kernel reads all
// three and writes kOut, recording the extents of the first two and of its output (`exact`) or only
// lower bounds; then a plain kernel reads the output. Returns the call's kernel.
size_t packed_then_call(Pool& p, bool exact) {
    p.kernel({{0, Access::Write}}, 10);
    const size_t call = p.kernel({{0, Access::Read, kSlice, exact},
                                  {uint64_t(kSlice), Access::Read, kSlice, exact},
                                  {kOut, Access::Write, kSlice, exact}},
                                 100);
    p.call_on(call, LibraryCall{}, CallOperands{});
    p.kernel({{kOut, Access::Read}, {6 * uint64_t(kSlice), Access::Write}}, 11);
    return call;
}

std::vector<LibraryKernelPointer> kernel_pointers(size_t call) {
    std::vector<LibraryKernelPointer> pointers;
    for (uint64_t offset : {uint64_t(0), uint64_t(kSlice), kThird, kOut})
        pointers.push_back({uint32_t(call), 0, offset, Access::Write});
    return pointers;
}

size_t uses_at(const TraceModel& m, uint64_t offset) {
    return size_t(std::count_if(m.pointer_uses.begin(), m.pointer_uses.end(),
                                [&](const PointerUse& u) { return u.offset == offset; }));
}

}  // namespace

TEST_CASE("a call's kernel pointing outside every recorded operand: a use of its own, a piece there") {
    Pool p(1 << 20);
    const size_t call = packed_then_call(p, true);
    const size_t before = p.model.pointer_uses.size();
    add_unrecorded_operands(p.model, kernel_pointers(call));
    // Only the third slice is new: the others are the call's operands.
    CHECK_EQ(p.model.pointer_uses.size(), before + 1);
    CHECK_EQ(uses_at(p.model, kThird), 1u);
    CHECK_EQ(at(derive_subranges(p.model, IterationSet{}), kThird).size(), 1u);
}

TEST_CASE("without the rule the third slice lies in no piece") {
    Pool p(1 << 20);
    packed_then_call(p, true);
    CHECK(at(derive_subranges(p.model, IterationSet{}), kThird).empty());
}

TEST_CASE("a call that records lower bounds only says nothing of its kernels' other pointers") {
    // (A GEMM's operands are bounds: its kernels' pointers past them, a split's partial sums, are no
    // tensors of their own.)
    Pool p(1 << 20);
    const size_t call = packed_then_call(p, false);
    const size_t before = p.model.pointer_uses.size();
    add_unrecorded_operands(p.model, kernel_pointers(call));
    CHECK_EQ(p.model.pointer_uses.size(), before);
}
