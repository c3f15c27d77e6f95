// What the NCCL hooks share (nccl_hooks.cpp, nccl_comm_hooks.cpp): asking a communicator its rank and
// size through the library that served a call, and handing out the communicator-creating wrappers.
#pragma once

#include <nccl.h>

namespace tbdprof::preload {

// ncclCommUserRank / ncclCommCount of `comm`, through the library holding `served_by` when they are
// not found by name; -1 when they cannot be asked.
int nccl_comm_rank(const void* served_by, ncclComm_t comm);
int nccl_comm_count(const void* served_by, ncclComm_t comm);

// A dlsym result for a communicator-creating entry point: our wrapper; null for other names.
void* substitute_nccl_comm_symbol(const char* name, void* result);

}  // namespace tbdprof::preload
