// Handle lifetime and the per-handle settings (stream, workspace, pointer and math modes).
#include "handle.h"

#include <cstdint>
#include <new>

#define TBDSIM_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using tbdsim::blas::DriverEntryPoints;

void release_resources(cublasContext& handle) {
    const DriverEntryPoints& driver = *handle.driver;
    if (handle.default_workspace != 0) driver.mem_free(handle.default_workspace);
    for (CUdeviceptr own : handle.own_buffers)
        if (own != 0) driver.mem_free(own);
    if (handle.module != nullptr) driver.module_unload(handle.module);
    tbdsim::blas::release_bound_context(driver, handle.bound);
}

// The handle's own memory, allocated through the driver as the real cublasCreate does (the small
// buffers first, the workspace last), sized by the device's architecture (handle.h).
cublasStatus_t allocate_own_memory(cublasContext& handle) {
    const DriverEntryPoints& driver = *handle.driver;
    int major = 0;
    if (driver.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle.bound.device) !=
        CUDA_SUCCESS)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const tbdsim::cublas::HandleAllocations sizes = tbdsim::cublas::handle_allocations(major);
    for (int i = 0; i < 2; ++i)
        if (driver.mem_alloc(&handle.own_buffers[i], sizes.own_bytes[i]) != CUDA_SUCCESS)
            return CUBLAS_STATUS_ALLOC_FAILED;
    if (driver.mem_alloc(&handle.default_workspace, sizes.workspace_bytes) != CUDA_SUCCESS)
        return CUBLAS_STATUS_ALLOC_FAILED;
    handle.default_workspace_bytes = sizes.workspace_bytes;
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t* out) {
    if (out == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *out = nullptr;
    const DriverEntryPoints* driver = tbdsim::blas::driver_entry_points();
    if (driver == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;

    auto* handle = new (std::nothrow) cublasContext{};
    if (handle == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
    handle->driver = driver;
    cublasStatus_t status = tbdsim::blas::bind_current_context(*driver, &handle->bound)
                                ? CUBLAS_STATUS_SUCCESS
                                : CUBLAS_STATUS_NOT_INITIALIZED;
    if (status == CUBLAS_STATUS_SUCCESS &&
        tbdsim::blas::load_kernels(*driver, &handle->module, &handle->kernels) != CUDA_SUCCESS) {
        status = CUBLAS_STATUS_NOT_INITIALIZED;
    }
    if (status == CUBLAS_STATUS_SUCCESS) status = allocate_own_memory(*handle);
    if (status != CUBLAS_STATUS_SUCCESS) {
        release_resources(*handle);
        delete handle;
        return status;
    }
    *out = handle;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    release_resources(*handle);
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = reinterpret_cast<CUstream>(stream);
    // Documented: setting a stream unconditionally returns the handle to its default workspace.
    handle->using_user_workspace = false;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (stream == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *stream = reinterpret_cast<cudaStream_t>(handle->stream);
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace,
                                                          size_t workspace_bytes) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    // The documented requirement: at least 256-byte alignment. A null workspace of size 0 disables it.
    if (reinterpret_cast<std::uintptr_t>(workspace) % 256 != 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (workspace == nullptr && workspace_bytes != 0) return CUBLAS_STATUS_INVALID_VALUE;
    handle->user_workspace = workspace;
    handle->user_workspace_bytes = workspace_bytes;
    handle->using_user_workspace = true;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math_mode;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    // A base mode, optionally combined with the reduced-precision-reduction flag.
    const int base = static_cast<int>(mode) & ~static_cast<int>(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    switch (base) {
        case CUBLAS_DEFAULT_MATH:
        case CUBLAS_TENSOR_OP_MATH:
        case CUBLAS_PEDANTIC_MATH:
        case CUBLAS_TF32_TENSOR_OP_MATH:
        case CUBLAS_FP32_EMULATED_BF16X9_MATH:
        case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH: break;
        default: return CUBLAS_STATUS_INVALID_VALUE;
    }
    handle->math_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t* mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->atomics_mode;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_ATOMICS_NOT_ALLOWED && mode != CUBLAS_ATOMICS_ALLOWED) return CUBLAS_STATUS_INVALID_VALUE;
    handle->atomics_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}
