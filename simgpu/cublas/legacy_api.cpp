// The legacy cuBLAS API's management functions (cublas.h): initialization, the library's implicit
// stream, device allocations and the sticky error. The legacy routines themselves (cublasSgemm without
// a handle...) stay the generated stubs; their _v2 twins are modelled.
#include <cublas.h>

#include <mutex>

#include "driver_entry_points.h"
#include "handle.h"

#define TBDSIM_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct LegacyState {
    std::mutex mutex;
    cublasHandle_t handle = nullptr;  // created by cublasInit
    cublasStatus_t last_error = CUBLAS_STATUS_SUCCESS;
};

LegacyState& legacy() {
    static LegacyState* state = new LegacyState;  // never destroyed: usable from exit handlers
    return *state;
}

cublasStatus_t remember(cublasStatus_t status) {
    if (status != CUBLAS_STATUS_SUCCESS) legacy().last_error = status;
    return status;
}

}  // namespace

TBDSIM_CUBLAS_EXPORT cublasStatus cublasInit(void) {
    LegacyState& state = legacy();
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.handle != nullptr) return CUBLAS_STATUS_SUCCESS;
    return remember(cublasCreate_v2(&state.handle));
}

TBDSIM_CUBLAS_EXPORT cublasStatus cublasShutdown(void) {
    LegacyState& state = legacy();
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = cublasDestroy_v2(state.handle);
    state.handle = nullptr;
    return status;
}

// Returns the last error of the legacy API and resets it, as documented.
TBDSIM_CUBLAS_EXPORT cublasStatus cublasGetError(void) {
    LegacyState& state = legacy();
    std::lock_guard<std::mutex> lock(state.mutex);
    const cublasStatus_t status = state.last_error;
    state.last_error = CUBLAS_STATUS_SUCCESS;
    return status;
}

TBDSIM_CUBLAS_EXPORT cublasStatus cublasSetKernelStream(cudaStream_t stream) {
    LegacyState& state = legacy();
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.handle == nullptr) return remember(CUBLAS_STATUS_NOT_INITIALIZED);
    return remember(cublasSetStream_v2(state.handle, stream));
}

TBDSIM_CUBLAS_EXPORT cublasStatus cublasAlloc(int n, int elemSize, void** devicePtr) {
    if (devicePtr == nullptr || n <= 0 || elemSize <= 0) return remember(CUBLAS_STATUS_INVALID_VALUE);
    const tbdsim::blas::DriverEntryPoints* driver = tbdsim::blas::driver_entry_points();
    if (driver == nullptr) return remember(CUBLAS_STATUS_NOT_INITIALIZED);
    CUdeviceptr address = 0;
    if (driver->mem_alloc(&address, static_cast<size_t>(n) * static_cast<size_t>(elemSize)) != CUDA_SUCCESS)
        return remember(CUBLAS_STATUS_ALLOC_FAILED);
    *devicePtr = reinterpret_cast<void*>(address);
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus cublasFree(void* devicePtr) {
    const tbdsim::blas::DriverEntryPoints* driver = tbdsim::blas::driver_entry_points();
    if (driver == nullptr) return remember(CUBLAS_STATUS_NOT_INITIALIZED);
    if (devicePtr == nullptr) return CUBLAS_STATUS_SUCCESS;
    return driver->mem_free(reinterpret_cast<CUdeviceptr>(devicePtr)) == CUDA_SUCCESS
               ? CUBLAS_STATUS_SUCCESS
               : remember(CUBLAS_STATUS_INTERNAL_ERROR);
}
