// Allocations as lifetime bars: the allocations (or, for a pooled segment, the tensors inside it)
// alive somewhere in a time span, each from its allocation to its free, packed into lanes so that no
// two bars in one lane overlap in time. The memory view draws them when the span holds few enough
// to give every bar a few pixels of height; the stacked chart stays for wider spans.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace_data.h"

namespace tbdprof::viewer {

struct LifetimeBar {
    size_t allocation = 0;       // index into Overview::allocations
    size_t subrange = SIZE_MAX;  // index into Overview::subranges; SIZE_MAX: the whole allocation
    int64_t begin_trace_ns = 0, end_trace_ns = 0;
    int64_t bytes = 0;
    int category = 0;
    int lane = 0;
};

struct LifetimeLayout {
    std::vector<LifetimeBar> bars;  // by begin, then allocation order
    int lanes = 0;
    bool too_many = false;       // more than max_bars alive in the span: bars is empty
    bool has_subranges = false;  // some bar is a sub-range of a segment
};

// Bars alive in [t0, t1) (an allocation never freed lasts until run_end_trace_ns), at most max_bars.
// Lanes are filled first-fit by begin time, so the lane count is the most bars alive at once.
LifetimeLayout layout_lifetimes(const Overview& overview, int64_t t0, int64_t t1, int64_t run_end_trace_ns,
                                size_t max_bars);

// The bar under (t, lane), or nullptr.
const LifetimeBar* bar_at(const LifetimeLayout& layout, double trace_ns, int lane, double slack_ns = 0);

}  // namespace tbdprof::viewer
