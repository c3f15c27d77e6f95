// Copies an operation makes of one of its inputs for its own kernels (docs/tagging.md, change 41):
// the contiguous copy of an output gradient that an attention or a layer norm backward reads with
// two kernels, then drops. Internal to the tagger (rules.cpp calls it before the other temporaries).
#pragma once

#include "rules_context.h"

namespace tbdprof::tagger::rules {

// A copy's readers lie within this many work items of the copy: the kernels of the operation that
// made it, launched back to back (an attention backward: the copy, a product and reduction over it,
// a copy of their result, the attention kernel).
inline constexpr uint32_t kCopyReadersSpan = 8;

// Tags `workspace` (copy-for-next-kernels) the pooled tensors (sub-ranges, c.m.allocations[a].id < 0)
// still untagged, made after forward, that hold a copy the kernels right after it consume: a plain
// kernel touching only it and one other buffer fills it, the next work item reads it, two or more
// plain kernels in all read it, each within kCopyReadersSpan work items of the copy, nothing uses it
// after them, no work among them uses the source (but one that also takes in a buffer the work
// since the copy touched: the same operation's step), and each work item among them touches a buffer
// the copy or a later one of them touched. A value handed to the next operation is its maker's
// result; a copy only the next work items read is their operation's scratch, as a packed copy for
// a GEMM (docs/tagging.md, "Operation temporaries").
void tag_copies_for_next_kernels(Context& c);

}  // namespace tbdprof::tagger::rules
