// cuBLAS for the samples: one handle bound to the training stream, an optional user-provided
// workspace, and a row-major GEMM so the model code reads like the math (C = op(A) * op(B)).
#pragma once

#include "device_memory.h"
#include "options.h"

#include <cublas_v2.h>

#include <cstddef>

namespace tbdsample {

class BlasContext {
public:
    // workspace_bytes == 0 keeps cuBLAS's own default workspace; otherwise a buffer of that size is
    // allocated (category workspace) and handed over with cublasSetWorkspace.
    // math: see MathMode (options.h).
    BlasContext(DeviceAllocator& allocator, cudaStream_t stream, std::size_t workspace_bytes,
                MathMode math = MathMode::fp32);
    ~BlasContext();
    BlasContext(const BlasContext&) = delete;
    BlasContext& operator=(const BlasContext&) = delete;

    // Row-major C[m, n] = alpha * op(A) * op(B) + beta * C, where op(A) is [m, k] and op(B) is [k, n].
    // A is stored [m, k] (or [k, m] when transpose_a), B is stored [k, n] (or [n, k] when transpose_b).
    void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, const float* b,
              float* c, float beta = 0.0f, float alpha = 1.0f);

    // Which cuBLAS entry point a batched GEMM goes through: cublasSgemmStridedBatched, or
    // cublasGemmStridedBatchedEx with FP32 data and CUBLAS_COMPUTE_32F (the same math; frameworks
    // use both, so a profiler must recognise both).
    enum class BatchedApi { sgemm, gemm_ex };

    // `batch` independent row-major products C_i = alpha * op(A_i) op(B_i) + beta * C_i, with the
    // shapes of gemm() and the i-th matrix of each operand `stride_*` floats after the previous one.
    void gemm_strided_batched(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a,
                              long long stride_a, const float* b, long long stride_b, float* c,
                              long long stride_c, int batch, float beta = 0.0f, float alpha = 1.0f,
                              BatchedApi api = BatchedApi::sgemm);

private:
    DeviceAllocator& allocator_;
    cublasHandle_t handle_ = nullptr;
    void* workspace_ = nullptr;
    cublasComputeType_t ex_compute_ = CUBLAS_COMPUTE_32F;
};

}  // namespace tbdsample
