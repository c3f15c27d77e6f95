// NCCL's communication calls as library calls (library_call.h): operation, buffers and their bytes,
// count, data type, reduction, root or peer, communicator, its rank and size, stream; the kernels the
// call launches are attached through the launch sequence numbers, as for cuBLAS. ncclGroupEnd is
// recorded too: the kernels of grouped calls are launched inside it. The facts are packed into
// RawLibraryCall as raw_format.h describes (LibraryOp::Nccl*). Real functions come from
// dlsym(RTLD_NEXT), or from a dlsym we intercepted (a program or framework that dlopens NCCL).
#include <nccl.h>

#include <cstring>

#include "library_call.h"
#include "nccl_comm.h"

namespace tbdprof::preload {
namespace {

using RankQueryFn = ncclResult_t (*)(const ncclComm_t, int*);

LibraryFunction<decltype(&ncclAllReduce)> real_all_reduce{"ncclAllReduce"};
LibraryFunction<decltype(&ncclReduceScatter)> real_reduce_scatter{"ncclReduceScatter"};
LibraryFunction<decltype(&ncclAllGather)> real_all_gather{"ncclAllGather"};
LibraryFunction<decltype(&ncclBroadcast)> real_broadcast{"ncclBroadcast"};
LibraryFunction<decltype(&ncclBcast)> real_bcast{"ncclBcast"};
LibraryFunction<decltype(&ncclReduce)> real_reduce{"ncclReduce"};
LibraryFunction<decltype(&ncclSend)> real_send{"ncclSend"};
LibraryFunction<decltype(&ncclRecv)> real_recv{"ncclRecv"};
LibraryFunction<decltype(&ncclGroupEnd)> real_group_end{"ncclGroupEnd"};
LibraryFunction<RankQueryFn> real_user_rank{"ncclCommUserRank"};
LibraryFunction<RankQueryFn> real_count{"ncclCommCount"};

uint64_t type_bytes(ncclDataType_t type) {
    switch (type) {
        case ncclInt8:
        case ncclUint8:
        case ncclFloat8e4m3:
        case ncclFloat8e5m2:
            return 1;
        case ncclFloat16:
        case ncclBfloat16:
            return 2;
        case ncclInt32:
        case ncclUint32:
        case ncclFloat32:
            return 4;
        case ncclInt64:
        case ncclUint64:
        case ncclFloat64:
            return 8;
        default:
            return 0;
    }
}

// ncclCommUserRank / ncclCommCount of the library that served the call: by name first, else from
// the same file as the real collective (a library dlopen'ed with RTLD_LOCAL is not in RTLD_NEXT).
int comm_query(LibraryFunction<RankQueryFn>& query, const void* served_by, ncclComm_t comm) {
    RankQueryFn fn = query.get();
    if (fn == nullptr && served_by != nullptr) {
        Dl_info info{};
        if (dladdr(served_by, &info) != 0 && info.dli_fname != nullptr) {
            if (void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD); handle != nullptr) {
                query.remember(real_dlsym(handle, query.name));
                dlclose(handle);
                fn = query.get();
            }
        }
    }
    int value = -1;
    if (fn == nullptr || comm == nullptr || fn(comm, &value) != ncclSuccess) return -1;
    return value;
}

struct NcclCall {
    const char* name;
    raw::LibraryOp op;
    const void* send;
    const void* recv;
    size_t count;
    ncclDataType_t type;
    int redop;  // -1: none
    int root_or_peer;
    ncclComm_t comm;
    cudaStream_t stream;
};

// The send and receive buffer extents, in the call's own terms (count is per rank, AllGather's
// receive and ReduceScatter's send buffers hold nranks of it).
void buffer_bytes(const NcclCall& c, int nranks, uint64_t* send, uint64_t* recv) {
    const uint64_t bytes = c.count * type_bytes(c.type);
    const uint64_t all = nranks > 0 ? bytes * uint64_t(nranks) : 0;
    *send = c.send != nullptr ? (c.op == raw::LibraryOp::NcclReduceScatter ? all : bytes) : 0;
    *recv = c.recv != nullptr ? (c.op == raw::LibraryOp::NcclAllGather ? all : bytes) : 0;
}

// REAL is the library function that serves the call: its library answers the rank queries.
template <typename Real, typename Call>
ncclResult_t record_nccl(const NcclCall& c, Real* real, Call&& call) {
    const void* served_by = reinterpret_cast<const void*>(real);
    return record_library_call(call, [&](ThreadState& thread, raw::RawLibraryCall& record) {
        record.name_string = collector::intern_string(thread, c.name);
        record.op = c.op;
        record.stream = reinterpret_cast<uint64_t>(c.stream);
        record.a = reinterpret_cast<uint64_t>(c.send);
        record.c = reinterpret_cast<uint64_t>(c.recv);
        record.workspace = reinterpret_cast<uint64_t>(c.comm);
        const int nranks = comm_query(real_count, served_by, c.comm);
        record.n = nranks;
        record.k = comm_query(real_user_rank, served_by, c.comm);
        record.m = static_cast<int64_t>(c.count);
        record.batch = c.root_or_peer;
        record.a_type = static_cast<uint8_t>(c.type);
        record.compute_type = c.redop < 0 ? 0 : static_cast<uint8_t>(c.redop < int(ncclNumOps) ? c.redop : 255);
        buffer_bytes(c, nranks, &record.a_bytes, &record.c_bytes);
    });
}

}  // namespace

