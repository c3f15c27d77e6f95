// Version queries and status names: the parts of cuBLAS that need no handle state.
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include "library_info.h"

#define TBDSIM_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int* version) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (version == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
    return tbdsim::blas::library_property(type, value);
}

// The runtime version this cuBLAS was built against.
TBDSIM_CUBLAS_EXPORT size_t cublasGetCudartVersion(void) { return CUDART_VERSION; }

TBDSIM_CUBLAS_EXPORT const char* cublasGetStatusName(cublasStatus_t status) {
    return tbdsim::blas::status_name(status);
}

TBDSIM_CUBLAS_EXPORT const char* cublasGetStatusString(cublasStatus_t status) {
    return tbdsim::blas::status_string(status);
}
