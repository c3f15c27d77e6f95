// The one argument every simulated cuBLAS / cuBLASLt GEMM kernel takes. Shared by kernels.cu
// (compiled by nvcc, so the cubin's parameter layout describes it) and the host code that fills it,
// so both agree on the layout byte for byte. Plain C types only: nvcc and the host compiler lay it
// out identically.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TbdsimGemmParams {
    const void* a;          // A, or the device array of A pointers for pointer-array batched GEMMs
    const void* b;
    void* c;                // C (cuBLAS: also the output)
    void* workspace;        // the handle's or the call's workspace, as real kernels get it
    const void* alpha_ptr;  // device pointer mode: where alpha lives on the device; else null
    const void* beta_ptr;
    long long m, n, k;
    long long lda, ldb, ldc;
    long long stride_a, stride_b, stride_c;  // elements between batch entries
    unsigned long long workspace_bytes;
    int batch_count;
    int pointer_mode;       // cublasPointerMode_t / cublasLtPointerMode_t
    int transa, transb;     // cublasOperation_t
    double alpha, beta;     // host pointer mode: the scalar values, widened to double
    // cuBLASLt only (cuBLAS leaves them zero): a separate output D and the epilogue's bias vector.
    void* d;                // null: the output is C
    const void* bias;
    long long ldd, stride_d;
    long long bias_batch_stride;
    unsigned int epilogue;  // cublasLtEpilogue_t; 0 for cuBLAS
    int reserved;
    // The epilogue's aux matrix (GELU input or ReLU mask: written by the *_AUX epilogues, read by
    // DGELU/DRELU), as a real kernel must be handed it; null when the epilogue has none. Batch chunks
    // after the first (over 65535 entries) keep the first entry's pointer: no simulated kernel reads it.
    void* epilogue_aux;
} TbdsimGemmParams;

#ifdef __cplusplus
}
#endif
