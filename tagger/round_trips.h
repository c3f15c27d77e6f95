// Values that leave a tensor for a reduction across ranks and come back into it (tagger/subranges.cpp
// asks before cutting a tensor at a copy that writes it whole). A data-parallel trainer that keeps its
// gradients apart from its communication buffers (DDP by default, Horovod's fusion buffer) copies each
// gradient into a bucket, sums the bucket over the ranks in place and copies the sum back into the
// gradient: the value written back derives from the one the tensor held, through the bucket, so the
// tensor is updated through an intermediary, not replaced by a new one.
#pragma once

#include "model.h"

#include <vector>

namespace tbdprof::tagger {

// Per entry of m.pointer_uses: whether it is a device-to-device copy's write, of a known size, into
// the address X that brings back X's own value: the copy's source S was last written (before the copy,
// in the same step: `step` per work item, -1 outside the steps) by work that also used X, X was not
// written between that work and the copy, and in between an in-place reduction across ranks (an
// all-reduce) covered S's bytes. `order`: the valid pointer uses sorted by allocation, offset, work.
std::vector<bool> returned_values(const TraceModel& m, const std::vector<size_t>& order, const std::vector<int>& step);

}  // namespace tbdprof::tagger
