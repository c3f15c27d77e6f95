// The iteration of each work item (tagger/work_iterations.h): the lookup over the iterations' work
// ranges gives what assigning each range's items in iteration order gives, for ranges in order (the
// lookup) and for ranges that overlap or come out of order (the per-item fallback).
#include <doctest/doctest.h>

#include "work_iterations.h"

#include <vector>

using namespace tbdprof::tagger;

namespace {

// Work items 0..n-1, of process 1 except those listed as process 2.
TraceModel work_of(size_t n, const std::vector<size_t>& of_process_2) {
    TraceModel m;
    m.work.resize(n);
    for (size_t i = 0; i < n; ++i) m.work[i].process = 1;
    for (size_t i : of_process_2) m.work[i].process = 2;
    return m;
}

Iteration range(size_t first_work, size_t end_work, int32_t process = 1) {
    Iteration it;
    it.process = process;
    it.first_work = first_work;
    it.end_work = end_work;
    return it;
}

// What the rules kept per item before: each range's items of its process, later ranges winning.
std::vector<int> assigned(const TraceModel& m, const IterationSet& its) {
    std::vector<int> per_item(m.work.size(), -1);
    for (size_t i = 0; i < its.iterations.size(); ++i) {
        const Iteration& it = its.iterations[i];
        for (size_t w = it.first_work; w < it.end_work && w < m.work.size(); ++w)
            if (m.work[w].process == it.process) per_item[w] = static_cast<int>(i);
    }
    return per_item;
}

std::vector<int> looked_up(const TraceModel& m, const IterationSet& its) {
    const WorkIterations lookup(m, its);
    std::vector<int> per_item(m.work.size());
    for (size_t w = 0; w < m.work.size(); ++w) per_item[w] = lookup[w];
    return per_item;
}

}  // namespace

TEST_CASE("ranges in order: gaps, empty ranges, another process's items, a range past the work") {
    const TraceModel m = work_of(20, {3, 4, 12});
    IterationSet its;
    its.iterations = {range(2, 6), range(6, 6), range(6, 9), range(11, 15), range(15, 15), range(17, 25)};
    const std::vector<int> expected = assigned(m, its);
    CHECK_EQ(looked_up(m, its), expected);
    CHECK_EQ(expected[0], -1);   // before the first
    CHECK_EQ(expected[3], -1);   // inside the first, another process's
    CHECK_EQ(expected[6], 2);    // the empty range before it holds nothing
    CHECK_EQ(expected[10], -1);  // between two
    CHECK_EQ(expected[19], 5);   // the last range runs past the work list
}

TEST_CASE("ranges that overlap or come out of order: the later iteration wins, as before") {
    const TraceModel m = work_of(12, {5});
    IterationSet overlapping;
    overlapping.iterations = {range(0, 8), range(4, 10), range(9, 12, 2)};
    CHECK_EQ(looked_up(m, overlapping), assigned(m, overlapping));
    CHECK_EQ(WorkIterations(m, overlapping)[6], 1);
    IterationSet unordered;
    unordered.iterations = {range(6, 9), range(0, 3), range(3, 6)};
    CHECK_EQ(looked_up(m, unordered), assigned(m, unordered));
    CHECK_EQ(WorkIterations(m, unordered)[1], 1);
}

TEST_CASE("no iterations, and a lookup made by default: every item outside") {
    const TraceModel m = work_of(4, {});
    CHECK_EQ(looked_up(m, IterationSet{}), std::vector<int>(4, -1));
    CHECK_EQ(WorkIterations{}[0], -1);
}
