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

void record_blas_call(ThreadState& thread, raw::RawLibraryCall& record, const BlasCall& call) {
    record.name_string = collector::intern_string(thread, call.name);
    record.stream = reinterpret_cast<uint64_t>(cublas_stream_of(call.handle));
    record.a = reinterpret_cast<uint64_t>(call.a);
    record.b = reinterpret_cast<uint64_t>(call.b);
    record.c = reinterpret_cast<uint64_t>(call.c);
    record.m = call.m;
    record.n = call.n;
    record.k = call.k;
    record.batch = call.batch;
    record.op = call.op;
    record.a_type = record.b_type = record.c_type = data_type(call.type);
    record.compute_type = compute_type(call.type);
}

void remember_cublas_handle_query(const char* name, void* result) {
    if (std::strcmp(name, "cublasGetStream_v2") == 0) real_get_stream.remember(result);
    if (std::strcmp(name, "cublasGetMathMode") == 0) real_get_math_mode.remember(result);
}

}  // namespace tbdprof::preload
