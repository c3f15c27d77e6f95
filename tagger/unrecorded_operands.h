// Operands a library call did not record (change 51, docs/tagging.md). A call that records its
// operands' extents (cuDNN's variant pack as library_operands rows) gives the sub-ranges its tensors;
// its kernels' own pointers are skipped, their operands taken from the call. A kernel of the call
// that passes a pointer outside every operand the call recorded points at a tensor the call reads
// or writes without a record (under one packed allocation, the third of three slices the kernel
// reads), which otherwise lies in no piece. Such a pointer is kept as a use of its own, of unknown
// size.
#pragma once

#include "model.h"

#include <vector>

namespace tbdprof::tagger {

// A pointer a library call's kernel passed into an allocation (model.cpp's kernel edges).
struct LibraryKernelPointer {
    uint32_t work = 0;  // index into TraceModel::work (the kernel)
    int32_t allocation = kNone;
    uint64_t offset = 0;  // pointer - allocation address
    Access access = Access::Unknown;
};

// Adds to m.pointer_uses each pointer of `pointers` whose call recorded some operand's exact extent
// and that lies inside none of the call's pointer uses of its work item. Call once the call's
// operands are pointer uses (after add_library_operand_touches); pooled traces only.
void add_unrecorded_operands(TraceModel& m, const std::vector<LibraryKernelPointer>& pointers);

}  // namespace tbdprof::tagger
