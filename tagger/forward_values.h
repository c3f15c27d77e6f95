// Which work runs in its step's forward pass, as far as the tags tell before the phases are found:
// internal to the tagger (rules.cpp, the operation temporaries of pooled tensors).
#pragma once

#include "rules_context.h"

#include <vector>

namespace tbdprof::tagger::rules {

// Per work item of c.m: whether it lies in a step before that step's first write of a buffer
// tagged gradients (backward's first gradient), or before the product call that reads the step's
// last weight first read by one (itself, or the copy a kernel converted it into: autocast). A step
// where no gradient is written has no known forward: false throughout.
std::vector<bool> forward_work(const Context& c);

// Whether pooled tensor `a` (a sub-range: its end is its last use, not a free) is a value forward
// hands from one operation to the next: made in forward, then read at once and left (a batch norm's
// output under autocast that the ReLU reads; every value of a checkpointed block's first forward).
// Inside a caching allocator's segment nothing shows the operation's end, so such a value looks
// like an operation's temporary (docs/tagging.md, change 38).
bool forward_pooled_value(const Context& c, const std::vector<bool>& forward, size_t a);

}  // namespace tbdprof::tagger::rules
