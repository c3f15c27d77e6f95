#include "allocation_lanes.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

namespace tbdprof::viewer {

LifetimeLayout layout_lifetimes(const Overview& overview, int64_t t0, int64_t t1, int64_t run_end_trace_ns,
                                size_t max_bars) {
    LifetimeLayout layout;
    auto add = [&](LifetimeBar bar) {
        if (bar.end_trace_ns <= bar.begin_trace_ns)
            bar.end_trace_ns = bar.begin_trace_ns + 1;  // a zero-length life still shows
        if (bar.begin_trace_ns >= t1 || bar.end_trace_ns <= t0) return true;
        if (layout.bars.size() >= max_bars) return false;
        layout.bars.push_back(bar);
        layout.has_subranges = layout.has_subranges || bar.subrange != SIZE_MAX;
        return true;
    };
    const std::vector<AllocationInfo>& allocations = overview.allocations;
    for (size_t i = 0; i < allocations.size(); ++i) {
        const AllocationInfo& a = allocations[i];
        if (a.alloc_ns >= t1) break;  // allocations are in alloc_ns order
        const int64_t end = a.free_ns == INT64_MAX ? std::max(run_end_trace_ns, a.alloc_ns) : a.free_ns;
        if (std::max(end, a.alloc_ns + 1) <= t0) continue;  // freed before the span
        bool fits = true;
        if (a.subrange_count > 0) {
            // A pooled segment: its tensors, each with its own category and lifetime.
            for (size_t s = a.subrange_first; fits && s < a.subrange_first + a.subrange_count; ++s) {
                const SubRangeInfo& r = overview.subranges[s];
                fits = add({i, s, r.begin_ns, r.end_ns, r.bytes, r.category, 0});
            }
        } else {
            fits = add({i, SIZE_MAX, a.alloc_ns, end, a.bytes, a.category, 0});
        }
        if (!fits) {
            layout.bars.clear();
            layout.too_many = true;
            layout.has_subranges = false;
            return layout;
        }
    }
    std::stable_sort(layout.bars.begin(), layout.bars.end(),
                     [](const LifetimeBar& a, const LifetimeBar& b) { return a.begin_trace_ns < b.begin_trace_ns; });
    // First fit: the lowest lane free at the bar's begin.
    std::priority_queue<int, std::vector<int>, std::greater<>> free_lanes;
    using Busy = std::pair<int64_t, int>;  // (end, lane)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    for (LifetimeBar& bar : layout.bars) {
        while (!busy.empty() && busy.top().first <= bar.begin_trace_ns) {
            free_lanes.push(busy.top().second);
            busy.pop();
        }
        if (free_lanes.empty()) {
            bar.lane = layout.lanes++;
        } else {
            bar.lane = free_lanes.top();
            free_lanes.pop();
        }
        busy.emplace(bar.end_trace_ns, bar.lane);
    }
    return layout;
}

const LifetimeBar* bar_at(const LifetimeLayout& layout, double trace_ns, int lane, double slack_ns) {
    for (const LifetimeBar& bar : layout.bars) {
        if (bar.lane == lane && trace_ns >= static_cast<double>(bar.begin_trace_ns) - slack_ns &&
            trace_ns < static_cast<double>(bar.end_trace_ns) + slack_ns)
            return &bar;
    }
    return nullptr;
}

}  // namespace tbdprof::viewer