int nccl_comm_rank(const void* served_by, ncclComm_t comm) {
    return comm_query(real_user_rank, served_by, comm);
}
int nccl_comm_count(const void* served_by, ncclComm_t comm) {
    return comm_query(real_count, served_by, comm);
}

}  // namespace tbdprof::preload

using tbdprof::preload::NcclCall;
using tbdprof::preload::record_nccl;
namespace nccl_hooks = tbdprof::preload;
using Op = tbdprof::raw::LibraryOp;

extern "C" TBD_VISIBLE ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    auto real = nccl_hooks::real_all_reduce.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclAllReduce", Op::NcclAllReduce, send, recv, count, type, int(op), -1, comm, stream};
    return record_nccl(c, real, [&] { return real(send, recv, count, type, op, comm, stream); });
}

extern "C" TBD_VISIBLE ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t type,
                                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    auto real = nccl_hooks::real_reduce_scatter.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclReduceScatter", Op::NcclReduceScatter, send, recv, count, type, int(op), -1, comm, stream};
    return record_nccl(c, real, [&] { return real(send, recv, count, type, op, comm, stream); });
}

extern "C" TBD_VISIBLE ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type,
                                                  ncclComm_t comm, cudaStream_t stream) {
    auto real = nccl_hooks::real_all_gather.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclAllGather", Op::NcclAllGather, send, recv, count, type, -1, -1, comm, stream};
    return record_nccl(c, real, [&] { return real(send, recv, count, type, comm, stream); });
}

extern "C" TBD_VISIBLE ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type,
                                                  int root, ncclComm_t comm, cudaStream_t stream) {
    auto real = nccl_hooks::real_broadcast.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclBroadcast", Op::NcclBroadcast, send, recv, count, type, -1, root, comm, stream};
    return record_nccl(c, real, [&] { return real(send, recv, count, type, root, comm, stream); });
}

extern "C" TBD_VISIBLE ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                              cudaStream_t stream) {
    auto real = nccl_hooks::real_bcast.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclBcast", Op::NcclBroadcast, buff, buff, count, type, -1, root, comm, stream};
    return record_nccl(c, real, [&] { return real(buff, count, type, root, comm, stream); });
}

extern "C" TBD_VISIBLE ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
    auto real = nccl_hooks::real_reduce.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclReduce", Op::NcclReduce, send, recv, count, type, int(op), root, comm, stream};
    return record_nccl(c, real, [&] { return real(send, recv, count, type, op, root, comm, stream); });
}

extern "C" TBD_VISIBLE ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer,
                                             ncclComm_t comm, cudaStream_t stream) {
    auto real = nccl_hooks::real_send.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclSend", Op::NcclSend, send, nullptr, count, type, -1, peer, comm, stream};
    return record_nccl(c, real, [&] { return real(send, count, type, peer, comm, stream); });
}

extern "C" TBD_VISIBLE ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                             cudaStream_t stream) {
    auto real = nccl_hooks::real_recv.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclRecv", Op::NcclRecv, nullptr, recv, count, type, -1, peer, comm, stream};
    return record_nccl(c, real, [&] { return real(recv, count, type, peer, comm, stream); });
}

extern "C" TBD_VISIBLE ncclResult_t ncclGroupEnd() {
    auto real = nccl_hooks::real_group_end.get();
    if (real == nullptr) return ncclSystemError;
    const NcclCall c{"ncclGroupEnd", Op::NcclGroupEnd, nullptr, nullptr, 0, ncclInt8, -1, -1, nullptr, nullptr};
    return record_nccl(c, real, [&] { return real(); });
}

namespace tbdprof::preload {

void* substitute_nccl_symbol(const char* name, void* result) {
    if (std::strncmp(name, "nccl", 4) != 0 || result == nullptr) return nullptr;
    if (void* comm = substitute_nccl_comm_symbol(name, result); comm != nullptr) return comm;
    auto take = [&](auto& real, auto ours) -> void* { return substitute_library_function(real, ours, result); };
    if (std::strcmp(name, "ncclAllReduce") == 0) return take(real_all_reduce, &ncclAllReduce);
    if (std::strcmp(name, "ncclReduceScatter") == 0) return take(real_reduce_scatter, &ncclReduceScatter);
    if (std::strcmp(name, "ncclAllGather") == 0) return take(real_all_gather, &ncclAllGather);
    if (std::strcmp(name, "ncclBroadcast") == 0) return take(real_broadcast, &ncclBroadcast);
    if (std::strcmp(name, "ncclBcast") == 0) return take(real_bcast, &ncclBcast);
    if (std::strcmp(name, "ncclReduce") == 0) return take(real_reduce, &ncclReduce);
    if (std::strcmp(name, "ncclSend") == 0) return take(real_send, &ncclSend);
    if (std::strcmp(name, "ncclRecv") == 0) return take(real_recv, &ncclRecv);
    if (std::strcmp(name, "ncclGroupEnd") == 0) return take(real_group_end, &ncclGroupEnd);
    if (std::strcmp(name, "ncclCommUserRank") == 0) real_user_rank.remember(result);
    if (std::strcmp(name, "ncclCommCount") == 0) real_count.remember(result);
    return nullptr;
}

}  // namespace tbdprof::preload
