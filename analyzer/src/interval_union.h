// A union of half-open intervals as disjoint stretches sorted by begin, with the measures the
// communication figures need: the length inside a span, and the length shared with another union;
// and the stretches shared with, or not covered by, another union (a timeline draws them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "busy_time.h"

namespace tbdprof::analyzer {

class IntervalUnion {
public:
    IntervalUnion() = default;
    // Any order; empty and reversed intervals are dropped.
    explicit IntervalUnion(std::vector<Stretch> intervals);

    bool empty() const { return stretches_.empty(); }
    const std::vector<Stretch>& stretches() const { return stretches_; }
    // |U ∩ [lo, hi)|
    int64_t measure(int64_t lo, int64_t hi) const;
    // |U ∩ V ∩ [lo, hi)|
    int64_t shared(const IntervalUnion& other, int64_t lo, int64_t hi) const;
    // U ∩ V and U \ V themselves, for drawing them (the measures above need neither).
    IntervalUnion intersection(const IntervalUnion& other) const;
    IntervalUnion difference(const IntervalUnion& other) const;

private:
    // The first stretch that ends after t.
    std::vector<Stretch>::const_iterator first_after(int64_t t) const {
        return std::partition_point(stretches_.begin(), stretches_.end(), [t](const Stretch& s) { return s.end <= t; });
    }
    std::vector<Stretch> stretches_;
};

}  // namespace tbdprof::analyzer
