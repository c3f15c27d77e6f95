// The operands of library calls beyond a, b, c and the workspace (the trace's library_call_operands:
// a cuBLASLt matmul's bias and aux buffers, batch norm's scale, shift and statistics, an RNN's
// reserve space and states). Each is a touch of every kernel the call launched, with the direction
// the call's documentation gives it, so data flow sees the bias a matmul reads and the reserve space
// a forward RNN writes and its backward reads.
#pragma once

#include "id_index.h"
#include "model.h"

#include <unordered_map>

namespace tbdprof::trace {
class Database;
}

namespace tbdprof::tagger {

// Adds the operands to the touches (and, in pooled traces, the pointer uses) of the library kernels
// in model.work. Call after the kernels are loaded and their a/b/c/workspace touches set, before
// other work is appended. `alloc_index`: allocations.id -> index in the model; `call_index`:
// library_calls.id -> index in model.library_calls. Older traces (no such table) add nothing.
void add_library_operand_touches(const trace::Database& db, const std::unordered_map<int64_t, int32_t>& alloc_index,
                                 const IdIndex& call_index, TraceModel& model);

}  // namespace tbdprof::tagger
