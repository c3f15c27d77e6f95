// A library call's workspace extent is a barrier in time (tagger/workspace_barriers.h): no value at an
// address inside it, above its start, is carried from before the call to after it.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

// A GEMM given `bytes` of workspace at `workspace`, as a cuBLASLt call records it.
size_t gemm_with_workspace(Pool& p, uint64_t a, uint64_t b, uint64_t c, uint64_t workspace, int64_t bytes) {
    const size_t index = p.gemm(a, b, c, workspace);
    for (PointerUse& u : p.model.pointer_uses)
        if (u.work == index && u.operand_of_call.workspace) u.bytes = bytes;
    return index;
}

}  // namespace

TEST_CASE("uses of an address before and after a call whose workspace held it are two tensors") {
    // At 45056 a kernel writes V and another reads it; then a GEMM is handed 8192 B of workspace at
    // 40960 (over 45056), and after it a kernel reads 45056 again: what it reads was placed there
    // after the call's scratch, not V. One piece over both would be in use across the call and cap
    // the workspace's extent at 4096 B.
    Pool p(1 << 20);
    p.kernel({{45056, Access::Write}, {0, Access::Read}}, 2);
    p.kernel({{45056, Access::Read}, {4096, Access::Write}}, 3);
    const size_t call = gemm_with_workspace(p, 16384, 24576, 32768, 40960, 8192);
    const size_t after = p.kernel({{45056, Access::Read}, {8192, Access::Write}}, 4);
    const SubRangeSet set = derive_subranges(p.model, steps_of(p.model));
    const std::vector<SubRange> values = at(set, 45056);
    REQUIRE_EQ(values.size(), 2u);
    CHECK_LT(values[0].last_work, call);
    CHECK_EQ(values[1].first_work, after);
    const std::vector<SubRange> scratch = at(set, 40960);
    REQUIRE_EQ(scratch.size(), 1u);
    CHECK_EQ(scratch[0].bytes, 8192);  // its whole extent, no piece in use across it
}

TEST_CASE("an address past a call's workspace extent keeps its value across the call") {
    // The same, but the call is handed 4096 B at 40960, which end where 45056 begins: V is read
    // after the call, one piece.
    Pool p(1 << 20);
    p.kernel({{45056, Access::Write}, {0, Access::Read}}, 2);
    p.kernel({{45056, Access::Read}, {4096, Access::Write}}, 3);
    gemm_with_workspace(p, 16384, 24576, 32768, 40960, 4096);
    p.kernel({{45056, Access::Read}, {8192, Access::Write}}, 4);
    const SubRangeSet set = derive_subranges(p.model, steps_of(p.model));
    CHECK_EQ(at(set, 45056).size(), 1u);
}
