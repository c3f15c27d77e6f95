// Version queries and status names: the parts of cuBLASLt that need no handle.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include "library_info.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

// cuBLASLt ships with cuBLAS and carries its version number.
TBDSIM_CUBLASLT_EXPORT size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }

// The runtime version this cuBLASLt was built against.
TBDSIM_CUBLASLT_EXPORT size_t cublasLtGetCudartVersion(void) { return CUDART_VERSION; }

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) {
    return tbdsim::blas::library_property(type, value);
}

TBDSIM_CUBLASLT_EXPORT const char* cublasLtGetStatusName(cublasStatus_t status) {
    return tbdsim::blas::status_name(status);
}

TBDSIM_CUBLASLT_EXPORT const char* cublasLtGetStatusString(cublasStatus_t status) {
    return tbdsim::blas::status_string(status);
}
