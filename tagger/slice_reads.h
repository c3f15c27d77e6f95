// Reads of a slice of a value just made below it (tagger/subranges.cpp asks before joining a value
// read first in a step with what its address held in the step before; docs/tagging.md, change 48).
// A library call can take several operands that are end-to-end slices of one tensor (an attention's
// query, key and value in one packed buffer) and records each with its own extent. When a plain
// kernel has just written a new value at the lowest slice's address (a copy making the packed buffer
// contiguous, through a word that starts values, size unknown), the slices above it are parts of that
// new value: their addresses hold nothing carried over from the work that used them before.
#pragma once

#include "model.h"

#include <vector>

namespace tbdprof::tagger {

// Per entry of m.pointer_uses: whether it is a library call's read, of a recorded extent, of an
// operand that begins where another operand of the same call, in the same allocation, ends, when that
// lower operand was last written (before the call, by other work) by a plain kernel through a word
// that starts values (`outputs`, output_slots.h) and through no size, or is itself such a slice.
// `order`: the valid pointer uses sorted by allocation, offset, work (derive_subranges' order).
std::vector<bool> slices_of_new_values(const TraceModel& m, const std::vector<size_t>& order,
                                       const std::vector<bool>& outputs);

}  // namespace tbdprof::tagger
