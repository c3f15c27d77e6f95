// A library operand's lower bound that measures one tenant of a piece only does not cap the piece
// (tagger/outlived_bounds.h; docs/tagging.md, change 50): under autocast a BF16 product's space goes
// next to an FP32 value twice its size, which nothing cut apart from it.
#include <doctest/doctest.h>

#include "subranges_test_support.h"

using namespace tbdprof::tagger;
using namespace tbdprof::tagger::subranges_test;

namespace {

constexpr uint64_t kValue = 65536;          // the start the tenants share
constexpr uint64_t kNext = kValue + 16384;  // the next start in use while they live
constexpr int64_t kProductBytes = 8192;     // the product's lower bound (m x n BF16 elements)
constexpr uint32_t kDeclared = 0;           // a kernel's own pointer parameter, not to const
constexpr uint32_t kMember = 1;             // a word inside a by-value struct

// A plain kernel that writes `offset` through word `slot` (kDeclared or kMember), as load_model keeps
// it: the word's access from the parameter's type, whether it lies in an aggregate per slot.
size_t write_through(Pool& p, uint64_t offset, uint32_t slot, int32_t function) {
    const size_t index = p.kernel({{offset, Access::Write}}, function);
    p.model.pointer_uses.back().slot = slot;
    p.model.kernel_slots = 2;
    p.model.aggregate_words = {false, true};
    return index;
}

// The start's pieces, with kNext in use from before the first tenant to after the last.
SubRange only_piece(const TraceModel& m) {
    const SubRangeSet set = derive_subranges(m, IterationSet{});
    const std::vector<SubRange> pieces = at(set, kValue);
    REQUIRE_EQ(pieces.size(), 1u);
    return pieces.front();
}

// A product written at kValue and read by other work, then a new value written there by a plain
// kernel through word `slot`, read by the next kernel.
TraceModel product_then_write(uint32_t slot) {
    Pool p(1 << 20);
    p.kernel({{kNext, Access::Write}}, 9);
    p.gemm(0, 0, kValue, {}, kProductBytes);
    p.kernel({{kValue, Access::Read}, {4096, Access::Write}}, 10);  // the product consumed
    write_through(p, kValue, slot, 11);                             // the next tenant, no size shown
    p.kernel({{kValue, Access::Read}, {8192, Access::Write}}, 12);
    p.kernel({{kNext, Access::Read}}, 13);
    return std::move(p.model);
}

}  // namespace

TEST_CASE("a product read, then a value written by a kernel's own pointer: the piece runs to the next start") {
    // Without the rule the piece is capped at the product's 8192 bytes and the later value's other
    // half is in no piece.
    CHECK_EQ(only_piece(product_then_write(kDeclared)).bytes, int64_t(kNext - kValue));
}

TEST_CASE("the same write through a struct's member says nothing: the bound stays the size") {
    // A member of a by-value struct is as writable as the struct: no sign of a new value there.
    CHECK_EQ(only_piece(product_then_write(kMember)).bytes, kProductBytes);
}

TEST_CASE("values without size evidence, the last read, then a product there: its bound does not cap them") {
    Pool p(1 << 20);
    p.kernel({{kNext, Access::Write}}, 9);
    p.kernel({{kValue, Access::Write}}, 10);                        // an earlier value, no size shown
    p.kernel({{kValue, Access::Read}, {4096, Access::Write}}, 11);  // consumed
    p.gemm(0, 0, kValue, {}, kProductBytes);                        // the product's space at the start
    p.kernel({{kValue, Access::Read}, {8192, Access::Write}}, 12);
    p.kernel({{kNext, Access::Read}}, 13);
    // Without the rule the product's bound caps the earlier value too.
    CHECK_EQ(only_piece(p.model).bytes, int64_t(kNext - kValue));
}

TEST_CASE("with no start in use above it the bound stays: the segment's free tail is no tensor's") {
    Pool p(1 << 20);
    p.kernel({{kValue, Access::Write}}, 10);
    p.kernel({{kValue, Access::Read}, {4096, Access::Write}}, 11);
    p.gemm(0, 0, kValue, {}, kProductBytes);
    p.kernel({{kValue, Access::Read}, {8192, Access::Write}}, 12);
    CHECK_EQ(only_piece(p.model).bytes, kProductBytes);
}
