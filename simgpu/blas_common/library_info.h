// What cuBLAS and cuBLASLt say about themselves: status names and descriptions (cublasGetStatus*,
// cublasLtGetStatus*) and version properties (cublasGetProperty, cublasLtGetProperty).
#pragma once

#include <cublas_api.h>
#include <library_types.h>

namespace tbdsim::blas {

const char* status_name(cublasStatus_t status);
const char* status_string(cublasStatus_t status);
// The toolkit's cuBLAS version parts; INVALID_VALUE for a null value or an unknown property.
cublasStatus_t library_property(libraryPropertyType type, int* value);

}  // namespace tbdsim::blas
