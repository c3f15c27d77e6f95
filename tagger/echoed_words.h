// Pointer words that echo an operand's address without being an operand (docs/tagging.md, change 46).
// A kernel that takes its operands in a by-value struct (PyTorch's TensorIterator kernels) leaves the
// struct's unused words holding whatever the host's stack held: often an address an earlier launch
// passed. When that address is the one this launch writes, the launch seems to take its output in two
// words, which is how an operation in place looks (output_slots.h: neither a new value nor a read),
// and the space's earlier tensor is joined with the new one. Internal to the tagger (model.cpp calls
// it once a pooled trace's pointer uses are known).
#pragma once

#include "model.h"

namespace tbdprof::tagger {

// For every plain kernel's pointer use held in several words (PointerUse::slot == kSeveralSlots), drops
// the words that hold a pointer in only some launches of the function when another word holding the
// same pointer does so in every launch: an operand's word holds its tensor's address in every launch;
// a word that does only now and then is one the kernel leaves unfilled. A use left with one word
// takes that word's slot. Nothing else changes: the use, its access and its work stay. Pooled models
// only (the sub-ranges' evidence); a model without pointer uses is left as it is.
void drop_echoed_words(TraceModel& m);

}  // namespace tbdprof::tagger
