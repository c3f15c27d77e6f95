// Cuts of pooled activations where a kernel writes a new value into space whose last value was read
// (tagger/pool_tagging.cpp calls it once the first tags are known, and keeps a cut only where its
// parts play different roles; docs/tagging.md, changes 27 and 32).
// Kernels that take their operands in a by-value struct (PyTorch's elementwise and reduction kernels)
// pass every pointer as writable, so a kernel's use of an address does not say whether it wrote it.
// Which word of a function's parameters holds an output does: memory that no earlier work used
// cannot be read, so a word that points there in some launch is where that function's results go.
#pragma once

#include "model.h"
#include "rules.h"
#include "subranges.h"

#include <vector>

namespace tbdprof::tagger {

// Per PointerUse::slot (m.kernel_slots of them): whether some launch's pointer in that word is the
// first use of its address in the run (memory nothing has used holds no value to read: the kernel
// writes it). A word that is read first in every step (a weight's) never is.
std::vector<bool> output_slots(const TraceModel& m);

// Whether `u` reads what its address holds, as far as the trace tells: a pointer to const, a library
// call's input operand, a copy's source, or a kernel word that never starts a value (an input).
bool reads_value(const TraceModel& m, const std::vector<bool>& outputs, const PointerUse& u);

// Whether `u` writes a new value where `previous`, the address's use just before it by other work,
// read the value there (reads_value): a plain kernel outside a library call writes the address
// through an output slot, not a pointer to const, and through no other word of its parameters.
bool rewrites_read_value(const TraceModel& m, const std::vector<bool>& outputs, const PointerUse& previous,
                         const PointerUse& u);

// Where the tensor whose pointer uses are `uses` (indices into m.pointer_uses; those at its start
// decide) holds a new value: a plain kernel outside the update writes the start through an output
// slot, and through no other word (not in place), right after other work read it (a pointer to
// const, a library call's input, a copy's source, or a kernel word that never starts a value). The
// work items to cut at, in launch order; empty for none.
std::vector<uint32_t> rewrite_cuts(const TraceModel& m, const TagResult& r, const std::vector<bool>& outputs,
                                   const std::vector<size_t>& uses);

// Sets Allocation::written_only_through_input_words on the tensors of `v` (with_subranges(m, set,
// virtual_index)) that some plain kernel writes as far as the flow knows (dataflow.h: a non-const
// pointer) while every such kernel held the tensor's pointers only in words that never start a value
// (set.output_words). PyTorch's elementwise kernels take a struct whose unused words keep what the
// host's stack held (the batch's address from an earlier launch): such a word is no write.
void mark_input_word_writes(const TraceModel& m, const SubRangeSet& set, const std::vector<int32_t>& virtual_index,
                            TraceModel& v);

}  // namespace tbdprof::tagger
