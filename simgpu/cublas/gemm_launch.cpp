#include "gemm_launch.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "gemm_params.h"
#include "handle.h"

namespace tbdsim::cublas {
namespace {

// Hardware limit on gridDim.y and gridDim.z; larger batches are split into several launches.
constexpr int64_t kMaxGridYZ = 65535;

bool valid_operation(cublasOperation_t op) {
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

double half_to_double(uint16_t bits) {
    const int sign = (bits >> 15) != 0 ? -1 : 1;
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    if (exponent == 0) return sign * std::ldexp(mantissa, -24);
    if (exponent == 31) return mantissa == 0 ? sign * HUGE_VAL : std::nan("");
    return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

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

// The argument checks real cuBLAS makes, in its order.
cublasStatus_t validate(const GemmRequest& request) {
    if (!valid_operation(request.transa) || !valid_operation(request.transb)) return CUBLAS_STATUS_INVALID_VALUE;
    if (request.m < 0 || request.n < 0 || request.k < 0 || request.batch_count < 0) {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const int64_t rows_a = request.transa == CUBLAS_OP_N ? request.m : request.k;
    const int64_t rows_b = request.transb == CUBLAS_OP_N ? request.k : request.n;
    if (request.lda < std::max<int64_t>(1, rows_a) || request.ldb < std::max<int64_t>(1, rows_b) ||
        request.ldc < std::max<int64_t>(1, request.m)) {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

const char* offset_operand(const void* base, BatchLayout layout, int64_t first, int64_t stride, size_t element_bytes) {
    const char* bytes = static_cast<const char*>(base);
    if (base == nullptr) return nullptr;
    // Pointer arrays advance by pointers; strided operands by elements.
    return layout == BatchLayout::PointerArray ? bytes + first * static_cast<int64_t>(sizeof(void*))
                                               : bytes + first * stride * static_cast<int64_t>(element_bytes);
}

size_t element_bytes_of(TbdsimPrecision precision) {
    switch (precision) {
        case TBDSIM_PRECISION_FP16:
        case TBDSIM_PRECISION_BF16: return 2;
        case TBDSIM_PRECISION_FP64: return 8;
        default: return 4;
    }
}

}  // namespace

TbdsimPrecision single_precision_under(cublasHandle_t handle) {
    const int base = static_cast<int>(handle->math_mode) & 0xf;
    return base == CUBLAS_TF32_TENSOR_OP_MATH ? TBDSIM_PRECISION_TF32 : TBDSIM_PRECISION_FP32;
}

cublasStatus_t classify_gemm_ex(cublasHandle_t handle, cudaDataType a_type, cudaDataType b_type, cudaDataType c_type,
                                cublasComputeType_t compute_type, TbdsimPrecision* precision,
                                ScalarType* scalar_type) {
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
            // FP32 inputs: the _FAST compute types let cuBLAS down-convert to tensor-core formats;
            // plain COMPUTE_32F follows the handle's math mode, _PEDANTIC never does.
            switch (compute_type) {
                case CUBLAS_COMPUTE_32F_FAST_TF32: *precision = TBDSIM_PRECISION_TF32; break;
                case CUBLAS_COMPUTE_32F_FAST_16F: *precision = TBDSIM_PRECISION_FP16; break;
                case CUBLAS_COMPUTE_32F_FAST_16BF: *precision = TBDSIM_PRECISION_BF16; break;
                case CUBLAS_COMPUTE_32F: *precision = single_precision_under(handle); break;
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

cublasStatus_t run_gemm(cublasHandle_t handle, const GemmRequest& request) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (const cublasStatus_t status = validate(request); status != CUBLAS_STATUS_SUCCESS) return status;
    if (request.m == 0 || request.n == 0 || request.batch_count == 0) return CUBLAS_STATUS_SUCCESS;
    if (request.alpha == nullptr || request.beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;

    TbdsimGemmParams params{};
    params.pointer_mode = handle->pointer_mode;
    if (handle->pointer_mode == CUBLAS_POINTER_MODE_HOST) {
        params.alpha = read_host_scalar(request.alpha, request.scalar_type);
        params.beta = read_host_scalar(request.beta, request.scalar_type);
        // The reference-BLAS quick return: nothing to do when C stays C.
        if ((params.alpha == 0.0 || request.k == 0) && params.beta == 1.0) return CUBLAS_STATUS_SUCCESS;
    } else {
        params.alpha_ptr = request.alpha;
        params.beta_ptr = request.beta;
    }
    params.m = request.m;
    params.n = request.n;
    params.k = request.k;
    params.lda = request.lda;
    params.ldb = request.ldb;
    params.ldc = request.ldc;
    params.stride_a = request.stride_a;
    params.stride_b = request.stride_b;
    params.stride_c = request.stride_c;
    params.transa = request.transa;
    params.transb = request.transb;
    params.workspace = handle->workspace();
    params.workspace_bytes = handle->workspace_bytes();

    const KernelFamily family = choose_family(request.precision, request.m, request.n, request.k);
    const int combination = transpose_combination(request.transa != CUBLAS_OP_N, request.transb != CUBLAS_OP_N);
    CUfunction function = handle->kernels[static_cast<int>(family)][combination];
    const KernelShape shape = kernel_shape(family);
    const auto grid_x = static_cast<unsigned>((request.m + shape.tile_m - 1) / shape.tile_m);
    const auto grid_y = static_cast<unsigned>(std::min<int64_t>(kMaxGridYZ, (request.n + shape.tile_n - 1) / shape.tile_n));
    const size_t element_bytes = element_bytes_of(request.precision);
    const TbdsimPrivateApi* private_api = handle->driver->private_api;

    for (int64_t first = 0; first < request.batch_count; first += kMaxGridYZ) {
        const int64_t chunk = std::min(kMaxGridYZ, request.batch_count - first);
        params.a = offset_operand(request.a, request.layout, first, request.stride_a, element_bytes);
        params.b = offset_operand(request.b, request.layout, first, request.stride_b, element_bytes);
        params.c = const_cast<char*>(offset_operand(request.c, request.layout, first, request.stride_c, element_bytes));
        params.batch_count = static_cast<int>(chunk);
        if (private_api != nullptr) {
            // k == 0 still launches (C = beta * C): one multiply per element of C.
            const double flops = request.k == 0
                                     ? static_cast<double>(request.m) * static_cast<double>(request.n) *
                                           static_cast<double>(chunk)
                                     : 2.0 * static_cast<double>(request.m) * static_cast<double>(request.n) *
                                           static_cast<double>(request.k) * static_cast<double>(chunk);
            private_api->annotate_next_launch(flops, request.precision);
        }
        void* arguments[] = {&params};
        const CUresult result =
            handle->driver->launch_kernel(function, grid_x, grid_y, static_cast<unsigned>(chunk),
                                          static_cast<unsigned>(shape.threads_per_block), 1, 1, 0, handle->stream,
                                          arguments, nullptr);
        if (result != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace tbdsim::cublas
