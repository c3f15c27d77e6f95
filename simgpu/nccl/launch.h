// Launching the simulated NCCL kernels: the module is loaded once per context, each launch runs in
// the communicator's device's context (made current for the call when the caller's is another
// device's) and is annotated as a collective (the driver asks the rendezvous for its end).
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
// Whether `stream` is being captured into a graph (then the collective's launch is only recorded).
bool stream_capturing(const ncclComm& comm, CUstream stream);
// Launches `kernel` as a collective: it starts when `stream` reaches it (not before `arrival_ns`,
// the arrival the rank posted), and inside the launch call the driver asks `resolve_end` for its end
// (which waits for the other ranks).
ncclResult_t launch_collective(const ncclComm& comm, CUstream stream, const std::string& kernel,
                               const TbdsimNcclArgs& args, uint64_t arrival_ns,
                               uint64_t (*resolve_end)(uint64_t start_ns, void* user), void* user);

}  // namespace tbdsim::nccl
