// Launching the simulated NCCL kernels: the module is loaded once per context, each launch runs in
// the communicator's device's context (made current for the call when the caller's is another
// device's) and is annotated to end at the time the rendezvous computed.
#pragma once

#include <nccl.h>

#include <cuda.h>

#include <cstdint>
#include <string>

#include "kernel_args.h"

struct ncclComm;

namespace tbdsim::nccl {

// The device time at which `stream` reaches the next operation of `comm`.
ncclResult_t stream_arrival_ns(const ncclComm& comm, CUstream stream, uint64_t* arrival_ns);
ncclResult_t launch_until(const ncclComm& comm, CUstream stream, const std::string& kernel, const TbdsimNcclArgs& args,
                          uint64_t end_ns);

}  // namespace tbdsim::nccl
