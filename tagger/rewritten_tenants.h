// The tenants a rewrite cut set apart at one start (change 45, docs/tagging.md). Where the sub-ranges
// are derived, a piece is cut where a kernel writes a new value right after other work read the one
// there (SubRange::after_rewrite). Later passes that ask what the address held earlier in the step
// (change 13b: a product call read it, so the "gradient" there is backward's data) look through
// such cuts: without them those pieces were one.
#pragma once

#include "subranges.h"

#include <vector>

namespace tbdprof::tagger {

// The pointer uses (indices into the model's pointer_uses) of the pieces before `index` at its start
// that only rewrite cuts separate from it: walking back while the piece after began at such a cut.
// `uses`: per sub-range, its pointer uses.
std::vector<size_t> uses_before_rewrites(const SubRangeSet& set, const std::vector<std::vector<size_t>>& uses,
                                         size_t index);

}  // namespace tbdprof::tagger
