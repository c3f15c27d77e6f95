#include "busy_time.h"

#include <algorithm>

namespace tbdprof::analyzer {

void ActivityStretches::add_sorted(int64_t begin, int64_t end) {
    if (!open_) {
        tail_ = {begin, end};
        open_ = true;
    } else if (begin > tail_.end) {
        stretches_.push_back(tail_);
        tail_ = {begin, end};
    } else if (end > tail_.end) {
        tail_.end = end;
    }
}

void ActivityStretches::finish() {
    if (open_) stretches_.push_back(tail_);
    open_ = false;
}

int64_t ActivityStretches::measure(int64_t lo, int64_t hi) const {
    int64_t sum = 0;
    for (const Stretch& s : stretches_) sum += overlap_ns(s.begin, s.end, lo, hi);
    return sum;
}

int64_t ActivityStretches::overlap(int64_t begin, int64_t end, int64_t lo, int64_t hi) const {
    const int64_t b = std::max(begin, lo), e = std::min(end, hi);
    if (e <= b) return 0;
    // Stretches are disjoint and sorted, so their ends are sorted too.
    auto it = std::partition_point(stretches_.begin(), stretches_.end(), [&](const Stretch& s) { return s.end <= b; });
    int64_t sum = 0;
    for (; it != stretches_.end() && it->begin < e; ++it) sum += overlap_ns(it->begin, it->end, b, e);
    return sum;
}

int64_t ActivityStretches::overlap_from(size_t& cursor, int64_t begin, int64_t end, int64_t lo, int64_t hi) const {
    // A stretch that ends before `begin` cannot meet this or any later argument.
    while (cursor < stretches_.size() && stretches_[cursor].end <= begin) ++cursor;
    const int64_t b = std::max(begin, lo), e = std::min(end, hi);
    if (e <= b) return 0;
    int64_t sum = 0;
    for (size_t i = cursor; i < stretches_.size() && stretches_[i].begin < e; ++i) {
        sum += overlap_ns(stretches_[i].begin, stretches_[i].end, b, e);
    }
    return sum;
}

KernelBusy::KernelBusy(const BusyFrame* frame, const ActivityStretches* activities)
    : frame_(frame),
      activities_(activities != nullptr && !activities->empty() ? activities : nullptr),
      buckets_(static_cast<size_t>(frame->bucket_count), 0) {}

void KernelBusy::hand_on(Stretch stretch) {
    measure(stretch, +1, &cursor_);
    if (head_.size() < kHeadLimit) {
        head_.push_back(stretch);
    } else {
        head_overflow_ = true;
    }
}

void KernelBusy::measure(Stretch s, int sign, size_t* cursor) {
    window_ns_ += sign * overlap_ns(s.begin, s.end, frame_->window_begin, frame_->window_end);
    if (activities_ != nullptr) {
        activity_ns_ += sign * (cursor != nullptr
                                    ? activities_->overlap_from(*cursor, s.begin, s.end, frame_->window_begin, frame_->window_end)
                                    : activities_->overlap(s.begin, s.end, frame_->window_begin, frame_->window_end));
    }
    // Utilization buckets cover the whole run; pieces outside [0, buckets) are not charted.
    const int64_t bucket_ns = frame_->bucket_ns;
    const int64_t count = frame_->bucket_count;
    const int64_t limit = bucket_ns * count;
    int64_t begin = std::max<int64_t>(s.begin, 0);
    const int64_t end = std::min(s.end, limit);
    if (begin >= end) return;
    int64_t b = bucket_hint_;  // a division per stretch is a noticeable part of the scan
    if (begin < b * bucket_ns || begin >= (b + 1) * bucket_ns) b = begin / bucket_ns;
    for (; begin < end && b < count; ++b) {
        const int64_t piece_end = std::min(end, (b + 1) * bucket_ns);
        buckets_[static_cast<size_t>(b)] += sign * (piece_end - begin);
        begin = piece_end;
        bucket_hint_ = b;
    }
}

bool KernelBusy::absorb(KernelBusy&& next) {
    window_ns_ += next.window_ns_;
    activity_ns_ += next.activity_ns_;
    for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += next.buckets_[i];
    if (!next.open_) return true;  // no timed kernel in the next part
    if (!open_) {
        tail_ = next.tail_;
        open_ = true;
        return true;
    }
    // This part's open stretch swallows every stretch of `next` that starts before it ends; those
    // were measured on their own, so take them back and measure the joined stretch once.
    Stretch joined = tail_;
    size_t i = 0;
    for (; i < next.head_.size() && next.head_[i].begin <= joined.end; ++i) {
        measure(next.head_[i], -1, nullptr);
        joined.end = std::max(joined.end, next.head_[i].end);
    }
    if (i < next.head_.size()) {  // a stretch of `next` begins after the joined one: it is final
        measure(joined, +1, nullptr);
        tail_ = next.tail_;
        return true;
    }
    if (next.head_overflow_) return false;  // stretches of `next` not remembered might join too
    if (next.tail_.begin <= joined.end) {
        tail_ = {joined.begin, std::max(joined.end, next.tail_.end)};
    } else {
        measure(joined, +1, nullptr);
        tail_ = next.tail_;
    }
    return true;
}

void KernelBusy::close() {
    if (open_) measure(tail_, +1, nullptr);
    open_ = false;
}

}  // namespace tbdprof::analyzer
