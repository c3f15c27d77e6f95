// What the cuBLAS hooks (cublas_hooks.cpp, cublas_vector_hooks.cpp, cublas_level3_hooks.cpp) share:
// what a handle says at a call (its stream and math mode, asked then, since both can change between
// calls), the math mode's mark on a GEMM's record, the four BLAS element types of the S/D/C/Z
// routines, what every S/D/C/Z routine's record holds, and the macros that write their wrappers.
#pragma once

#include <cublas_api.h>

#include <cstdint>

#include "tbdprof/raw_format.h"

namespace tbdprof::collector {
struct ThreadState;
}

namespace tbdprof::preload {

// The handle's stream (the default stream when it cannot be asked).
cudaStream_t cublas_stream_of(cublasHandle_t handle);

// The handle's cublasMath_t, or kMathModeUnknown (gemm_precision.h) when it cannot be asked.
int cublas_math_mode_of(cublasHandle_t handle);

// Stores the handle's math mode in the record and the precision it makes a GEMM of A's cudaDataType
// under compute_type (a cublasComputeType_t) run in.
void record_math_mode(raw::RawLibraryCall& record, cublasHandle_t handle, int a_type, int compute_type);

// A program that dlopens cuBLAS and looks the two queries up: keep the library's own functions.
void remember_cublas_handle_query(const char* name, void* result);

// The element type of an S, D, C or Z routine.
enum class BlasType { S, D, C, Z };

inline bool is_complex(BlasType t) {
    return t == BlasType::C || t == BlasType::Z;
}
inline bool is_double(BlasType t) {
    return t == BlasType::D || t == BlasType::Z;
}

// As cudaDataType.
inline uint8_t data_type(BlasType t) {
    constexpr uint8_t kTypes[] = {CUDA_R_32F, CUDA_R_64F, CUDA_C_32F, CUDA_C_64F};
    return kTypes[static_cast<int>(t)];
}

// The compute type and precision the routine's arithmetic runs in without a math mode.
inline uint8_t compute_type(BlasType t) {
    return static_cast<uint8_t>(is_double(t) ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F);
}

// What every S/D/C/Z routine's record holds: its name, the handle's stream, the operands a (read), b
// (read) and c (written), the sizes, the op, and the element and compute types of `type`.
struct BlasCall {
    const char* name;
    raw::LibraryOp op;
    BlasType type;
    cublasHandle_t handle;
    int64_t m, n, k, batch;
    const void *a, *b, *c;
};
void record_blas_call(collector::ThreadState& thread, raw::RawLibraryCall& record, const BlasCall& call);

}  // namespace tbdprof::preload

// One wrapper per exported entry point (cublas_vector_hooks.cpp, cublas_level3_hooks.cpp): NAME is the
// symbol, PARAMS its parameter list, ARGS the forwarded arguments; a SHAPE is made of the name and the rest,
// and RECORD(shape, call) runs the call and records it. real_<NAME> is the real function (found by
// dlsym(RTLD_NEXT) or remembered from the program's dlsym).
#define TBD_CUBLAS_HOOK(SHAPE, RECORD, NAME, PARAMS, ARGS, ...)    \
    namespace {                                                    \
    LibraryFunction<decltype(&::NAME)> real_##NAME{#NAME};         \
    }                                                              \
    extern "C" TBD_VISIBLE cublasStatus_t NAME PARAMS {            \
        auto real = real_##NAME.get();                             \
        if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED; \
        const SHAPE s{#NAME, __VA_ARGS__};                         \
        return RECORD(s, [&] { return real ARGS; });               \
    }

// The 32-bit and 64-bit forms of a base name (SUFFIX32 is _v2 or empty).
#define TBD_CUBLAS_WIDTHS(MACRO, SUFFIX32, SUFFIX64, ...) \
    MACRO(int, SUFFIX32, __VA_ARGS__) MACRO(int64_t, SUFFIX64, __VA_ARGS__)
#define TBD_CUBLAS_V2(MACRO, ...) TBD_CUBLAS_WIDTHS(MACRO, _v2, _v2_64, __VA_ARGS__)
#define TBD_CUBLAS_PLAIN(MACRO, ...) TBD_CUBLAS_WIDTHS(MACRO, , _64, __VA_ARGS__)

// In a substitute_*_symbol(name, result) (library_call.h): our wrapper when the program looks NAME up.
#define TBD_CUBLAS_SUBSTITUTE(NAME) \
    if (std::strcmp(name, #NAME) == 0) return substitute_library_function(real_##NAME, &::NAME, result);
#define TBD_CUBLAS_SUBSTITUTE_V2(base) TBD_CUBLAS_SUBSTITUTE(base##_v2) TBD_CUBLAS_SUBSTITUTE(base##_v2_64)
#define TBD_CUBLAS_SUBSTITUTE_PLAIN(base) TBD_CUBLAS_SUBSTITUTE(base) TBD_CUBLAS_SUBSTITUTE(base##_64)
#define TBD_CUBLAS_SUBSTITUTE_SDCZ(MACRO, s, d, c, z) MACRO(s) MACRO(d) MACRO(c) MACRO(z)
