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

#include <tbdprof/trace/tables.h>

#include <vector>

namespace tbdprof::tagger {

// Per PointerUse::slot (m.kernel_slots of them): whether some launch's pointer in that word is the
// first use of its allocation in the run by any work (kernel, library call, copy, set): a new
// allocation holds no value to read, so that word is where the function writes its result.
// `m.pointer_uses`: the plain kernels' words (add_kernel_pointer_uses), work in launch order.
std::vector<bool> first_use_output_words(const TraceModel& m);

// Which words of the kernels' parameters lie inside a by-value aggregate: a word at a nonzero byte
// offset of its parameter, or one of several pointer words of one parameter in a launch. Such a
// word says nothing of what the kernel does with it (every member is as writable as the struct); a
// parameter that is one pointer, not to const, is the kernel's own word that it writes there (a
// hand-written Adam update in place: its weight is written, not read beside the moments it fills).
// Rows come grouped by kernel and parameter (the table's order).
class AggregateWords {
public:
    void add(const trace::KernelEdgeRow& row, uint32_t slot);
    std::vector<bool> finish(size_t slots);

private:
    void flush();
    int64_t kernel_ = -1, param_ = -1;
    std::vector<uint32_t> group_;  // the current parameter's word slots
    std::vector<uint32_t> inside_;
};

// For a model whose tensors are allocations of their own (not m.pooled): sets Touch::reads_first on
// each plain kernel's touch of an allocation that it holds only in aggregate words (`aggregate`, per
// slot) that never start a value while the same launch fills a new allocation through an output word
// (carried_reads.h, reads_beside_output: the source of a conversion; an update in place, which
// fills nothing new, keeps its writes), then drops m.pointer_uses, which such a model does not
// otherwise keep.
void mark_unpooled_reads_beside_output(TraceModel& m, const std::vector<bool>& aggregate);

}  // namespace tbdprof::tagger
