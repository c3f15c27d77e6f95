#include "gemm_launch.h"

#include <algorithm>

#include "handle.h"

namespace tbdsim::cublas {
namespace {

bool valid_operation(cublasOperation_t op) {
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
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

}  // namespace

// What single-precision GEMMs (SGEMM, and COMPUTE_32F on FP32 data) run as under the handle's math
// mode, as cuBLAS documents it: TF32 tensor cores under CUBLAS_TF32_TENSOR_OP_MATH, FP16 tensor cores
// under the deprecated CUBLAS_TENSOR_OP_MATH (it selects CUBLAS_COMPUTE_32F_FAST_16F), BF16 tensor
// cores under CUBLAS_FP32_EMULATED_BF16X9_MATH (FP32 emulated with BF16 products), plain FP32
// otherwise (default and pedantic).
TbdsimPrecision single_precision_under(cublasHandle_t handle) {
    switch (static_cast<int>(handle->math_mode) & 0xf) {
        case CUBLAS_TF32_TENSOR_OP_MATH: return TBDSIM_PRECISION_TF32;
        case CUBLAS_TENSOR_OP_MATH: return TBDSIM_PRECISION_FP16;
        case CUBLAS_FP32_EMULATED_BF16X9_MATH: return TBDSIM_PRECISION_BF16;
        default: return TBDSIM_PRECISION_FP32;
    }
}

cublasStatus_t classify_gemm_ex(cublasHandle_t handle, cudaDataType a_type, cudaDataType b_type, cudaDataType c_type,
                                cublasComputeType_t compute_type, TbdsimPrecision* precision,
                                ScalarType* scalar_type) {
    // Plain COMPUTE_32F on FP32 data follows the handle's math mode.
    return blas::classify_gemm_types(a_type, b_type, c_type, compute_type, single_precision_under(handle), precision,
                                     scalar_type);
}

cublasStatus_t run_gemm(cublasHandle_t handle, const GemmRequest& request) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (const cublasStatus_t status = validate(request); status != CUBLAS_STATUS_SUCCESS) return status;
    if (request.m == 0 || request.n == 0 || request.batch_count == 0) return CUBLAS_STATUS_SUCCESS;
    if (request.alpha == nullptr || request.beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;

    blas::GemmLaunch launch;
    TbdsimGemmParams& params = launch.params;
    params.pointer_mode = handle->pointer_mode;
    if (handle->pointer_mode == CUBLAS_POINTER_MODE_HOST) {
        params.alpha = blas::read_host_scalar(request.alpha, request.scalar_type);
        params.beta = blas::read_host_scalar(request.beta, request.scalar_type);
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

    launch.a = request.a;
    launch.b = request.b;
    launch.c = request.c;
    const std::size_t element_bytes = blas::element_bytes_of(request.precision);
    launch.a_element_bytes = launch.b_element_bytes = launch.c_element_bytes = element_bytes;
    launch.layout = request.layout;
    launch.batch_count = request.batch_count;
    launch.precision = request.precision;
    launch.stream = handle->stream;
    return blas::launch_gemm(*handle->driver, handle->kernels, launch) == CUDA_SUCCESS
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // namespace tbdsim::cublas
