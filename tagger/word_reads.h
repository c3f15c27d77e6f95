// Reads through writable words where every tensor is an allocation of its own (PyTorch under
// backend:cudaMallocAsync, the --framework=pytorch preset; one cudaMalloc per buffer). A kernel that
// takes its pointers in one by-value struct (PyTorch's elementwise kernels) passes each of them as
// writable, so the flow takes the source of a conversion for a buffer the kernel wrote. Autocast
// converts every FP32 weight for the step's products first thing in each step: without this pass
// the weight's first use in a step is a write, it looks made in the step, and nothing is carried
// across steps. Pooled segments get the same knowledge per tensor (carried_reads.h, change 38);
// docs/tagging.md, change 44. Internal to the tagger (model.cpp calls it once the work is in order).
#pragma once

#include "model.h"

#include <vector>

namespace tbdprof::tagger {

// Per PointerUse::slot (m.kernel_slots of them): whether some launch's pointer in that word is the
// first use of its allocation in the run by any work (kernel, library call, copy, set): a new
// allocation holds no value to read, so that word is where the function writes its result.
// `m.pointer_uses`: the plain kernels' words (add_kernel_pointer_uses), work in launch order.
std::vector<bool> first_use_output_words(const TraceModel& m);

// For a model whose tensors are allocations of their own (not m.pooled): sets Touch::reads_first on
// each plain kernel's touch of an allocation that it holds only in words that never start a value
// while the same launch writes through an output word (carried_reads.h, reads_beside_output: the
// source of a conversion), then drops m.pointer_uses, which such a model does not otherwise keep.
void mark_unpooled_reads_beside_output(TraceModel& m);

}  // namespace tbdprof::tagger
