// Where and when the program used the bytes of its pooled segments, for the what-if's pool order
// (whatif_pool_tensors.h): every pointer its work was given inside a segment (kernel pointer
// arguments, library operands and workspaces, copy sources and destinations, set destinations), with
// the trace time the host queued the work. The tagger's end of a pool tensor is an upper bound (docs/
// tagging.md: the moment its space is next used, or the step's end); these uses give the lower bound.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trace_file.h"

namespace tbdprof::analyzer {

struct SegmentUse {
    int64_t offset_bytes = 0;  // from the segment's start
    int64_t trace_ns = 0;      // when the host queued the work (a kernel's launch, a call's begin)
    bool library = false;      // a library call's operand or workspace, or a kernel the call launched
};

// Uses of the segments in `segment_address` (allocation id -> device address), per segment id,
// sorted by time.
std::unordered_map<int64_t, std::vector<SegmentUse>> read_segment_uses(
    const TraceFile& trace, const std::unordered_map<int64_t, int64_t>& segment_address);

// Only the library calls' matrix operands (a, b, c: the program's tensors a call reads and writes,
// never its private workspace), per segment id, sorted by time.
std::unordered_map<int64_t, std::vector<SegmentUse>> read_matrix_operand_uses(
    const TraceFile& trace, const std::unordered_map<int64_t, int64_t>& segment_address);

}  // namespace tbdprof::analyzer
