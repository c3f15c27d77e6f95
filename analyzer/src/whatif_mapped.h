// Mapped segments for the memory what-if (docs/whatif.md, "Expandable segments"). With PyTorch's
// expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) a pool's segment is one range
// of reserved address space grown by mapping pages at its end (cuMemMap: 2 MiB pages for the small
// pool, 20 MiB for the large one), and the trace holds one allocation of kind `device_mapped` per
// page. A tensor may span two pages; the tagger writes its sub-range as one row in each. The pool's
// replay needs the segment, not the pages: mappings of one process laid end to end and live together
// are joined here (as the tagger joins them, docs/tagging.md "Mapped segments"), and each page is
// placed at its offset in its segment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "memory_allocations.h"
#include "trace_file.h"

namespace tbdprof::analyzer {

struct MappedPlace {
    size_t head = 0;     // index of the segment's first mapping among the allocations
    int64_t offset = 0;  // of this mapping in its segment
};

struct MappedSegments {
    std::unordered_map<size_t, MappedPlace> place;        // every device_mapped allocation (index) -> its place
    std::map<size_t, int64_t> bytes;                      // per head: the segment's mapped bytes at the end
    std::map<size_t, int64_t> page_bytes;                 // per head: its first mapping's bytes (the pool's page)
    std::map<size_t, std::vector<int64_t>> page_offsets;  // per head: where each mapping begins
    bool empty() const { return place.empty(); }
};

// Joins the device_mapped allocations among the first `real_count` of `allocations` (id order).
MappedSegments join_mapped_segments(const TraceFile& trace, const std::vector<Allocation>& allocations,
                                    size_t real_count);

}  // namespace tbdprof::analyzer
