// Moving the data of collectives and send/receive between the ranks, as NCCL does. Device memory is
// host memory in the simulator, but the ranks may be separate processes: each rank copies what the
// others must read (its send buffer) into a POSIX shared-memory segment of its own per operation,
// before it posts its arrival; once every rank has arrived, each reads the others' segments and
// writes its receive buffer; the last reader removes a segment. The timing model is not involved:
// the data moves on the host inside the NCCL call, which already waits for the other ranks.
#pragma once

#include <nccl.h>

#include <cstdint>

#include "group.h"

namespace tbdsim::nccl {

// Which operation of a communicator: a collective's sequence number and its index among the
// collectives of its group, or a send/receive's sequence number per pair of ranks.
struct OperationKey {
    uint64_t seq = 0;
    int index = 0;
};

// Whether collectives move data: yes unless TBDSIM_NCCL_DATA=0. Moving it costs host time inside
// the call (a real NCCL call returns at once), which delays the caller's later launches; studies of
// overlap timing that need the real library's host behaviour turn it off (docs/simgpu-nccl.md).
bool moves_data();

// Before the arrival is posted: stages this rank's contribution when another rank will read it.
ncclResult_t stage_contribution(const PendingOp& op, OperationKey key);
// After every rank involved has arrived: computes this rank's receive buffer.
ncclResult_t deliver_result(const PendingOp& op, OperationKey key);

}  // namespace tbdsim::nccl
