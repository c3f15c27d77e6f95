// The interval unions behind the communication figures, against a brute force over every nanosecond.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "interval_union.h"

using namespace tbdprof::analyzer;

namespace {

// Which nanoseconds of [0, span) the intervals cover.
std::vector<bool> covered(const std::vector<Stretch>& intervals, int64_t span) {
    std::vector<bool> bits(static_cast<size_t>(span), false);
    for (const Stretch& s : intervals)
        for (int64_t t = std::max<int64_t>(0, s.begin); t < std::min(s.end, span); ++t)
            bits[static_cast<size_t>(t)] = true;
    return bits;
}

}  // namespace

TEST_CASE("interval union measures agree with counting nanoseconds") {
    std::mt19937 random(7);
    constexpr int64_t kSpan = 600;
    for (int round = 0; round < 200; ++round) {
        std::vector<Stretch> a, b;
        const int count_a = static_cast<int>(random() % 12), count_b = static_cast<int>(random() % 12);
        for (int i = 0; i < count_a + count_b; ++i) {
            const int64_t begin = static_cast<int64_t>(random() % kSpan);
            const int64_t length = static_cast<int64_t>(random() % 80) - 5;  // some empty or reversed
            (i < count_a ? a : b).push_back({begin, begin + length});
        }
        const std::vector<bool> bits_a = covered(a, kSpan), bits_b = covered(b, kSpan);
        const IntervalUnion ua(a), ub(b);
        const int64_t lo = static_cast<int64_t>(random() % (kSpan / 2)),
                      hi = lo + static_cast<int64_t>(random() % (kSpan / 2));
        int64_t want_a = 0, want_shared = 0;
        for (int64_t t = lo; t < hi; ++t) {
            want_a += bits_a[static_cast<size_t>(t)];
            want_shared += bits_a[static_cast<size_t>(t)] && bits_b[static_cast<size_t>(t)];
        }
        CHECK(ua.measure(lo, hi) == want_a);
        CHECK(ua.shared(ub, lo, hi) == want_shared);
        CHECK(ub.shared(ua, lo, hi) == want_shared);
        for (size_t i = 1; i < ua.stretches().size(); ++i) CHECK(ua.stretches()[i - 1].end < ua.stretches()[i].begin);
        // The drawn stretches: A ∩ B and A \ B, nanosecond by nanosecond.
        const std::vector<bool> both = covered(ua.intersection(ub).stretches(), kSpan),
                                only_a = covered(ua.difference(ub).stretches(), kSpan);
        for (int64_t t = 0; t < kSpan; ++t) {
            const size_t i = static_cast<size_t>(t);
            CHECK(both[i] == (bits_a[i] && bits_b[i]));
            CHECK(only_a[i] == (bits_a[i] && !bits_b[i]));
        }
    }
}
