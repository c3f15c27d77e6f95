// A library call's operands beyond a, b, c and the workspace (raw::RawLibraryOperand records): the
// library_call_operands rows, joined to their call by thread and begin time.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "raw_process.h"
#include "tbdprof/trace/trace_model.h"

namespace tbdprof::trace::detail {

// The library_calls id of each call of one process, by (thread id, raw begin_ns).
using LibraryCallKeys = std::map<std::pair<uint32_t, uint64_t>, int64_t>;

// Appends the rows of one process's operand records to `out`; a record whose call was not written
// (a failed or uncaptured call, a lost record) is dropped.
void add_library_operands(const RawProcess& raw, int64_t process, const LibraryCallKeys& calls,
                          std::vector<LibraryOperandRow>& out);

}  // namespace tbdprof::trace::detail
