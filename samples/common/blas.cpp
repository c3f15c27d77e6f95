#include "blas.h"

#include "check.h"

namespace tbdsample {

BlasContext::BlasContext(DeviceAllocator& allocator, cudaStream_t stream, std::size_t workspace_bytes,
                         MathMode math)
    : allocator_(allocator) {
    CUBLAS_CHECK(cublasCreate(&handle_));
    // Order matters: cublasSetStream resets the workspace to cuBLAS's default pool, so the user
    // workspace must be set after the stream.
    CUBLAS_CHECK(cublasSetStream(handle_, stream));
    if (workspace_bytes > 0) {
        workspace_ = allocator_.allocate(workspace_bytes, Category::workspace);
        CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_, workspace_bytes));
    }
    // By default the math mode stays CUBLAS_DEFAULT_MATH: SGEMM then computes in plain FP32 (no TF32
    // tensor cores). --blas-math tf32 lets every FP32 GEMM use TF32 tensor cores; --blas-math
    // fast-tf32 asks for them only in the *Ex calls, through their compute type.
    if (math == MathMode::tf32) CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_TF32_TENSOR_OP_MATH));
    if (math == MathMode::fast_tf32) ex_compute_ = CUBLAS_COMPUTE_32F_FAST_TF32;
}

BlasContext::~BlasContext() {
    cublasDestroy(handle_);
    if (workspace_ != nullptr) allocator_.release(workspace_);
}

void BlasContext::gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a,
                       const float* b, float* c, float beta, float alpha) {
    // cuBLAS is column-major. A row-major matrix read column-major is its transpose, so the
    // row-major product C = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T:
    // swap the operands and the m/n extents, keep each operand's own transpose flag.
    int lda = transpose_a ? m : k;  // row length of A as stored
    int ldb = transpose_b ? k : n;
    CUBLAS_CHECK(cublasSgemm_v2(handle_, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, ldb, a,
                                lda, &beta, c, n));
}

void BlasContext::gemm_strided_batched(bool transpose_a, bool transpose_b, int m, int n, int k,
                                       const float* a, long long stride_a, const float* b,
                                       long long stride_b, float* c, long long stride_c, int batch,
                                       float beta, float alpha, BatchedApi api) {
    // The same operand swap as gemm(), applied to every matrix of the batch.
    int lda = transpose_a ? m : k;
    int ldb = transpose_b ? k : n;
    cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (api == BatchedApi::gemm_ex) {
        CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle_, op_b, op_a, n, m, k, &alpha, b, CUDA_R_32F, ldb,
                                                stride_b, a, CUDA_R_32F, lda, stride_a, &beta, c, CUDA_R_32F,
                                                n, stride_c, batch, ex_compute_, CUBLAS_GEMM_DEFAULT));
    } else {
        CUBLAS_CHECK(cublasSgemmStridedBatched(handle_, op_b, op_a, n, m, k, &alpha, b, ldb, stride_b, a,
                                               lda, stride_a, &beta, c, n, stride_c, batch));
    }
}

}  // namespace tbdsample
