// Version, error texts, memory helpers, buffer registration and user reduction operators.
#include <nccl.h>

#include <atomic>
#include <string>

#include "bound_context.h"
#include "comm.h"
#include "driver_link.h"
#include "model.h"
#include "profiling_alias.h"
#include "reduce.h"

namespace tbdsim::nccl {
const std::string& last_error();
}  // namespace tbdsim::nccl

using namespace tbdsim::nccl;

// The nccl.h entry points: exported (the library builds with hidden visibility).
#pragma GCC visibility push(default)
extern "C" {

ncclResult_t ncclGetVersion(int* version) {
    if (version == nullptr) return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;  // the header this library implements
    return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
    switch (result) {
        case ncclSuccess:
            return "no error";
        case ncclUnhandledCudaError:
            return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
        case ncclSystemError:
            return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
        case ncclInternalError:
            return "internal error - please report this issue to the NCCL developers";
        case ncclInvalidArgument:
            return "invalid argument (run with NCCL_DEBUG=WARN for details)";
        case ncclInvalidUsage:
            return "invalid usage (run with NCCL_DEBUG=WARN for details)";
        case ncclRemoteError:
            return "remote process exited or there was a network error";
        case ncclInProgress:
            return "NCCL operation in progress";
        default:
            return "unknown result code";
    }
}

const char* ncclGetLastError(ncclComm_t) {
    return last_error().c_str();
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
    const Driver* d = driver();
    if (ptr == nullptr) return ncclInvalidArgument;
    if (d == nullptr) return ncclUnhandledCudaError;
    // As the runtime inside the real library: no current context -> device 0's primary one.
    tbdsim::blas::BoundContext bound;
    if (!tbdsim::blas::bind_current_context(*d->base, &bound)) return ncclUnhandledCudaError;
    CUdeviceptr address = 0;
    if (d->base->mem_alloc(&address, size) != CUDA_SUCCESS) return ncclUnhandledCudaError;
    *ptr = reinterpret_cast<void*>(address);
    return ncclSuccess;
}

ncclResult_t ncclMemFree(void* ptr) {
    const Driver* d = driver();
    if (d == nullptr) return ncclUnhandledCudaError;
    return d->base->mem_free(reinterpret_cast<CUdeviceptr>(ptr)) == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError;
}

// Registration only speeds the real library up; the simulated one needs no handle's contents.
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t, void** handle) {
    if (comm == nullptr || handle == nullptr) return ncclInvalidArgument;
    *handle = buff;
    return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void*) {
    return comm != nullptr ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t type,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
    static std::atomic<int> next{ncclNumOps};
    if (op == nullptr || scalar == nullptr || comm == nullptr || type_size_bytes(type) == 0) return ncclInvalidArgument;
    *op = static_cast<ncclRedOp_t>(next.fetch_add(1));
    register_pre_mul_sum(*op, scalar, type, residence);
    return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
    if (comm == nullptr || int(op) < int(ncclNumOps)) return ncclInvalidArgument;
    forget_pre_mul_sum(op);
    return ncclSuccess;
}

}  // extern "C"
#pragma GCC visibility pop

TBDSIM_NCCL_PROFILING_ALIAS(ncclGetVersion)
TBDSIM_NCCL_PROFILING_ALIAS(ncclGetErrorString)
TBDSIM_NCCL_PROFILING_ALIAS(ncclGetLastError)
TBDSIM_NCCL_PROFILING_ALIAS(ncclMemAlloc)
TBDSIM_NCCL_PROFILING_ALIAS(ncclMemFree)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommRegister)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommDeregister)
TBDSIM_NCCL_PROFILING_ALIAS(ncclRedOpCreatePreMulSum)
TBDSIM_NCCL_PROFILING_ALIAS(ncclRedOpDestroy)
