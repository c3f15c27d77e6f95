// The common path of the level-1 and level-2 entry points (dot, axpy, scal, nrm2, asum, copy, gemv,
// ger in S/D/C/Z, _v2 and _v2_64): validate like real cuBLAS, launch one kernel over the operands on
// the handle's stream, annotated with the operation's FLOPs. Reductions whose result goes to host
// memory (the default pointer mode) wait for the stream, as real cuBLAS does, and compute the value
// from the operands' bytes (device memory is host memory on the simulated GPU); with the device
// pointer mode the result is left to the kernel, which the simulator does not execute.
#pragma once

#include <cublas_api.h>

#include <cstdint>

namespace tbdsim::cublas {

enum class VectorOp : int { Dot, Axpy, Scal, Nrm2, Asum, Copy, Gemv, Ger, Count };
enum class DataType : int { S, D, C, Z, Count };  // float, double, cuComplex, cuDoubleComplex

struct VectorRequest {
    VectorOp op = VectorOp::Dot;
    DataType type = DataType::S;
    bool real_scalar = false;  // Csscal/Zdscal: a real alpha with complex data
    bool conjugate = false;    // dotc, gerc
    cublasOperation_t trans = CUBLAS_OP_N;
    int64_t m = 0, n = 0;
    int64_t incx = 1, incy = 1, lda = 0;
    const void* x = nullptr;
    const void* y = nullptr;  // dot: second vector; axpy/copy/gemv: output
    const void* a = nullptr;  // gemv: matrix read; ger: matrix written
    void* result = nullptr;   // dot/nrm2/asum
    const void* alpha = nullptr;
    const void* beta = nullptr;
};

cublasStatus_t run_vector(cublasHandle_t handle, const VectorRequest& request);

// 2n for dot and axpy, n for scal and asum, 2n for nrm2, 0 for copy, 2mn for gemv and ger; complex
// data multiplies multiply-adds by 4 (asum and nrm2 by 2).
double vector_flops(const VectorRequest& request);

}  // namespace tbdsim::cublas
