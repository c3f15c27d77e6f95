// TouchList, the work item's list of touched buffers (tagger/touch_list.h): behaves as the
// std::vector it replaced for everything the tagger does with it, in one pointer's room.
#include <doctest/doctest.h>

#include "model.h"
#include "touch_list.h"

#include <utility>
#include <vector>

using namespace tbdprof::tagger;

namespace {

std::vector<int32_t> allocations(const TouchList& list) {
    std::vector<int32_t> out;
    for (const Touch& t : list) out.push_back(t.allocation);
    return out;
}

}  // namespace

TEST_CASE("the work item and its touch list stay small") {
    CHECK_EQ(sizeof(TouchList), sizeof(void*));
    CHECK_LE(sizeof(WorkItem), 48u);
    CHECK_LE(sizeof(LibraryCall), 80u);
}

TEST_CASE("an empty list allocates nothing and iterates over nothing") {
    TouchList list;
    CHECK(list.empty());
    CHECK_EQ(list.size(), 0u);
    CHECK_EQ(list.begin(), list.end());
    list.clear();
    CHECK_EQ(list.erase_if([](const Touch&) { return true; }), 0u);
}

TEST_CASE("push_back keeps order and values past several growths") {
    TouchList list;
    for (int32_t a = 0; a < 37; ++a) list.push_back({a, a % 2 ? Access::Write : Access::Read});
    REQUIRE_EQ(list.size(), 37u);
    for (int32_t a = 0; a < 37; ++a) {
        CHECK_EQ(list[size_t(a)].allocation, a);
        CHECK(list[size_t(a)].access == (a % 2 ? Access::Write : Access::Read));
    }
    CHECK_EQ(list.front().allocation, 0);
    CHECK_EQ(list.back().allocation, 36);
}

TEST_CASE("copies are deep, moves take the block, assignment from a vector or a list of touches") {
    TouchList a = {{1, Access::Read}, {2, Access::Write}};
    TouchList b = a;
    b.push_back({3, Access::Unknown});
    b[0].access = Access::Write;
    CHECK_EQ(allocations(a), std::vector<int32_t>{1, 2});
    CHECK(a[0].access == Access::Read);
    CHECK_EQ(allocations(b), std::vector<int32_t>{1, 2, 3});
    TouchList c = std::move(b);
    CHECK_EQ(allocations(c), std::vector<int32_t>{1, 2, 3});
    CHECK(b.empty());  // NOLINT(bugprone-use-after-move): moved-from lists are empty
    a = c;
    CHECK_EQ(allocations(a), std::vector<int32_t>{1, 2, 3});
    a = std::vector<Touch>{{7, Access::Read}};
    CHECK_EQ(allocations(a), std::vector<int32_t>{7});
    c = std::move(a);
    CHECK_EQ(allocations(c), std::vector<int32_t>{7});
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move)
    const TouchList& self = c;
    c = self;  // self-assignment keeps the touches
    CHECK_EQ(allocations(c), std::vector<int32_t>{7});
}

TEST_CASE("erase_if removes the chosen touches and keeps the others in order; clear empties") {
    TouchList list = {{1, Access::Read}, {2, Access::Write}, {3, Access::Read}, {4, Access::Write}};
    CHECK_EQ(list.erase_if([](const Touch& t) { return t.access == Access::Write; }), 2u);
    CHECK_EQ(allocations(list), std::vector<int32_t>{1, 3});
    list.clear();
    CHECK(list.empty());
    list.push_back({9, Access::Read});
    CHECK_EQ(allocations(list), std::vector<int32_t>{9});
}

TEST_CASE("work items copied and moved keep their touches") {
    std::vector<WorkItem> work(3);
    work[1].touches = {{5, Access::Write}};
    std::vector<WorkItem> copy = work;
    work.reserve(100);  // moves the items
    CHECK_EQ(allocations(work[1].touches), std::vector<int32_t>{5});
    CHECK_EQ(allocations(copy[1].touches), std::vector<int32_t>{5});
    CHECK(copy[0].touches.empty());
}
