#include "interval_union.h"

namespace tbdprof::analyzer {

IntervalUnion::IntervalUnion(std::vector<Stretch> intervals) {
    std::erase_if(intervals, [](const Stretch& s) { return s.end <= s.begin; });
    // Kernels come nearly sorted (id order is time order per device): the sort is cheap.
    std::sort(intervals.begin(), intervals.end(), [](const Stretch& a, const Stretch& b) { return a.begin < b.begin; });
    for (const Stretch& s : intervals) {
        if (!stretches_.empty() && s.begin <= stretches_.back().end) {
            stretches_.back().end = std::max(stretches_.back().end, s.end);
        } else {
            stretches_.push_back(s);
        }
    }
}

int64_t IntervalUnion::measure(int64_t lo, int64_t hi) const {
    int64_t sum = 0;
    for (auto it = first_after(lo); it != stretches_.end() && it->begin < hi; ++it)
        sum += overlap_ns(it->begin, it->end, lo, hi);
    return sum;
}

int64_t IntervalUnion::shared(const IntervalUnion& other, int64_t lo, int64_t hi) const {
    auto a = first_after(lo), b = other.first_after(lo);
    const auto a_end = stretches_.end(), b_end = other.stretches_.end();
    int64_t sum = 0;
    // Both unions are disjoint and sorted: walk them together, always advancing the one ending first.
    while (a != a_end && b != b_end && a->begin < hi && b->begin < hi) {
        sum += overlap_ns(std::max(a->begin, b->begin), std::min(a->end, b->end), lo, hi);
        if (a->end < b->end)
            ++a;
        else
            ++b;
    }
    return sum;
}

IntervalUnion IntervalUnion::intersection(const IntervalUnion& other) const {
    std::vector<Stretch> both;
    auto a = stretches_.begin(), b = other.stretches_.begin();
    while (a != stretches_.end() && b != other.stretches_.end()) {
        const int64_t begin = std::max(a->begin, b->begin), end = std::min(a->end, b->end);
        if (begin < end) both.push_back({begin, end});
        if (a->end < b->end)
            ++a;
        else
            ++b;
    }
    return IntervalUnion(std::move(both));
}

IntervalUnion IntervalUnion::difference(const IntervalUnion& other) const {
    std::vector<Stretch> rest;
    auto b = other.stretches_.begin();
    for (const Stretch& s : stretches_) {
        int64_t from = s.begin;
        while (b != other.stretches_.end() && b->end <= from) ++b;
        // Cut out every stretch of `other` that starts inside s; the last may reach into the next s.
        for (auto cut = b; cut != other.stretches_.end() && cut->begin < s.end; ++cut) {
            if (cut->begin > from) rest.push_back({from, cut->begin});
            from = std::max(from, cut->end);
        }
        if (from < s.end) rest.push_back({from, s.end});
    }
    return IntervalUnion(std::move(rest));
}

}  // namespace tbdprof::analyzer
