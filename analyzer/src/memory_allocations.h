// The device allocations of a trace as the memory replay sees them, shared by the report's memory
// scan (memory_scan.cpp) and the what-if model (whatif.cpp), so both replay the same timeline: the
// rows read, tensors inside segments turned into pieces, and the order of events at one instant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework_unseen.h"
#include "trace_file.h"

namespace tbdprof::analyzer {

struct Allocation {
    int64_t id, device, bytes, alloc_ns, free_ns;  // free_ns INT64_MAX: never freed
    int64_t stack;                                 // -1: none
    int category;
    bool freed;
    bool real = true;          // false: a piece of a sub-range, or the space it takes from its segment
    bool by_subrange = false;  // a real allocation counted by its sub-ranges
    int64_t segment = -1;      // for a piece: index of its allocation
    int listed_category = 0;   // category shown in the largest-allocations list
    std::string rule;
    std::optional<double> confidence;
    bool low_confidence = false;  // tagged, and its (or its sub-range's) confidence is low
    int64_t process = 0;          // the process that allocated it (a rank of a multi-process run)
};

struct Event {
    int64_t trace_ns;
    int order;  // at equal times: frees of older allocations, then allocations, then zero-lifetime frees
    uint32_t index;
    bool is_alloc() const { return order == 1; }
};

// Device allocations with bytes > 0 in id order (only `device`'s when given). Rows claiming more
// than 1 PiB are damaged or made up: counted in `absurd`, not returned. With `unseen`, every row
// read is also handed to collect_unseen_allocation() (framework_unseen.h), of any device.
std::vector<Allocation> read_device_allocations(const TraceFile& trace, std::optional<int64_t> device, int64_t& absurd,
                                                std::vector<UnseenAllocation>* unseen = nullptr);

// Sub-ranges (tensors the tagger recovered inside an allocation) count in their own category
// while they live and take their bytes from the allocation's unattributed ('untagged') bytes.
// Overlaps are resolved first (memory_subranges.h), so no byte counts twice. Times are clamped into
// the allocation's life.
struct SubRangeSummary {
    size_t segments = 0;     // allocations counted by their sub-ranges
    size_t overlapping = 0;  // of those, allocations whose sub-ranges shared bytes at the same time
    size_t too_many = 0;     // allocations with too much overlap to resolve: counted whole
};

// Appends the pieces (and the space each takes from its segment, as negative untagged bytes).
SubRangeSummary add_subranges(const TraceFile& trace, std::vector<Allocation>& allocations);

// Ids of the allocations addressed at 16 or more offsets that the tagger left whole (no sub-ranges):
// asked only when the tagger says some are (its memory_breakdown note mentions "segment level").
std::vector<int64_t> whole_pooled_allocations(TraceFile& trace);

// Every allocation and free, in replay order. A state is read only after the last event of one
// time and order (position + 1 has another time or order).
std::vector<Event> ordered_events(const std::vector<Allocation>& allocations);

}  // namespace tbdprof::analyzer
