// NCCL calls recorded as library calls (raw LibraryOp::Nccl*, packed as raw_format.h describes):
// their library_calls.op and their nccl_calls row.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "raw_process.h"
#include "tbdprof/raw_format.h"
#include "tbdprof/trace/trace_model.h"

namespace tbdprof::trace::detail {

bool is_nccl_op(raw::LibraryOp op);
std::string_view nccl_library_op(raw::LibraryOp op);  // 'nccl_all_reduce', ..., 'nccl_group_end'
// The nccl_calls row of a communication call; none for ncclGroupEnd and other libraries' calls.
// `comms`: the process's communicator creations, which give the call's communicator its identity
// (the latest creation of its handle before the call).
std::optional<NcclCallRow> nccl_call_row(int64_t library_call, int64_t process, const raw::RawLibraryCall& c,
                                         const std::vector<Event<raw::RawNcclComm>>& comms);

}  // namespace tbdprof::trace::detail
