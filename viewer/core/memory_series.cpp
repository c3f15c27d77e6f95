#include "memory_series.h"

#include <algorithm>
#include <numeric>

namespace tbdprof::viewer {

void MemorySeries::build(std::vector<analyzer::MemoryPoint> points) {
    points_ = std::move(points);
    totals_.resize(points_.size());
    for (size_t i = 0; i < points_.size(); ++i) {
        totals_[i] = std::accumulate(points_[i].bytes.begin(), points_[i].bytes.end(), int64_t{0});
    }
    levels_.clear();
    if (points_.empty()) return;
    std::vector<Node> level(points_.size());
    for (size_t i = 0; i < points_.size(); ++i) level[i] = {totals_[i], totals_[i], static_cast<uint32_t>(i)};
    levels_.push_back(std::move(level));
    while (levels_.back().size() > 1) {
        const std::vector<Node>& below = levels_.back();
        std::vector<Node> above((below.size() + 1) / 2);
        for (size_t k = 0; k < above.size(); ++k) {
            Node node = below[2 * k];
            if (2 * k + 1 < below.size()) {
                const Node& right = below[2 * k + 1];
                node.min = std::min(node.min, right.min);
                if (right.max > node.max) {
                    node.max = right.max;
                    node.max_point = right.max_point;
                }
            }
            above[k] = node;
        }
        levels_.push_back(std::move(above));
    }
}

size_t MemorySeries::point_at(int64_t t) const {
    auto after = std::upper_bound(points_.begin(), points_.end(), t,
                                  [](int64_t value, const analyzer::MemoryPoint& p) { return value < p.trace_ns; });
    return after == points_.begin() ? SIZE_MAX : static_cast<size_t>(after - points_.begin()) - 1;
}

RangeExtent MemorySeries::extent_of_points(size_t first, size_t last) const {
    RangeExtent extent;
    if (points_.empty() || first > last || first >= points_.size()) return extent;
    last = std::min(last, points_.size() - 1);
    bool any = false;
    auto take = [&](const Node& node) {
        if (!any) {
            extent = {node.min, node.max, node.max_point};
            any = true;
            return;
        }
        extent.min = std::min(extent.min, node.min);
        if (node.max > extent.max) {
            extent.max = node.max;
            extent.max_point = node.max_point;
        }
    };
    // Climb from both ends, taking whole nodes: O(log n) nodes cover [first, last].
    size_t lo = first, hi = last + 1;  // half-open at the current level
    for (size_t level = 0; lo < hi; ++level) {
        const std::vector<Node>& nodes = levels_[level];
        if (lo & 1) take(nodes[lo++]);
        if (hi & 1) take(nodes[--hi]);
        lo >>= 1;
        hi >>= 1;
    }
    return extent;
}

RangeExtent MemorySeries::extent(int64_t t0, int64_t t1) const {
    if (points_.empty()) return {};
    const size_t in_force = point_at(t0);
    // Points strictly after t0 and before t1.
    const size_t after = static_cast<size_t>(
        std::upper_bound(points_.begin(), points_.end(), t0,
                         [](int64_t value, const analyzer::MemoryPoint& p) { return value < p.trace_ns; }) -
        points_.begin());
    const size_t end = static_cast<size_t>(
        std::lower_bound(points_.begin(), points_.end(), t1,
                         [](const analyzer::MemoryPoint& p, int64_t value) { return p.trace_ns < value; }) -
        points_.begin());
    // Points at exactly t0 all count (equal times are separate steps; the one in force is the last).
    size_t first = in_force == SIZE_MAX ? after : in_force;
    while (first > 0 && in_force != SIZE_MAX && points_[first - 1].trace_ns == points_[in_force].trace_ns &&
           points_[in_force].trace_ns == t0) {
        --first;
    }
    RangeExtent extent;
    if (first < end)
        extent = extent_of_points(first, end - 1);
    else if (in_force != SIZE_MAX)
        extent = {totals_[in_force], totals_[in_force], in_force};
    if (in_force == SIZE_MAX && t0 < t1) extent.min = std::min<int64_t>(extent.min, 0);  // nothing live yet
    return extent;
}

int64_t MemorySeries::peak() const {
    return levels_.empty() ? 0 : levels_.back()[0].max;
}

}  // namespace tbdprof::viewer
