// Runtime error handling: the CUresult -> cudaError_t mapping, the per-thread "last error" that
// cudaGetLastError/cudaPeekAtLastError report, and the texts of cudaGetErrorName/String.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <utility>

// Exported runtime entry points: the library is built with hidden visibility, the version script
// then puts every visible cuda* / __cuda* symbol under the libcudart.so.13 node.
#define TBDSIM_CUDART_EXPORT __attribute__((visibility("default")))

namespace tbdsim::rt {

// The real runtime's cudaError_t values are the driver's CUresult values for every condition both
// know about; a driver code without a runtime counterpart becomes cudaErrorUnknown.
cudaError_t to_runtime_error(CUresult result);

// Remembers `error` as the calling thread's last error (cudaErrorNotReady is a status, not an error,
// and is not remembered, as in the real runtime). Returns `error` so calls can end with it.
cudaError_t record_error(cudaError_t error);

// cudaGetLastError / cudaPeekAtLastError semantics.
cudaError_t take_last_error();
cudaError_t peek_last_error();

const char* error_name(cudaError_t error);
const char* error_message(cudaError_t error);

// Calls a driver entry point; a function the driver does not provide reads as "not supported".
template <class Function, class... Args>
cudaError_t call_driver(Function function, Args&&... args) {
    if (function == nullptr) return cudaErrorNotSupported;
    return to_runtime_error(function(std::forward<Args>(args)...));
}

}  // namespace tbdsim::rt
