// Group calls and the execution of operations. Outside a group an operation runs at once; inside
// (ncclGroupStart ... ncclGroupEnd, nestable) operations wait for the outermost ncclGroupEnd, which
// first posts every operation's arrival for all communicators and only then waits for the peers, so
// one thread may drive several ranks (ncclCommInitAll) and paired sends and receives cannot block
// each other. A communicator's operations of one group become one kernel, as in NCCL.
#pragma once

#include <nccl.h>

#include <cuda.h>

#include "model.h"

namespace tbdsim::nccl {

struct PendingOp {
    Operation op = Operation::AllReduce;
    const void* sendbuff = nullptr;
    void* recvbuff = nullptr;
    size_t count = 0;
    ncclDataType_t type = ncclFloat32;
    ncclRedOp_t redop = ncclSum;
    int root = 0;  // Broadcast and Reduce
    int peer = 0;  // Send and Recv
    ncclComm* comm = nullptr;
    CUstream stream = nullptr;
};

bool in_group();
ncclResult_t enqueue(const PendingOp& op);
void defer_join(ncclComm* comm);  // ncclCommInitRank inside a group

}  // namespace tbdsim::nccl
