#include "cublas_common.h"

#include <cstring>

#include "gemm_precision.h"
#include "library_call.h"

namespace tbdprof::preload {
namespace {

LibraryFunction<decltype(&cublasGetStream_v2)> real_get_stream{"cublasGetStream_v2"};
LibraryFunction<decltype(&cublasGetMathMode)> real_get_math_mode{"cublasGetMathMode"};

}  // namespace

cudaStream_t cublas_stream_of(cublasHandle_t handle) {
    cudaStream_t stream = nullptr;
    if (auto get_stream = real_get_stream.get(); get_stream != nullptr) get_stream(handle, &stream);
    return stream;
}

int cublas_math_mode_of(cublasHandle_t handle) {
    auto get_math_mode = real_get_math_mode.get();
    cublasMath_t mode = CUBLAS_DEFAULT_MATH;
    if (get_math_mode == nullptr || get_math_mode(handle, &mode) != CUBLAS_STATUS_SUCCESS) return kMathModeUnknown;
    return static_cast<int>(mode);
}

void record_math_mode(raw::RawLibraryCall& record, cublasHandle_t handle, int a_type, int compute_type) {
    const int math_mode = cublas_math_mode_of(handle);
    if (math_mode != kMathModeUnknown) record.math_mode = static_cast<uint8_t>((math_mode & 0xff) + 1);
    record.precision = gemm_precision(a_type, compute_type, math_mode, tf32_disabled_by_environment());
}

void remember_cublas_handle_query(const char* name, void* result) {
    if (std::strcmp(name, "cublasGetStream_v2") == 0) real_get_stream.remember(result);
    if (std::strcmp(name, "cublasGetMathMode") == 0) real_get_math_mode.remember(result);
}

}  // namespace tbdprof::preload
