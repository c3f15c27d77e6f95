#include "item_row.h"

#include <algorithm>
#include <limits>

namespace tbdprof::viewer {

void ItemRow::add(int64_t start, int64_t end, uint32_t label, int64_t id, bool marked) {
    label = (label & ~kMarked) | (marked ? kMarked : 0u);
    int64_t span = 0;  // end - start, saturated: the times of a damaged trace may be far apart
    if (__builtin_sub_overflow(end, start, &span)) span = end > start ? std::numeric_limits<int64_t>::max() : 0;
    const int64_t duration = std::max<int64_t>(0, span);
    constexpr uint32_t kLong = std::numeric_limits<uint32_t>::max();
    if (!items_.empty() && start < items_[items_.size() - 1].start) sorted_ = false;
    if (duration >= kLong) long_durations_[items_.size()] = duration;
    items_.push_back({start, duration >= kLong ? kLong : static_cast<uint32_t>(duration), label});
    const size_t index = items_.size() - 1;
    if ((index & (Chunked<uint32_t>::kChunk - 1)) == 0) chunk_base_.push_back(id);
    const int64_t offset = id - chunk_base_.back();
    if (offset >= 0 && offset < static_cast<int64_t>(kLong)) {
        id_offsets_.push_back(static_cast<uint32_t>(offset));
    } else {
        id_offsets_.push_back(kLong);
        far_ids_[index] = id;
    }
    max_duration_ = std::max(max_duration_, duration);
}

int64_t ItemRow::id(size_t i) const {
    const uint32_t offset = id_offsets_[i];
    if (offset != std::numeric_limits<uint32_t>::max()) return chunk_base_[i >> Chunked<uint32_t>::kShift] + offset;
    return far_ids_.at(i);
}

int64_t ItemRow::duration(size_t i) const {
    const uint32_t d = items_[i].duration;
    if (d != std::numeric_limits<uint32_t>::max()) return d;
    auto found = long_durations_.find(i);
    return found == long_durations_.end() ? d : found->second;
}

size_t ItemRow::first_starting_at(int64_t t) const {
    size_t lo = 0, hi = items_.size();
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (items_[mid].start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t ItemRow::first_overlapping(int64_t t) const {
    // An item starting before t - max_duration has ended by t.
    const int64_t earliest = t > std::numeric_limits<int64_t>::min() + max_duration_ ? t - max_duration_ : t;
    return first_starting_at(earliest);
}

size_t ItemRow::item_at(int64_t t, int64_t tolerance_ns) const {
    size_t best = SIZE_MAX;
    int64_t best_distance = tolerance_ns + 1;
    const size_t last = first_starting_at(t + tolerance_ns + 1);
    for (size_t i = first_overlapping(t - tolerance_ns); i < last; ++i) {
        const int64_t distance = t < start(i) ? start(i) - t : (t > end(i) ? t - end(i) : 0);
        // Inside an item wins; among items equally close, the later (inner, for nested ranges) one.
        if (distance <= best_distance) {
            best_distance = distance;
            best = i;
        }
    }
    return best_distance <= tolerance_ns ? best : SIZE_MAX;
}

}  // namespace tbdprof::viewer
