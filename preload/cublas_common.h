// What the cuBLAS hooks (cublas_hooks.cpp, cublas_vector_hooks.cpp, cublas_level3_hooks.cpp) share:
// what a handle says at a call (its stream and math mode, asked then, since both can change between
// calls), the math mode's mark on a GEMM's record, and the four BLAS element types of the S/D/C/Z
// routines.
#pragma once

#include <cublas_api.h>

#include <cstdint>

#include "tbdprof/raw_format.h"

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

}  // namespace tbdprof::preload
