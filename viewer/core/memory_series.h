// Live device memory over time as a step series (the analyzer's replay, every allocation and free,
// taken from Report::memory with full_memory_timeline), with a min/max tree over its points so that
// any time range answers its exact minimum and maximum in O(log n): a pixel column never smooths a
// peak away, however far out the view is zoomed.
#pragma once

#include <cstdint>
#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::viewer {

struct RangeExtent {
    int64_t min = 0, max = 0;
    size_t max_point = SIZE_MAX;  // point holding the maximum (its category split is drawn); SIZE_MAX: none
};

class MemorySeries {
public:
    // Points in time order; each holds from its time until the next point's.
    void build(std::vector<analyzer::MemoryPoint> points);
    size_t size() const { return points_.size(); }
    bool empty() const { return points_.empty(); }
    const analyzer::MemoryPoint& point(size_t i) const { return points_[i]; }
    int64_t total(size_t i) const { return totals_[i]; }

    // Index of the point in force at time t (the last one at or before t), SIZE_MAX before the first.
    size_t point_at(int64_t t) const;
    // Exact min and max of live bytes over [t0, t1), counting the value in force at t0.
    RangeExtent extent(int64_t t0, int64_t t1) const;
    // Same over point indices [first, last].
    RangeExtent extent_of_points(size_t first, size_t last) const;
    int64_t peak() const;

private:
    std::vector<analyzer::MemoryPoint> points_;
    std::vector<int64_t> totals_;
    // levels_[L][k]: min/max over points [k * 2^L, (k + 1) * 2^L).
    struct Node {
        int64_t min, max;
        uint32_t max_point;
    };
    std::vector<std::vector<Node>> levels_;
};

}  // namespace tbdprof::viewer
