// Reads that a kernel's writable pointer words still show: the value a buffer held, taken by a kernel
// that writes its result elsewhere. Autocast copies every FP32 weight into a BF16 tensor for the
// step's GEMMs and convolutions, first thing each step, in an elementwise kernel whose pointers sit
// in one by-value struct, every word writable (docs/tagging.md, change 38). Internal to the tagger
// (subranges.cpp, the derivation of tensors; dataflow.cpp, through Touch::reads_first).
#pragma once

#include "model.h"
#include "subranges.h"

#include <cstdint>
#include <vector>

namespace tbdprof::tagger {

// Per work item of `m`: whether it is a plain kernel holding some pointer in an output word
// (`outputs`: output_slots.h, a word that in some launch points at memory nothing used before).
std::vector<bool> output_word_writers(const TraceModel& m, const std::vector<bool>& outputs);

// Per work item: whether it writes through an output word (output_word_writers), and whether it is
// a plain kernel launched in a step after that step's last product call (a GEMM, a convolution):
// where the update runs.
struct CarriedReads {
    std::vector<bool> writers;
    std::vector<bool> after_products;
};

// `step`: per work item of `m`, its step, -1 outside the steps.
CarriedReads carried_reads(const TraceModel& m, const std::vector<bool>& outputs, const std::vector<int>& step);

// Whether `u`, the first use of an address in a later step than `previous` (the last use before),
// reads the value of the tensor whose first use is `first` rather than starting a new one: `u` and
// `first` read it beside an output (reads_beside_output: autocast's copy of a weight for the step's
// products, first thing in every step), and `previous` is a plain kernel after its step's last
// product call (the update wrote the weight last). A step's output placed where the step before
// left one (a max pooling's result, its word never seen starting a value) was last used by
// forward or backward work, not after the products.
bool carried_over(const TraceModel& m, const std::vector<bool>& outputs, const CarriedReads& carried,
                  const PointerUse& first, const PointerUse& previous, const PointerUse& u);

// Whether `u` certainly reads the value at its address although its word is writable: a plain
// kernel holds it in one word that never starts a value while the same launch writes through an
// output word (a conversion: source in one word, result in another). A kernel whose only word is
// not known as an output (a fill into reused space, a foreach update in place) proves nothing.
bool reads_beside_output(const TraceModel& m, const std::vector<bool>& outputs, const std::vector<bool>& writers,
                         const PointerUse& u);

// Sets Touch::reads_first on the touches of `v` (with_subranges(m, set, virtual_index)) whose
// pointer uses in `m` are all reads_beside_output.
void mark_reads_beside_output(const TraceModel& m, const SubRangeSet& set, const std::vector<int32_t>& virtual_index,
                              TraceModel& v);

}  // namespace tbdprof::tagger
