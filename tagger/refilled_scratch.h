// A scratch that one address holds again and again within a step, filled and consumed at once
// (docs/tagging.md, change 49): the im2col columns a convolution writes for each image's GEMM, the
// GEMM's output that col2im unpacks at once. Internal to the tagger (rules.cpp calls it before the
// other temporaries).
#pragma once

#include "rules_context.h"

namespace tbdprof::tagger::rules {

// An address refilled at least this often in one step is an operation's scratch, not a place
// where operations hand values on (rules.cpp's planned-block temporary uses the same count).
inline constexpr uint32_t kManyRefills = 8;

// Tags `workspace` (refilled-scratch) the pooled tensors (sub-ranges, c.m.allocations[a].id < 0)
// still untagged whose every value is read once, by the work right after the one that wrote it
// (a temporary episode, as dataflow.h counts them; library calls included), when the tensors at the
// same address in the same step (or the same stretch between two steps) show at least kManyRefills
// such episodes and few others. Once the address's value is cut at each rewrite (change 45), each
// fill is a tensor of its own: one episode says nothing, but many at one address in one step do.
// A value handed from one operation to another is read later or by several: it is not refilled
// before each next read.
void tag_refilled_scratch(Context& c);

}  // namespace tbdprof::tagger::rules
