// The one argument of the simulated cuBLAS kernels of the generic routine families (simgpu/cublas/
// routine.h: symm, trsm, syrk, the remaining level-1/2 routines, the batched LAPACK-like routines),
// shared by kernels.cu and the host code that fills it, like TbdsimGemmParams. Plain C types only.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TbdsimRoutineParams {
    const void* a;
    const void* b;
    const void* c;
    const void* x;
    const void* y;
    const void* alpha;  // device pointer mode: the scalars on the device; else null
    const void* beta;
    long long m, n, k;
    long long lda, ldb, ldc, incx, incy;
    long long batch_count;
    int side, uplo, trans, diag;
} TbdsimRoutineParams;

#ifdef __cplusplus
}
#endif
