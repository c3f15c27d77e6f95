#include "interval_lod.h"

#include <algorithm>
#include <limits>

namespace tbdprof::viewer {
namespace {

// ceil(a / b) for a >= 0, b > 0, without a + b - 1 (which overflows near INT64_MAX).
int64_t ceil_div(int64_t a, int64_t b) {
    return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace

int64_t IntervalMipmap::span(int level) const {
    // The top levels of a mipmap over a run near INT64_MAX ns would shift past 2^63.
    if (level >= 63 || base_span_ > (std::numeric_limits<int64_t>::max() >> level))
        return std::numeric_limits<int64_t>::max();
    return base_span_ << level;
}

void IntervalMipmap::build(const ItemRow& row, int64_t run_duration_ns, size_t max_buckets) {
    levels_.clear();
    marked_.clear();
    if (row.empty()) return;
    int64_t horizon = std::max<int64_t>(1, run_duration_ns);
    for (size_t i = 0; i < row.size(); ++i) horizon = std::max(horizon, row.end(i));
    // About one bucket per item, at most max_buckets: deeper zooms draw the items themselves.
    const size_t wanted = std::clamp<size_t>(row.size(), 64, std::max<size_t>(64, max_buckets));
    // The smallest power-of-two span with span * wanted >= horizon, computed without the product: a
    // run near INT64_MAX ns (a damaged or hostile trace) overflowed it, and the doubling never ended.
    const int64_t needed = ceil_div(horizon, static_cast<int64_t>(wanted));
    base_span_ = 1;
    while (base_span_ < needed) base_span_ <<= 1;  // needed <= 2^63 / 64: no overflow
    const size_t count = static_cast<size_t>(ceil_div(horizon, base_span_));
    std::vector<int64_t> covered(count, 0);
    std::vector<LodBucket> level(count);

    auto cover = [&](int64_t begin, int64_t end) {  // adds [begin, end) to the buckets it crosses
        while (begin < end) {
            const size_t b = static_cast<size_t>(begin / base_span_);
            // What is left of this bucket after `begin`; never (b + 1) * span, which may overflow.
            const int64_t room = base_span_ - (begin - static_cast<int64_t>(b) * base_span_);
            const int64_t piece = std::min(end - begin, room);
            covered[std::min(b, count - 1)] += piece;
            begin += piece;
        }
    };
    // Items come in start order: merge overlapping ones into a union on the fly.
    int64_t union_begin = 0, union_end = -1;
    for (size_t i = 0; i < row.size(); ++i) {
        const int64_t s = std::max<int64_t>(0, row.start(i)), e = std::max(s, row.end(i));
        if (s > union_end) {
            if (union_end > union_begin) cover(union_begin, union_end);
            union_begin = s;
            union_end = e;
        } else {
            union_end = std::max(union_end, e);
        }
        const size_t b = std::min(count - 1, static_cast<size_t>(s / base_span_));
        LodBucket& bucket = level[b];
        if (row.marked(i)) {
            if (marked_.empty()) marked_.emplace_back(count, false);
            marked_.front()[b] = true;
        }
        if (bucket.longest == 0 || row.duration(i) > row.duration(bucket.longest - 1)) {
            bucket.longest = static_cast<uint32_t>(i + 1);
        }
    }
    if (union_end > union_begin) cover(union_begin, union_end);
    for (size_t b = 0; b < count; ++b)
        level[b].busy = static_cast<float>(static_cast<double>(covered[b]) / static_cast<double>(base_span_));
    levels_.push_back(std::move(level));

    while (levels_.back().size() > 1) {
        const std::vector<LodBucket>& below = levels_.back();
        std::vector<LodBucket> above((below.size() + 1) / 2);
        for (size_t b = 0; b < above.size(); ++b) {
            const LodBucket& left = below[2 * b];
            const LodBucket right = 2 * b + 1 < below.size() ? below[2 * b + 1] : LodBucket{};
            above[b].busy = (left.busy + right.busy) / 2;
            if (!marked_.empty()) {
                if (marked_.size() < levels_.size() + 1) marked_.emplace_back(above.size(), false);
                const std::vector<bool>& marked_below = marked_[levels_.size() - 1];
                marked_.back()[b] = marked_below[2 * b] || (2 * b + 1 < below.size() && marked_below[2 * b + 1]);
            }
            above[b].longest = left.longest;
            if (right.longest != 0 &&
                (left.longest == 0 || row.duration(right.longest - 1) > row.duration(left.longest - 1))) {
                above[b].longest = right.longest;
            }
        }
        levels_.push_back(std::move(above));
    }
}

int IntervalMipmap::level_for(double ns_per_bucket) const {
    int level = 0;
    while (level + 1 < levels() && static_cast<double>(span(level + 1)) <= ns_per_bucket) ++level;
    return level;
}

size_t IntervalMipmap::bytes() const {
    size_t total = 0;
    for (const auto& level : levels_) total += level.capacity() * sizeof(LodBucket);
    for (const auto& level : marked_) total += level.capacity() / 8;
    return total;
}

}  // namespace tbdprof::viewer
