// The one argument of the simulated cuBLAS level-1 and level-2 kernels (dot, axpy, gemv, ger...),
// shared by kernels.cu and the host code that fills it, like TbdsimGemmParams. Plain C types only.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TbdsimVectorParams {
    const void* x;
    const void* y;          // dot: the second vector; axpy/copy/gemv: the output vector
    const void* a;          // gemv: the matrix read; ger: the matrix updated
    void* result;           // dot/nrm2/asum in device pointer mode: where the scalar goes
    const void* alpha_ptr;  // device pointer mode: the scalars on the device; else null
    const void* beta_ptr;
    long long m, n;  // vector length in n (level 1); matrix rows and columns (level 2)
    long long incx, incy, lda;
    double alpha_re, alpha_im, beta_re, beta_im;  // host pointer mode: the scalars' values
    int pointer_mode;                             // cublasPointerMode_t
    int trans;                                    // gemv: cublasOperation_t
    int conjugate;                                // dotc/gerc: the conjugate form
    int reserved;
} TbdsimVectorParams;

#ifdef __cplusplus
}
#endif
