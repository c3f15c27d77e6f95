// The one argument every simulated cuBLAS GEMM kernel takes. Shared by kernels.cu (compiled by nvcc,
// so the cubin's parameter layout describes it) and the host code that fills it, so both agree on
// the layout byte for byte. Plain C types only: nvcc and the host compiler lay it out identically.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TbdsimGemmParams {
    const void* a;          // A, or the device array of A pointers for pointer-array batched GEMMs
    const void* b;
    void* c;
    void* workspace;        // the handle's workspace (default or cublasSetWorkspace), as real kernels get it
    const void* alpha_ptr;  // device pointer mode: where alpha lives on the device; else null
    const void* beta_ptr;
    long long m, n, k;
    long long lda, ldb, ldc;
    long long stride_a, stride_b, stride_c;  // elements between batch entries
    unsigned long long workspace_bytes;
    int batch_count;
    int pointer_mode;       // cublasPointerMode_t
    int transa, transb;     // cublasOperation_t
    double alpha, beta;     // host pointer mode: the scalar values, widened to double
} TbdsimGemmParams;

#ifdef __cplusplus
}
#endif
