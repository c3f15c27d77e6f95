// A sized value consumed and rewritten at its start by a plain kernel's output word: the size seen
// for it does not reach over a tensor a library call then writes inside it and past its end
// (tagger/subranges.cpp, cut_rewritten; docs/tagging.md, change 47).
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

enum Slot : uint32_t { kOut30, kIn31, kIn31Inner };

constexpr uint64_t kValue = 65536;          // where both values start
constexpr uint64_t kInner = kValue + 2048;  // a pointer into the new value (its second part)
constexpr uint64_t kLater = kValue + 6144;  // the later GEMM output, inside the first value's 8192 bytes
constexpr int64_t kSizedBytes = 8192;       // the first GEMM's output

struct Run {
    TraceModel model;
    size_t later_write = 0;  // index into model.pointer_uses: the later GEMM's write at kLater
    size_t rewrite = 0;      // the work item of kernel 30's rewrite at kValue
};

// A forward GEMM writes kSizedBytes at kValue and another GEMM reads it (consumed). Kernel 30 then
// writes a new value there through its output word (a copy the attention makes, no size), kernel
// 31 reads it and a pointer inside it, a GEMM writes `later_bytes` at kLater, and a backward kernel
// reads kValue, kInner and kLater together.
Run rewritten_value(int64_t later_bytes) {
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);         // initialise W
    struct_kernel(p, {{262144, kOut30}}, 30);  // kernel 30's word first points at fresh space
    p.gemm(0, 0, kValue, {}, kSizedBytes);     // the sized value
    p.gemm(kValue, 0, 16384);                  // consumed
    Run run;
    run.rewrite = struct_kernel(p, {{kValue, kOut30}}, 30);  // the new value, no size
    struct_kernel(p, {{kValue, kIn31}, {kInner, kIn31Inner}}, 31);
    p.gemm(16384, 0, kLater, {}, later_bytes);
    run.later_write = p.model.pointer_uses.size() - 1;
    p.kernel({{kValue, Access::Read}, {kInner, Access::Read}, {kLater, Access::Read}, {32768, Access::Write}}, 32);
    run.model = std::move(p.model);
    return run;
}

}  // namespace

TEST_CASE("a consumed GEMM output's size does not reach over a tensor written after its start was rewritten") {
    const Run run = rewritten_value(8192);  // to kValue + 14336, past the first value's end
    const SubRangeSet set = derive_subranges(run.model, IterationSet{});
    REQUIRE_EQ(set.owner.size(), run.model.pointer_uses.size());
    const int32_t owner = set.owner[run.later_write];
    REQUIRE_GE(owner, 0);
    // Without the cut, the piece at kValue (8192 bytes, in use until the backward kernel) takes the
    // later GEMM's output as its own; with it, that output starts a piece of its own.
    CHECK_EQ(set.ranges[size_t(owner)].offset, kLater);
    // The first value keeps its size and ends before the rewrite.
    const std::vector<SubRange> first = at(set, kValue);
    REQUIRE_GE(first.size(), 2u);
    CHECK_EQ(first.front().bytes, kSizedBytes);
    CHECK_LT(first.front().last_work, run.rewrite);
    CHECK_GE(first.back().first_work, run.rewrite);
}

TEST_CASE("a GEMM output inside the sized value, not past its end: the first value still ends at the rewrite") {
    // Change 47 alone kept this one piece (the output may be a slice of the first value); merged with
    // change 45, the rewrite of the start after the read begins the next tenant whatever follows
    // (tagger.rewritten_tenants), and the first value keeps its own size evidence and life.
    const Run run = rewritten_value(2048);  // to kValue + 8192: within the first value
    const SubRangeSet set = derive_subranges(run.model, IterationSet{});
    REQUIRE_GE(set.owner[run.later_write], 0);
    const std::vector<SubRange> pieces = at(set, kValue);
    REQUIRE_EQ(pieces.size(), 2u);
    CHECK_EQ(pieces.front().bytes, kSizedBytes);
    CHECK_LT(pieces.front().last_work, run.rewrite);
    CHECK_GE(pieces.back().first_work, run.rewrite);
}

TEST_CASE("without a library call writing inside it, a rewritten value is still a tenant of its own") {
    // The same run without the later GEMM. Change 47 alone kept one piece here; merged with change 45
    // the rewrite after the read cuts (docs/tagging.md, "changes 45-47 together": the plain
    // transformer gains by it), and the first piece keeps its size.
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);
    struct_kernel(p, {{262144, kOut30}}, 30);
    p.gemm(0, 0, kValue, {}, kSizedBytes);
    p.gemm(kValue, 0, 16384);
    struct_kernel(p, {{kValue, kOut30}}, 30);
    struct_kernel(p, {{kValue, kIn31}, {kInner, kIn31Inner}}, 31);
    p.kernel({{kValue, Access::Read}, {kInner, Access::Read}, {32768, Access::Write}}, 32);
    const SubRangeSet set = derive_subranges(p.model, IterationSet{});
    const std::vector<SubRange> pieces = at(set, kValue);
    REQUIRE_EQ(pieces.size(), 2u);
    CHECK_EQ(pieces.front().bytes, kSizedBytes);
}

TEST_CASE("a library call's workspace written inside the sized value and past its end cuts it as an output does") {
    // The same run with the later GEMM's output elsewhere and its workspace (8192 bytes, scratch it
    // overwrites whole) at kLater: the space had been handed on as well (change 48).
    Pool p(1 << 20);
    p.kernel({{0, Access::Write}}, 9);
    struct_kernel(p, {{262144, kOut30}}, 30);
    p.gemm(0, 0, kValue, {}, kSizedBytes);
    p.gemm(kValue, 0, 16384);
    const size_t rewrite = struct_kernel(p, {{kValue, kOut30}}, 30);
    struct_kernel(p, {{kValue, kIn31}, {kInner, kIn31Inner}}, 31);
    p.gemm(kValue, 0, 49152, kLater);
    p.model.pointer_uses.back().bytes = 8192;  // the workspace's recorded size
    const SubRangeSet set = derive_subranges(p.model, IterationSet{});
    // Without the workspace as evidence, the value at kValue stays one piece whose extent the
    // workspace caps: the first value's 8192 bytes are lost.
    const std::vector<SubRange> first = at(set, kValue);
    REQUIRE_GE(first.size(), 2u);
    CHECK_EQ(first.front().bytes, kSizedBytes);
    CHECK_LT(first.front().last_work, rewrite);
}
