// Device code of the simulated NCCL: empty bodies (the simulated driver times kernels, it does not
// run them), named as NCCL 2.19+ names its kernels: ncclDevKernel_<Op>[_<Reduction>_<type>]_<ALGO>_<PROTO>,
// and ncclDevKernel_SendRecv. The reductions are NCCL's device-side ones: Sum, Prod, MinMax (ncclMax
// and ncclMin), PreMulSum and SumPostDiv (ncclAvg and ncclRedOpCreatePreMulSum).
#include "kernel_args.h"

#define TBDSIM_K(name) \
    extern "C" __global__ void name(TbdsimNcclArgs) {}
#define TBDSIM_PROTOS(base) TBDSIM_K(base##_LL) TBDSIM_K(base##_LL128) TBDSIM_K(base##_SIMPLE)
#define TBDSIM_RING(base) TBDSIM_PROTOS(base##_RING)
#define TBDSIM_RING_TREE(base) TBDSIM_PROTOS(base##_RING) TBDSIM_PROTOS(base##_TREE)
#define TBDSIM_TYPES(M, base)                                                                              \
    M(base##_i8) M(base##_u8) M(base##_i32) M(base##_u32) M(base##_i64) M(base##_u64) M(base##_f16)   \
    M(base##_f32) M(base##_f64) M(base##_bf16) M(base##_f8e4m3) M(base##_f8e5m2)
#define TBDSIM_REDS(M, base)                                                                  \
    TBDSIM_TYPES(M, base##_Sum) TBDSIM_TYPES(M, base##_Prod) TBDSIM_TYPES(M, base##_MinMax) \
    TBDSIM_TYPES(M, base##_PreMulSum) TBDSIM_TYPES(M, base##_SumPostDiv)

TBDSIM_REDS(TBDSIM_RING_TREE, ncclDevKernel_AllReduce)
TBDSIM_REDS(TBDSIM_RING, ncclDevKernel_ReduceScatter)
TBDSIM_REDS(TBDSIM_RING, ncclDevKernel_Reduce)
TBDSIM_RING(ncclDevKernel_AllGather)
TBDSIM_RING(ncclDevKernel_Broadcast)
TBDSIM_K(ncclDevKernel_SendRecv)
