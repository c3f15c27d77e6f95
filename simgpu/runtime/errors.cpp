#include "errors.h"

#include <cstring>

#include "driver_table.h"

namespace tbdsim::rt {

namespace {
thread_local cudaError_t t_last_error = cudaSuccess;
}

cudaError_t to_runtime_error(CUresult result) {
    if (result == CUDA_SUCCESS) return cudaSuccess;
    const auto as_runtime = static_cast<cudaError_t>(result);
    // Codes are shared by design; only codes the runtime does not define need translating.
    if (std::strcmp(error_name(as_runtime), "unrecognized error code") != 0) return as_runtime;
    return cudaErrorUnknown;
}

cudaError_t record_error(cudaError_t error) {
    if (error != cudaSuccess && error != cudaErrorNotReady) t_last_error = error;
    return error;
}

// A failed driver initialisation is sticky: the real runtime reports it again on every query.
cudaError_t take_last_error() {
    cudaError_t error = t_last_error;
    t_last_error = cudaSuccess;
    if (error == cudaSuccess) error = driver_init_failure();
    return error;
}

cudaError_t peek_last_error() {
    return t_last_error != cudaSuccess ? t_last_error : driver_init_failure();
}

}  // namespace tbdsim::rt

using namespace tbdsim::rt;

TBDSIM_CUDART_EXPORT cudaError_t cudaGetLastError(void) { return take_last_error(); }
TBDSIM_CUDART_EXPORT cudaError_t cudaPeekAtLastError(void) { return peek_last_error(); }
TBDSIM_CUDART_EXPORT const char* cudaGetErrorName(cudaError_t error) { return error_name(error); }
TBDSIM_CUDART_EXPORT const char* cudaGetErrorString(cudaError_t error) { return error_message(error); }
