// Sub-ranges of pooled segments: the tensors a caching allocator hands out inside the blocks it got
// from cudaMalloc, recovered from the pointers the work used (kernel arguments, library operands,
// copies, sets). Each sub-range becomes an allocation of its own in a derived TraceModel, so that
// the ordinary rules tag it with the same logic as a real allocation.
#pragma once

#include "iterations.h"
#include "model.h"

#include <vector>

namespace tbdprof::tagger {

struct SubRange {
    int32_t segment = kNone;  // index into TraceModel::allocations
    uint64_t offset = 0;
    int64_t bytes = 0;        // extent (assign_extents); 0 for a sub-range merged into another
    uint32_t first_work = 0;  // first and last work item that used it (indices into TraceModel::work)
    uint32_t last_work = 0;
    int64_t known_bytes = 0;  // size evidence: exact (copies, sets) or a lower bound (GEMM operands)
    bool exact = false;       // known_bytes came from a copy or set
    bool merged = false;      // merged into another sub-range: no longer a tensor of its own
    int64_t reach_bytes = 0;  // farthest own pointer from the start, plus one (the extent's floor)
    // It begins where a kernel wrote a new value at its start right after other work read the one
    // there (derive_subranges; output_slots.h, rewrites_read_value): the piece before at the same
    // start held that value.
    bool after_rewrite = false;
    // For such a piece without size evidence of its own: the size evidence of the tenants before it
    // at its start that rewrite cuts set apart, which caps its extent (0: none).
    int64_t rewrite_cap_bytes = 0;
    // Its size evidence is a library operand's lower bound that measures one of its tenants only
    // (outlived_bounds.h): its extent runs to the next start in use, not to the bound.
    bool bound_of_one_tenant = false;
};

struct SubRangeSet {
    std::vector<SubRange> ranges;  // by segment, then offset, then time
    std::vector<int32_t> owner;    // per TraceModel::pointer_uses entry: the index into ranges
    // Per pointer use: its offset and work item, kept here because assign_extents also runs on the
    // derived model, whose pointer uses are not these.
    std::vector<std::pair<uint64_t, uint32_t>> use_offset_work;
    // Per PointerUse::slot: whether the word starts values (output_slots.h), from the model the set
    // was derived from; empty for a set made otherwise (no word is then taken for a stale one).
    std::vector<bool> output_words;
};

// Derives sub-ranges for every allocation of a pooled model that work pointed into. A start address
// is a pointer value; one address holds several sub-ranges over time when the evidence says the
// contents were replaced (a copy or set wrote it whole; a later step wrote it before reading it; a
// copy or set gave it a different size). Pointers inside a sub-range of known size, used while it
// lives, belong to it. The extent runs to the known size, else to the next start in use at the same
// time, else to the segment end. Empty for a model that is not pooled.
SubRangeSet derive_subranges(const TraceModel& model, const IterationSet& iterations);

// Merges the sub-range `second` into `first` (same segment): one tensor whose contents the rules
// found to be carried over. Uses of `second` move to `first`; `second` is left empty (bytes 0).
// Call assign_extents afterwards: a longer life can meet more neighbours.
void merge_subranges(SubRangeSet& set, size_t first, size_t second);

// Merges every sub-range `j` with join[j] into sub-range j - 1, as merge_subranges called for each
// from the last down (a run of them folds into the first before it), moving the uses in one pass.
// Returns how many were merged. Call assign_extents afterwards.
size_t merge_into_previous(SubRangeSet& set, const std::vector<bool>& join);

// Splits sub-range `index` at work item `from_work`: its uses by that work and later become a new
// sub-range, inserted right after it (the indices after `index` shift by one). Returns false,
// changing nothing, when either part would be left without uses. Call assign_extents afterwards.
bool split_subrange(const TraceModel& model, SubRangeSet& set, size_t index, uint32_t from_work);

// Moves the uses of sub-range `index` inside it (above its start), but for those of the work items
// `stays` marks, into a new sub-range starting at
// the lowest of them, inserted where the order (segment, offset, time) puts it; the indices from there
// shift by one. Returns its index, or SIZE_MAX, changing nothing, when there are none. For a piece
// whose start holds a value of unknown size that no inner pointer can be a slice of. Call
// assign_extents afterwards.
size_t peel_interior(const TraceModel& model, SubRangeSet& set, size_t index, const std::vector<bool>& stays);

// Extents: the known size, capped by the next start in use at the same time, else the segment end.
void assign_extents(const TraceModel& model, SubRangeSet& set);

// The model with each non-empty sub-range appended as an allocation (id -1 - index, lifetime from
// its first to its last use) and the work that pointed into a segment touching the sub-ranges
// instead, library call operands included. `virtual_index` receives, per sub-range, its allocation
// index in the result (kNone for empty ones).
TraceModel with_subranges(const TraceModel& model, const SubRangeSet& set, std::vector<int32_t>& virtual_index);

}  // namespace tbdprof::tagger
