// Busy time of one device as measures of interval unions, built so that the kernel scan can be split
// into consecutive parts (ranges of kernel ids) that run at the same time and are merged afterwards
// with exactly the result of one pass.
//
// Everything a kernel stretch contributes is additive over disjoint pieces (its length inside the
// window, its length per utilization bucket, its overlap with copies and sets), all in integer
// nanoseconds. So "busy including copies" is |K ∪ C| = |K| + |C| − |K ∩ C| per device, with C, the
// union of copies and sets, known before the scan; and the union of two consecutive parts is the two
// parts' sums minus what the first part's last open stretch shares with the second part's first
// stretches (only that stretch can reach past the seam, because kernels of a device come in start
// order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tbdprof::analyzer {

struct Stretch {
    int64_t begin, end;  // [begin, end)
};

// Length of [begin, end) inside [lo, hi).
inline int64_t overlap_ns(int64_t begin, int64_t end, int64_t lo, int64_t hi) {
    const int64_t b = begin > lo ? begin : lo;
    const int64_t e = end < hi ? end : hi;
    return e > b ? e - b : 0;
}

// The frame every stretch is measured in: the analysis window and the utilization buckets.
struct BusyFrame {
    int64_t window_begin = 0, window_end = 0;
    int64_t bucket_ns = 1;
    int bucket_count = 1;
};

// The union of one device's copies and sets: disjoint stretches sorted by begin.
class ActivityStretches {
public:
    // Copies and sets must come sorted by begin; finish() after the last.
    void add_sorted(int64_t begin, int64_t end);
    void finish();
    bool empty() const { return stretches_.empty(); }
    // Measure of the union inside [lo, hi).
    int64_t measure(int64_t lo, int64_t hi) const;
    // Measure of [begin, end) ∩ union ∩ [lo, hi), by binary search.
    int64_t overlap(int64_t begin, int64_t end, int64_t lo, int64_t hi) const;
    // The same for arguments whose `begin` never decreases between calls with one cursor (cheap).
    int64_t overlap_from(size_t& cursor, int64_t begin, int64_t end, int64_t lo, int64_t hi) const;

private:
    std::vector<Stretch> stretches_;
    bool open_ = false;
    Stretch tail_{0, 0};
};

// Streaming union of one device's kernel intervals within one part of the scan (intervals arrive
// sorted by start). The last stretch stays open until close(); the first stretches it handed on are
// remembered (up to kHeadLimit) so that a preceding part can take them back at the seam.
class KernelBusy {
public:
    static constexpr size_t kHeadLimit = 4096;

    KernelBusy(const BusyFrame* frame, const ActivityStretches* activities);

    void add(int64_t begin, int64_t end) {
        if (!open_) {
            tail_ = {begin, end};
            open_ = true;
        } else if (begin > tail_.end) {
            hand_on(tail_);
            tail_ = {begin, end};
        } else if (end > tail_.end) {
            tail_.end = end;
        }
    }
    // Appends the next part of the same device (its kernels all start at or after this part's
    // last). False when the seam cannot be resolved exactly: this part's last stretch reaches past
    // more stretches of `next` than it remembered (the caller scans again in one pass).
    bool absorb(KernelBusy&& next);
    void close();

    int64_t window_ns() const { return window_ns_; }             // |K| inside the window
    int64_t activity_overlap_ns() const { return activity_ns_; }  // |K ∩ C| inside the window
    const std::vector<int64_t>& buckets() const { return buckets_; }  // |K| per bucket

private:
    void hand_on(Stretch stretch);
    void measure(Stretch stretch, int sign, size_t* cursor);

    const BusyFrame* frame_;
    const ActivityStretches* activities_;  // may be null: no copies or sets on this device
    bool open_ = false;
    Stretch tail_{0, 0};
    int64_t window_ns_ = 0, activity_ns_ = 0;
    std::vector<int64_t> buckets_;
    size_t cursor_ = 0;
    int64_t bucket_hint_ = 0;  // bucket of the last stretch: usually that of the next one too
    std::vector<Stretch> head_;
    bool head_overflow_ = false;
};

}  // namespace tbdprof::analyzer
