// The communication calls of nccl.h: each checks its arguments as NCCL does and hands the operation
// to the group machinery (group.cpp), which runs it at once outside a group.
#include <nccl.h>

#include "comm.h"
#include "group.h"
#include "profiling_alias.h"

using namespace tbdsim::nccl;

namespace {

ncclResult_t submit(Operation op, const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t redop,
                    int root_or_peer, ncclComm_t comm, cudaStream_t stream) {
    if (comm == nullptr) {
        set_last_error("NULL communicator");
        return ncclInvalidArgument;
    }
    if (type_size_bytes(type) == 0 || (has_reduction(op) && int(redop) < 0)) {
        set_last_error("invalid data type or reduction operator");
        return ncclInvalidArgument;
    }
    const bool rooted =
        op == Operation::Broadcast || op == Operation::Reduce || op == Operation::Send || op == Operation::Recv;
    if (rooted && (root_or_peer < 0 || root_or_peer >= comm->nranks)) {
        set_last_error("root or peer out of range");
        return ncclInvalidArgument;
    }
    if (count > 0 && ((op != Operation::Recv && send == nullptr) || (op != Operation::Send && recv == nullptr))) {
        set_last_error("NULL buffer");
        return ncclInvalidArgument;
    }
    PendingOp pending;
    pending.op = op;
    pending.sendbuff = send;
    pending.recvbuff = recv;
    pending.count = count;
    pending.type = type;
    pending.redop = redop;
    pending.root = op == Operation::Send || op == Operation::Recv ? 0 : root_or_peer;
    pending.peer = op == Operation::Send || op == Operation::Recv ? root_or_peer : 0;
    pending.comm = comm;
    pending.stream = reinterpret_cast<CUstream>(stream);
    return enqueue(pending);
}

}  // namespace

// The nccl.h entry points: exported (the library builds with hidden visibility).
#pragma GCC visibility push(default)
extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
    return submit(Operation::AllReduce, sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    return submit(Operation::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
    return submit(Operation::AllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
    return submit(Operation::Broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
    return submit(Operation::Broadcast, buff, buff, count, datatype, ncclSum, root, comm, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
    return submit(Operation::Reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    return submit(Operation::Send, sendbuff, nullptr, count, datatype, ncclSum, peer, comm, stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    return submit(Operation::Recv, nullptr, recvbuff, count, datatype, ncclSum, peer, comm, stream);
}

}  // extern "C"
#pragma GCC visibility pop

TBDSIM_NCCL_PROFILING_ALIAS(ncclAllReduce)
TBDSIM_NCCL_PROFILING_ALIAS(ncclReduceScatter)
TBDSIM_NCCL_PROFILING_ALIAS(ncclAllGather)
TBDSIM_NCCL_PROFILING_ALIAS(ncclBroadcast)
TBDSIM_NCCL_PROFILING_ALIAS(ncclBcast)
TBDSIM_NCCL_PROFILING_ALIAS(ncclReduce)
TBDSIM_NCCL_PROFILING_ALIAS(ncclSend)
TBDSIM_NCCL_PROFILING_ALIAS(ncclRecv)
