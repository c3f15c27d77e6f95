// The simulated NCCL's lines in the ground-truth file (TBDSIM_TRUTH, format in docs/simgpu-nccl.md):
// one `nccl_comm` line per communicator a rank creates, one `nccl` line per operation.
#pragma once

#include <cstdint>
#include <string>

struct ncclComm;

namespace tbdsim::nccl {

struct PendingOp;

void truth_write_comm(const ncclComm& comm);
void truth_write_op(const PendingOp& op, const std::string& kernel, uint64_t arrival_ns, uint64_t end_ns);

}  // namespace tbdsim::nccl
