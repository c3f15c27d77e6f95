// Library calls whose operands the trace does not know. cuDNN's backend API (cudnnBackendExecute,
// which PyTorch's convolutions go through on a real GPU) passes its tensors in a variant pack the
// collector does not decode: the call is recorded with no a, b, c or workspace and no
// library_call_operands rows. Its kernels' own argument edges are then the only evidence of what the
// convolution reads and writes (the batch, the weights, the outputs), and dropping them in favour of
// the call's (empty) roles leaves those tensors touched by nothing there.
#pragma once

#include "id_index.h"
#include "model.h"

#include <vector>

namespace tbdprof::trace {
class Database;
}

namespace tbdprof::tagger {

// Detaches from their call the kernels launched inside a library call that has no operand the trace
// resolved (no a, b, c, workspace, no library_call_operands row) and is no collective: they become
// plain kernels whose argument edges (loaded afterwards) are their touches and pointer uses. Call
// after the kernels and NCCL groups are resolved, before the kernel edges are loaded. Returns, per
// work item so far, whether it was detached; all false when the trace's library calls are
// unresolved (older traces keep library kernels' edges anyway).
std::vector<bool> detach_kernels_of_opaque_calls(const trace::Database& db, const IdIndex& call_index,
                                                 bool calls_resolved, TraceModel& model);

// Drops the pointer uses of detached kernels (`detached`, per work item, before the work is sorted)
// at an address (allocation and offset) no other work uses: the call's own scratch, handed to it in
// the variant pack (cuDNN transposes its operands there), not a tensor the program made. Such a
// start inside a tensor the rest of the run shows would cut that tensor short (the extent runs to
// the next start in use). The touches stay: data flow still sees the allocation used.
void drop_opaque_only_pointer_uses(const std::vector<bool>& detached, TraceModel& model);

}  // namespace tbdprof::tagger
