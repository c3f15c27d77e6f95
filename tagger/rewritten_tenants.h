// The tenants a rewrite cut set apart at one start (change 45, docs/tagging.md). Where the sub-ranges
// are derived, a piece is cut where a kernel writes a new value right after other work read the one
// there (SubRange::after_rewrite). Later passes that ask what the address held earlier in the step
// (change 13b: a product call read it, so the "gradient" there is backward's data) look through
// such cuts: without them those pieces were one.
#pragma once

#include "subranges.h"

#include <vector>

namespace tbdprof::tagger {

// Gives each piece that a rewrite cut began and that has no size evidence of its own the size evidence
// of the tenants before it at its start (SubRange::rewrite_cap_bytes). assign_extents caps such a
// piece with it where no other start in use lies above it: without the cut it was part of their
// piece and no larger, and without a cap it runs to the segment's end, over a caching allocator's
// free tail of a 20 MiB segment (the what-if's transformer replays predicted 12-15% too much).
// Elsewhere the next start in use bounds it (a later tenant may be larger than the one before: the
// allocator joins freed neighbours). Call before the extents are assigned.
void cap_rewritten_tenants(SubRangeSet& set);

// The pointer uses (indices into the model's pointer_uses) of the pieces before `index` at its start
// that only rewrite cuts separate from it: walking back while the piece after began at such a cut.
// `uses`: per sub-range, its pointer uses.
std::vector<size_t> uses_before_rewrites(const SubRangeSet& set, const std::vector<std::vector<size_t>>& uses,
                                         size_t index);

}  // namespace tbdprof::tagger
