#include "blas.h"

#include "check.h"

namespace tbdsample {

BlasContext::BlasContext(DeviceAllocator& allocator, cudaStream_t stream, std::size_t workspace_bytes)
    : allocator_(allocator) {
    CUBLAS_CHECK(cublasCreate(&handle_));
    // Order matters: cublasSetStream resets the workspace to cuBLAS's default pool, so the user
    // workspace must be set after the stream.
    CUBLAS_CHECK(cublasSetStream(handle_, stream));
    if (workspace_bytes > 0) {
        workspace_ = allocator_.allocate(workspace_bytes, Category::workspace);
        CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_, workspace_bytes));
    }
    // The math mode stays CUBLAS_DEFAULT_MATH: SGEMM then computes in plain FP32 (no TF32 tensor
    // cores), which is what the FP32 throughput numbers of the profiler expect from these samples.
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

}  // namespace tbdsample
