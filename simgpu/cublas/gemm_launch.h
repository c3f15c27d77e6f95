// The common path of every GEMM entry point: validate like real cuBLAS, describe the work, and hand
// it to the shared launcher (simgpu/blas_common/kernel_launch.h) on the handle's stream.
#pragma once

#include <cublas_api.h>
#include <simgpu/private_api.h>

#include <cstdint>

#include "gemm_types.h"
#include "kernel_launch.h"

namespace tbdsim::cublas {

using blas::BatchLayout;
using blas::ScalarType;

struct GemmRequest {
    cublasOperation_t transa = CUBLAS_OP_N;
    cublasOperation_t transb = CUBLAS_OP_N;
    int64_t m = 0, n = 0, k = 0;
    const void* alpha = nullptr;
    const void* beta = nullptr;
    ScalarType scalar_type = ScalarType::Float;
    const void* a = nullptr;
    int64_t lda = 0;
    int64_t stride_a = 0;
    const void* b = nullptr;
    int64_t ldb = 0;
    int64_t stride_b = 0;
    void* c = nullptr;
    int64_t ldc = 0;
    int64_t stride_c = 0;
    int64_t batch_count = 1;
    BatchLayout layout = BatchLayout::Strided;
    TbdsimPrecision precision = TBDSIM_PRECISION_FP32;
};

cublasStatus_t run_gemm(cublasHandle_t handle, const GemmRequest& request);

// The precision single-precision routines (cublasSgemm...) run at under the handle's math mode.
TbdsimPrecision single_precision_under(cublasHandle_t handle);

// The precision and scalar type of a cublasGemmEx-family call, or NOT_SUPPORTED for type
// combinations we do not model.
cublasStatus_t classify_gemm_ex(cublasHandle_t handle, cudaDataType a_type, cudaDataType b_type, cudaDataType c_type,
                                cublasComputeType_t compute_type, TbdsimPrecision* precision,
                                ScalarType* scalar_type);

}  // namespace tbdsim::cublas
