// The exported GEMM entry points (32-bit and _64 variants). Each one only describes its call as a
// GemmRequest; gemm_launch.cpp does the rest.
#include <cublas_api.h>

#include "gemm_launch.h"
#include "handle.h"

#define TBDSIM_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

using tbdsim::cublas::BatchLayout;
using tbdsim::cublas::GemmRequest;
using tbdsim::cublas::ScalarType;

namespace {

GemmRequest describe(cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                     const void* alpha, const void* a, int64_t lda, const void* b, int64_t ldb, const void* beta,
                     void* c, int64_t ldc) {
    GemmRequest request;
    request.transa = transa;
    request.transb = transb;
    request.m = m;
    request.n = n;
    request.k = k;
    request.alpha = alpha;
    request.beta = beta;
    request.a = a;
    request.lda = lda;
    request.b = b;
    request.ldb = ldb;
    request.c = c;
    request.ldc = ldc;
    return request;
}

cublasStatus_t sgemm(cublasHandle_t handle, GemmRequest request) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    request.precision = tbdsim::cublas::single_precision_under(handle);
    return tbdsim::cublas::run_gemm(handle, request);
}

cublasStatus_t fixed_precision_gemm(cublasHandle_t handle, GemmRequest request, TbdsimPrecision precision,
                                    ScalarType scalar_type) {
    request.precision = precision;
    request.scalar_type = scalar_type;
    return tbdsim::cublas::run_gemm(handle, request);
}

cublasStatus_t gemm_ex(cublasHandle_t handle, GemmRequest request, cudaDataType a_type, cudaDataType b_type,
                       cudaDataType c_type, cublasComputeType_t compute_type) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (const cublasStatus_t status = tbdsim::cublas::classify_gemm_ex(handle, a_type, b_type, c_type, compute_type,
                                                                       &request.precision, &request.scalar_type);
        status != CUBLAS_STATUS_SUCCESS) {
        return status;
    }
    return tbdsim::cublas::run_gemm(handle, request);
}

GemmRequest strided(GemmRequest request, int64_t stride_a, int64_t stride_b, int64_t stride_c, int64_t batch) {
    request.stride_a = stride_a;
    request.stride_b = stride_b;
    request.stride_c = stride_c;
    request.batch_count = batch;
    return request;
}

GemmRequest pointer_array(GemmRequest request, int64_t batch) {
    request.layout = BatchLayout::PointerArray;
    request.batch_count = batch;
    return request;
}

}  // namespace

// ---- single precision ----

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                   cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                                   const float* A, int lda, const float* B, int ldb, const float* beta,
                                                   float* C, int ldc) {
    return sgemm(handle, describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                      const float* alpha, const float* A, int64_t lda, const float* B,
                                                      int64_t ldb, const float* beta, float* C, int64_t ldc) {
    return sgemm(handle, describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long strideA, const float* B, int ldb, long long strideB,
    const float* beta, float* C, int ldc, long long strideC, int batchCount) {
    return sgemm(handle, strided(describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), strideA,
                                 strideB, strideC, batchCount));
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSgemmStridedBatched_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
    const float* alpha, const float* A, int64_t lda, long long strideA, const float* B, int64_t ldb,
    long long strideB, const float* beta, float* C, int64_t ldc, long long strideC, int64_t batchCount) {
    return sgemm(handle, strided(describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), strideA,
                                 strideB, strideC, batchCount));
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                       cublasOperation_t transb, int m, int n, int k,
                                                       const float* alpha, const float* const Aarray[], int lda,
                                                       const float* const Barray[], int ldb, const float* beta,
                                                       float* const Carray[], int ldc, int batchCount) {
    return sgemm(handle, pointer_array(describe(transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta,
                                                const_cast<float**>(Carray), ldc),
                                       batchCount));
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                          cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                          const float* alpha, const float* const Aarray[],
                                                          int64_t lda, const float* const Barray[], int64_t ldb,
                                                          const float* beta, float* const Carray[], int64_t ldc,
                                                          int64_t batchCount) {
    return sgemm(handle, pointer_array(describe(transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta,
                                                const_cast<float**>(Carray), ldc),
                                       batchCount));
}

