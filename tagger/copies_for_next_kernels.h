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
// still untagged that hold a copy the kernels right after it consume: a kernel touching only it and
// one other buffer (or a device copy) fills it, the next work item reads it, two or more kernels in
// all read it, each within kCopyReadersSpan work items of the copy, and nothing uses it after them.
// A value handed to the next operation is its maker's result, not a copy of a value that already
// exists; a copy read by the next work items only is that work's scratch, as a packed copy for a GEMM.
void tag_copies_for_next_kernels(Context& c);

}  // namespace tbdprof::tagger::rules
