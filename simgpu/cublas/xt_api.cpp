// cublasXt: the handle, its settings (devices, block size, pinning, CPU ratio and routines), stored and
// returned as documented, and run_xt_routine, which runs the generated Xt routines (routines_api.cpp)
// on one internal cuBLAS handle and returns once the result is in place, as cublasXt calls do. The
// simulated Xt does not tile the problem over several GPUs or the CPU, nor time the host-device
// copies of host-resident operands: each call is one kernel on the current device, timed as the
// routine's roofline (docs/simgpu-cublas-cupti.md).
#include <cublasXt.h>

#include <new>
#include <vector>

#include "handle.h"
#include "routine.h"

#define TBDSIM_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

// cublasXtOpType_t has no count enumerator: FLOAT, DOUBLE, COMPLEX, DOUBLECOMPLEX.
constexpr int kXtOpTypes = CUBLASXT_DOUBLECOMPLEX + 1;

struct cublasXtContext {
    cublasHandle_t blas = nullptr;  // created on the first routine call
    std::vector<int> devices;
    int block_dim = 1024;  // the documented default tile size
    cublasXtPinnedMemMode_t pinning = CUBLASXT_PINNING_DISABLED;
    float cpu_ratio[CUBLASXT_ROUTINE_MAX][kXtOpTypes] = {};
    void* cpu_routine[CUBLASXT_ROUTINE_MAX][kXtOpTypes] = {};
};

namespace {
// The simulated machine is one board; cublasXt counts the GPUs of one board as one.
constexpr int kMaxBoards = 1;

bool valid_op(cublasXtBlasOp_t op, cublasXtOpType_t type) {
    return op >= 0 && op < CUBLASXT_ROUTINE_MAX && type >= 0 && type < kXtOpTypes;
}
}  // namespace

namespace tbdsim::cublas {

cublasStatus_t run_xt_routine(void* xt_handle, Family family, Elem elem, RoutineArgs args) {
    auto* xt = static_cast<cublasXtContext*>(xt_handle);
    if (xt == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (xt->blas == nullptr) {
        if (const cublasStatus_t status = cublasCreate_v2(&xt->blas); status != CUBLAS_STATUS_SUCCESS) return status;
    }
    args.handle = xt->blas;
    if (const cublasStatus_t status = run_routine(family, elem, args); status != CUBLAS_STATUS_SUCCESS) return status;
    return xt->blas->driver->stream_synchronize(xt->blas->stream) == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS
                                                                                  : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // namespace tbdsim::cublas

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtCreate(cublasXtHandle_t* handle) {
    if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new (std::nothrow) cublasXtContext{};
    return *handle != nullptr ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtDestroy(cublasXtHandle_t handle) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (handle->blas != nullptr) cublasDestroy_v2(handle->blas);
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtGetNumBoards(int nbDevices, int deviceId[], int* nbBoards) {
    if (nbDevices < 0 || (nbDevices > 0 && deviceId == nullptr) || nbBoards == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
    *nbBoards = nbDevices > 0 ? kMaxBoards : 0;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtMaxBoards(int* nbGpuBoards) {
    if (nbGpuBoards == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *nbGpuBoards = kMaxBoards;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtDeviceSelect(cublasXtHandle_t handle, int nbDevices, int deviceId[]) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (nbDevices <= 0 || deviceId == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    handle->devices.assign(deviceId, deviceId + nbDevices);
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtSetBlockDim(cublasXtHandle_t handle, int blockDim) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (blockDim <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    handle->block_dim = blockDim;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtGetBlockDim(cublasXtHandle_t handle, int* blockDim) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (blockDim == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *blockDim = handle->block_dim;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtGetPinningMemMode(cublasXtHandle_t handle, cublasXtPinnedMemMode_t* mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pinning;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtSetPinningMemMode(cublasXtHandle_t handle, cublasXtPinnedMemMode_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLASXT_PINNING_DISABLED && mode != CUBLASXT_PINNING_ENABLED) return CUBLAS_STATUS_INVALID_VALUE;
    handle->pinning = mode;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtSetCpuRoutine(cublasXtHandle_t handle, cublasXtBlasOp_t blasOp,
                                                          cublasXtOpType_t type, void* blasFunctor) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!valid_op(blasOp, type)) return CUBLAS_STATUS_INVALID_VALUE;
    handle->cpu_routine[blasOp][type] = blasFunctor;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasXtSetCpuRatio(cublasXtHandle_t handle, cublasXtBlasOp_t blasOp,
                                                        cublasXtOpType_t type, float ratio) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!valid_op(blasOp, type) || ratio < 0 || ratio > 1) return CUBLAS_STATUS_INVALID_VALUE;
    handle->cpu_ratio[blasOp][type] = ratio;
    return CUBLAS_STATUS_SUCCESS;
}
