// Tensors inside allocations (allocation_subranges) turned into pieces that never overlap: the
// tagger may give sub-ranges that share bytes at the same time (an extent guessed to the end of a
// segment over the tensors inside it). Counting each would put the same byte in two categories at
// once, and a category could then exceed the run's peak. Here every byte of a segment belongs, at
// any moment, to at most one sub-range: where several cover it, the narrowest wins (the most
// specific tensor), then the one that began last, then the lowest id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tbdprof::analyzer {

struct SubRange {
    int64_t id = 0;
    int64_t offset = 0, bytes = 0;
    int64_t begin_ns = 0, end_ns = 0;  // [begin, end)
    int category = 0;
    bool low_confidence = false;  // its tag's confidence is low (tag_plausibility.h)
};

// `bytes` of one category from begin_ns to end_ns; pieces of one segment never share a byte at the
// same moment.
struct AttributedPiece {
    int64_t bytes = 0;
    int64_t begin_ns = 0, end_ns = 0;
    int category = 0;
    bool low_confidence = false;  // as the sub-range it comes from
};

struct ResolvedSubRanges {
    std::vector<AttributedPiece> pieces;
    bool overlapped = false;  // some sub-ranges shared bytes at the same time
    bool too_many = false;    // more overlap than `work_limit` allows: pieces empty, count the segment whole
};

// Sub-ranges of one segment of `segment_bytes` bytes (offsets beyond it are clipped). `work_limit`
// bounds the (byte piece, covering sub-range) pairs examined.
ResolvedSubRanges resolve_subranges(std::vector<SubRange> ranges, int64_t segment_bytes, size_t work_limit);

}  // namespace tbdprof::analyzer
