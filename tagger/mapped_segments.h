// Mappings of reserved address space (allocations of kind device_mapped: cuMemMap .. cuMemUnmap) that
// lie end to end and are live together are one segment for the tagger. PyTorch's expandable segments
// grow a reservation by mapping 2 MiB (or 20 MiB) pages one after another, and one tensor may span
// two of them; a caching allocator's block never spans two cudaMalloc segments, so other kinds stay
// as they are.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model.h"

namespace tbdprof::tagger {

// Joins `mapped` (the trace's device_mapped allocations, any order) into segments appended to `out`:
// a segment with two or more mappings lists them in Allocation::pieces. `offset_of_id` receives, for
// each joined mapping's id, its offset in its segment (the trace's offsets are from the mapping).
void join_mapped_ranges(std::vector<Allocation> mapped, std::vector<Allocation>& out,
                        std::unordered_map<int64_t, uint64_t>& offset_of_id);

// [offset, offset + bytes) of a model allocation as the trace's allocations hold it: one piece (the
// allocation's id, the same offset) unless it joins mappings, else the part in each mapping it
// overlaps, with the offset from that mapping. What the tagger writes goes to these rows.
std::vector<MappedPiece> trace_pieces(const Allocation& a, uint64_t offset, int64_t bytes);

}  // namespace tbdprof::tagger
