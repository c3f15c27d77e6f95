// One timeline row's items (kernels of a stream, copies and sets, host calls, NVTX ranges at one
// depth), sorted by start. 20 bytes an item with its trace id, so 10 M kernels take ~200 MB.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "chunked.h"

namespace tbdprof::viewer {

// start + duration, saturated at the int64 limits: a damaged or hostile trace may hold times near them.
inline int64_t saturating_end(int64_t start_ns, int64_t duration_ns) {
    int64_t end_ns = 0;
    if (!__builtin_add_overflow(start_ns, duration_ns, &end_ns)) return end_ns;
    return duration_ns > 0 ? INT64_MAX : INT64_MIN;
}

struct Item {
    int64_t start;
    uint32_t duration;  // UINT32_MAX: longer than 4.29 s, exact value in the row's long_durations
    uint32_t label;     // index into the session's label table (kernel name, copy kind...); top bit: marked
};

class ItemRow {
public:
    // Items must come in start order (the trace stores kernels in time order).
    void add(int64_t start, int64_t end, uint32_t label, int64_t id, bool marked = false);
    size_t size() const { return items_.size(); }
    bool empty() const { return items_.empty(); }
    int64_t start(size_t i) const { return items_[i].start; }
    int64_t duration(size_t i) const;
    int64_t end(size_t i) const { return saturating_end(start(i), duration(i)); }
    static constexpr uint32_t kMarked = 0x80000000u;  // a kernel a CUDA graph replay ran
    uint32_t label(size_t i) const { return items_[i].label & ~kMarked; }
    bool marked(size_t i) const { return (items_[i].label & kMarked) != 0; }
    int64_t id(size_t i) const;
    int64_t max_duration() const { return max_duration_; }
    bool sorted() const { return sorted_; }

    // First item that may overlap [t, ...): no item before it ends after t.
    size_t first_overlapping(int64_t t) const;
    // First item starting at or after t.
    size_t first_starting_at(int64_t t) const;
    // The item under time t (the last one that starts before and ends after), or SIZE_MAX.
    size_t item_at(int64_t t, int64_t tolerance_ns) const;
    size_t bytes() const { return items_.bytes() + id_offsets_.bytes() + chunk_base_.capacity() * sizeof(int64_t); }

private:
    Chunked<Item> items_;
    // Trace ids as 32-bit offsets from the first id of each chunk (ids rise in time order, so they
    // fit); the rare one that does not is kept whole in far_ids_.
    Chunked<uint32_t> id_offsets_;
    std::vector<int64_t> chunk_base_;
    std::unordered_map<size_t, int64_t> far_ids_;
    std::unordered_map<size_t, int64_t> long_durations_;
    int64_t max_duration_ = 0;
    bool sorted_ = true;
};

}  // namespace tbdprof::viewer
