#include "gemm_types.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tbdsim::blas {
namespace {

double half_to_double(uint16_t bits) {
    const int sign = (bits >> 15) != 0 ? -1 : 1;
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    if (exponent == 0) return sign * std::ldexp(mantissa, -24);
    if (exponent == 31) return mantissa == 0 ? sign * HUGE_VAL : std::nan("");
    return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

}  // namespace

double read_host_scalar(const void* value, ScalarType type) {
    switch (type) {
        case ScalarType::Half: {
            uint16_t bits = 0;
            std::memcpy(&bits, value, sizeof bits);
            return half_to_double(bits);
        }
        case ScalarType::Float: return *static_cast<const float*>(value);
        case ScalarType::Double: return *static_cast<const double*>(value);
        case ScalarType::Int32: return *static_cast<const int32_t*>(value);
    }
    return 0.0;
}

cublasStatus_t classify_gemm_types(cudaDataType a_type, cudaDataType b_type, cudaDataType c_type,
                                   cublasComputeType_t compute_type, TbdsimPrecision plain_fp32,
                                   TbdsimPrecision* precision, ScalarType* scalar_type) {
    if (a_type != b_type) return CUBLAS_STATUS_NOT_SUPPORTED;
    switch (compute_type) {
        case CUBLAS_COMPUTE_16F:
        case CUBLAS_COMPUTE_16F_PEDANTIC:
            if (a_type != CUDA_R_16F || c_type != CUDA_R_16F) return CUBLAS_STATUS_NOT_SUPPORTED;
            *precision = TBDSIM_PRECISION_FP16;
            *scalar_type = ScalarType::Half;
            return CUBLAS_STATUS_SUCCESS;
        case CUBLAS_COMPUTE_32F:
        case CUBLAS_COMPUTE_32F_PEDANTIC:
        case CUBLAS_COMPUTE_32F_FAST_16F:
        case CUBLAS_COMPUTE_32F_FAST_16BF:
        case CUBLAS_COMPUTE_32F_FAST_TF32:
        case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
            *scalar_type = ScalarType::Float;
            if (a_type == CUDA_R_16F && (c_type == CUDA_R_16F || c_type == CUDA_R_32F)) {
                *precision = TBDSIM_PRECISION_FP16;
                return CUBLAS_STATUS_SUCCESS;
            }
            if (a_type == CUDA_R_16BF && (c_type == CUDA_R_16BF || c_type == CUDA_R_32F)) {
                *precision = TBDSIM_PRECISION_BF16;
                return CUBLAS_STATUS_SUCCESS;
            }
            if (a_type != CUDA_R_32F || c_type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
            // FP32 inputs: the _FAST compute types let the library down-convert to tensor-core
            // formats; plain COMPUTE_32F runs at `plain_fp32`, _PEDANTIC never down-converts.
            switch (compute_type) {
                case CUBLAS_COMPUTE_32F_FAST_TF32: *precision = TBDSIM_PRECISION_TF32; break;
                case CUBLAS_COMPUTE_32F_FAST_16F: *precision = TBDSIM_PRECISION_FP16; break;
                case CUBLAS_COMPUTE_32F_FAST_16BF:
                case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: *precision = TBDSIM_PRECISION_BF16; break;
                case CUBLAS_COMPUTE_32F: *precision = plain_fp32; break;
                default: *precision = TBDSIM_PRECISION_FP32; break;
            }
            return CUBLAS_STATUS_SUCCESS;
        case CUBLAS_COMPUTE_64F:
        case CUBLAS_COMPUTE_64F_PEDANTIC:
        case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
            if (a_type != CUDA_R_64F || c_type != CUDA_R_64F) return CUBLAS_STATUS_NOT_SUPPORTED;
            *precision = TBDSIM_PRECISION_FP64;
            *scalar_type = ScalarType::Double;
            return CUBLAS_STATUS_SUCCESS;
        default: return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

std::size_t element_bytes_of(cudaDataType type) {
    switch (type) {
        case CUDA_R_16F:
        case CUDA_R_16BF: return 2;
        case CUDA_R_32F: return 4;
        case CUDA_R_64F: return 8;
        default: return 0;
    }
}

std::size_t element_bytes_of(TbdsimPrecision precision) {
    switch (precision) {
        case TBDSIM_PRECISION_FP16:
        case TBDSIM_PRECISION_BF16: return 2;
        case TBDSIM_PRECISION_FP64: return 8;
        default: return 4;
    }
}

}  // namespace tbdsim::blas
