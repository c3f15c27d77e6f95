// The common path of every GEMM entry point: validate like real cuBLAS, pick a kernel, tell the
// cost model the work, and launch on the handle's stream.
#pragma once

#include <cublas_api.h>
#include <simgpu/private_api.h>

#include <cstdint>

namespace tbdsim::cublas {

// How alpha and beta are stored (their type follows the compute type, as in cuBLAS).
enum class ScalarType { Half, Float, Double, Int32 };

// How the operands of each batch entry are found.
enum class BatchLayout {
    Strided,       // a + i * stride_a ...
    PointerArray,  // a[i] ... (a, b, c are device arrays of pointers)
};

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