// ---- double and half precision ----

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                   cublasOperation_t transb, int m, int n, int k, const double* alpha,
                                                   const double* A, int lda, const double* B, int ldb,
                                                   const double* beta, double* C, int ldc) {
    return fixed_precision_gemm(handle, describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
                                TBDSIM_PRECISION_FP64, ScalarType::Double);
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const double* alpha, const double* A, int lda, long long strideA, const double* B, int ldb, long long strideB,
    const double* beta, double* C, int ldc, long long strideC, int batchCount) {
    return fixed_precision_gemm(handle,
                                strided(describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
                                        strideA, strideB, strideC, batchCount),
                                TBDSIM_PRECISION_FP64, ScalarType::Double);
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k, const __half* alpha,
                                                const __half* A, int lda, const __half* B, int ldb,
                                                const __half* beta, __half* C, int ldc) {
    return fixed_precision_gemm(handle, describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
                                TBDSIM_PRECISION_FP16, ScalarType::Half);
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasHgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const __half* alpha, const __half* A, int lda, long long strideA, const __half* B, int ldb, long long strideB,
    const __half* beta, __half* C, int ldc, long long strideC, int batchCount) {
    return fixed_precision_gemm(handle,
                                strided(describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
                                        strideA, strideB, strideC, batchCount),
                                TBDSIM_PRECISION_FP16, ScalarType::Half);
}

// ---- mixed precision (Ex) ----

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                                 cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                 const void* A, cudaDataType Atype, int lda, const void* B,
                                                 cudaDataType Btype, int ldb, const void* beta, void* C,
                                                 cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                                 cublasGemmAlgo_t /*algo: a hint; the catalog decides*/) {
    return gemm_ex(handle, describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), Atype, Btype,
                   Ctype, computeType);
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                                    cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                    const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
                                                    const void* B, cudaDataType Btype, int64_t ldb, const void* beta,
                                                    void* C, cudaDataType Ctype, int64_t ldc,
                                                    cublasComputeType_t computeType, cublasGemmAlgo_t /*algo*/) {
    return gemm_ex(handle, describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), Atype, Btype,
                   Ctype, computeType);
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
    const void* A, cudaDataType Atype, int lda, long long strideA, const void* B, cudaDataType Btype, int ldb,
    long long strideB, const void* beta, void* C, cudaDataType Ctype, int ldc, long long strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t /*algo*/) {
    return gemm_ex(handle,
                   strided(describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), strideA, strideB,
                           strideC, batchCount),
                   Atype, Btype, Ctype, computeType);
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
    const void* alpha, const void* A, cudaDataType Atype, int64_t lda, long long strideA, const void* B,
    cudaDataType Btype, int64_t ldb, long long strideB, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
    long long strideC, int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t /*algo*/) {
    return gemm_ex(handle,
                   strided(describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), strideA, strideB,
                           strideC, batchCount),
                   Atype, Btype, Ctype, computeType);
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                        cublasOperation_t transb, int m, int n, int k,
                                                        const void* alpha, const void* const Aarray[],
                                                        cudaDataType Atype, int lda, const void* const Barray[],
                                                        cudaDataType Btype, int ldb, const void* beta,
                                                        void* const Carray[], cudaDataType Ctype, int ldc,
                                                        int batchCount, cublasComputeType_t computeType,
                                                        cublasGemmAlgo_t /*algo*/) {
    return gemm_ex(handle,
                   pointer_array(describe(transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta,
                                          const_cast<void**>(Carray), ldc),
                                 batchCount),
                   Atype, Btype, Ctype, computeType);
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGemmBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
    const void* alpha, const void* const Aarray[], cudaDataType Atype, int64_t lda, const void* const Barray[],
    cudaDataType Btype, int64_t ldb, const void* beta, void* const Carray[], cudaDataType Ctype, int64_t ldc,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t /*algo*/) {
    return gemm_ex(handle,
                   pointer_array(describe(transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta,
                                          const_cast<void**>(Carray), ldc),
                                 batchCount),
                   Atype, Btype, Ctype, computeType);
}
