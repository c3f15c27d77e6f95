// cublasLtCreate / cublasLtDestroy. Creation binds the handle to the current context (device 0's
// primary context when none is current, as the runtime inside the real library would) and loads the
// kernels there.
#include "handle.h"

#include <new>

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void release_resources(cublasLtContext& handle) {
    if (handle.module != nullptr) handle.driver->module_unload(handle.module);
    tbdsim::blas::release_bound_context(*handle.driver, handle.bound);
}

}  // namespace

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t* out) {
    if (out == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *out = nullptr;
    const tbdsim::blas::DriverEntryPoints* driver = tbdsim::blas::driver_entry_points();
    if (driver == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;

    auto* handle = new (std::nothrow) cublasLtContext{};
    if (handle == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
    handle->driver = driver;
    if (!tbdsim::blas::bind_current_context(*driver, &handle->bound) ||
        tbdsim::blas::load_kernels(*driver, &handle->module, &handle->kernels) != CUDA_SUCCESS) {
        release_resources(*handle);
        delete handle;
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    *out = handle;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    release_resources(*handle);
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}
