// The one argument of every simulated NCCL kernel (kernels.cu). Plain C. The buffers come first so
// that a profiler reading the parameter words sees which allocations a collective reads and writes.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TbdsimNcclArgs {
    const void* sendbuff;
    void* recvbuff;
    unsigned long long count;
    int datatype, redop, root, peer, rank, nranks;
} TbdsimNcclArgs;

#ifdef __cplusplus
}
#endif
