// The precision a cuBLAS/cuBLASLt GEMM's arithmetic runs in, from what the call says: the data type
// of A, the compute type, and (cuBLAS only) the handle's math mode, following the cuBLAS
// documentation. FP32 data under CUBLAS_COMPUTE_32F runs in TF32 under CUBLAS_TF32_TENSOR_OP_MATH, in
// FP16 under the deprecated CUBLAS_TENSOR_OP_MATH (CUBLAS_COMPUTE_32F_FAST_16F), in BF16 under
// CUBLAS_FP32_EMULATED_BF16X9_MATH; the _FAST_TF32/_FAST_16F/_FAST_16BF/_EMULATED_16BFX9 compute
// types choose the same tensor-core formats; NVIDIA_TF32_OVERRIDE=0 in the environment turns TF32
// back into FP32. FP16/BF16/FP8 inputs run on tensor cores in that format.
#pragma once

#include <cstdint>

#include "tbdprof/raw_format.h"

namespace tbdprof::preload {

inline constexpr int kMathModeUnknown = -1;

// a_type: cudaDataType of A; compute_type: cublasComputeType_t; math_mode: cublasMath_t, or
// kMathModeUnknown (cuBLASLt, which has no math mode); tf32_disabled: NVIDIA_TF32_OVERRIDE=0.
raw::RawPrecision gemm_precision(int a_type, int compute_type, int math_mode, bool tf32_disabled);

// NVIDIA_TF32_OVERRIDE=0, read once.
bool tf32_disabled_by_environment();

}  // namespace tbdprof::preload
