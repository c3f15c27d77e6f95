#include "gemm_precision.h"

#include <cublas_api.h>
#include <library_types.h>

#include <cstdlib>
#include <cstring>

namespace tbdprof::preload {
namespace {

using raw::RawPrecision;

// Tensor-core formats of low-precision inputs; Unknown for FP32 and anything else.
RawPrecision input_format(int a_type) {
    switch (a_type) {
        case CUDA_R_16F:
            return RawPrecision::Fp16;
        case CUDA_R_16BF:
            return RawPrecision::Bf16;
        case CUDA_R_8F_E4M3:
        case CUDA_R_8F_E5M2:
            return RawPrecision::Fp8;
        case CUDA_R_8I:
            return RawPrecision::Int8;
        default:
            return RawPrecision::Unknown;
    }
}

}  // namespace

RawPrecision gemm_precision(int a_type, int compute_type, int math_mode, bool tf32_disabled) {
    const RawPrecision low = input_format(a_type);
    const bool fp32_data = a_type == CUDA_R_32F;
    auto tf32 = [&] { return tf32_disabled ? RawPrecision::Fp32 : RawPrecision::Tf32; };
    switch (compute_type) {
        case CUBLAS_COMPUTE_16F:
        case CUBLAS_COMPUTE_16F_PEDANTIC:
            return RawPrecision::Fp16;
        case CUBLAS_COMPUTE_32F:
            if (!fp32_data) return low != RawPrecision::Unknown ? low : RawPrecision::Other;
            switch (math_mode == kMathModeUnknown ? CUBLAS_DEFAULT_MATH : (math_mode & 0xf)) {
                case CUBLAS_TF32_TENSOR_OP_MATH:
                    return tf32();
                case CUBLAS_TENSOR_OP_MATH:
                    return RawPrecision::Fp16;
                case CUBLAS_FP32_EMULATED_BF16X9_MATH:
                    return RawPrecision::Bf16;
                default:
                    return RawPrecision::Fp32;
            }
        case CUBLAS_COMPUTE_32F_PEDANTIC:
            if (!fp32_data) return low != RawPrecision::Unknown ? low : RawPrecision::Other;
            return RawPrecision::Fp32;
        case CUBLAS_COMPUTE_32F_FAST_TF32:
            if (!fp32_data) return low != RawPrecision::Unknown ? low : RawPrecision::Other;
            return tf32();
        case CUBLAS_COMPUTE_32F_FAST_16F:
            if (!fp32_data) return low != RawPrecision::Unknown ? low : RawPrecision::Other;
            return RawPrecision::Fp16;
        case CUBLAS_COMPUTE_32F_FAST_16BF:
        case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
            if (!fp32_data) return low != RawPrecision::Unknown ? low : RawPrecision::Other;
            return RawPrecision::Bf16;
        case CUBLAS_COMPUTE_64F:
        case CUBLAS_COMPUTE_64F_PEDANTIC:
        case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
            return RawPrecision::Fp64;
        case CUBLAS_COMPUTE_32I:
        case CUBLAS_COMPUTE_32I_PEDANTIC:
            return RawPrecision::Int8;
        default:
            return RawPrecision::Other;
    }
}

bool tf32_disabled_by_environment() {
    static const bool disabled = [] {
        const char* value = std::getenv("NVIDIA_TF32_OVERRIDE");
        return value != nullptr && std::strcmp(value, "0") == 0;
    }();
    return disabled;
}

}  // namespace tbdprof::preload
