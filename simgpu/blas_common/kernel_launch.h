// The last step of every simulated GEMM: pick the kernel, tell the cost model the work, and launch it
// on a stream, splitting batches the grid cannot hold. cuBLAS and cuBLASLt validate their own
// arguments and fill the parameters; this part is the same for both.
#pragma once

#include <cuda.h>
#include <simgpu/private_api.h>

#include <cstddef>
#include <cstdint>

#include "gemm_params.h"
#include "kernel_catalog.h"

namespace tbdsim::blas {

// How the operands of each batch entry are found.
enum class BatchLayout {
    Strided,       // a + i * stride_a ...
    PointerArray,  // a[i] ... (a, b, c are device arrays of pointers)
};

struct GemmLaunch {
    // Every field but the operand pointers and batch_count, which are set per launch from below.
    TbdsimGemmParams params{};
    const void* a = nullptr;
    const void* b = nullptr;
    void* c = nullptr;
    void* d = nullptr;  // null: the output is C
    const void* bias = nullptr;
    // Bytes per element, to advance strided operands between launches of a split batch.
    std::size_t a_element_bytes = 4, b_element_bytes = 4, c_element_bytes = 4, d_element_bytes = 4;
    BatchLayout layout = BatchLayout::Strided;
    int64_t batch_count = 1;
    TbdsimPrecision precision = TBDSIM_PRECISION_FP32;
    Epilogue epilogue = Epilogue::None;
    // Bytes per batch entry the epilogue moves besides A, B, C and D (bias vector, aux matrix).
    double epilogue_bytes = 0;
    CUstream stream = nullptr;
};

// Launches the GEMM (m, n, k, transposes from launch.params), each launch annotated with
// 2*m*n*k*batch FLOPs (m*n*batch when k == 0: C = beta*C) and the bytes it moves (A, B, C read, D
// written, plus the epilogue's), so that the driver times it as a roofline. The epilogue adds no FLOPs.
CUresult launch_gemm(const DriverEntryPoints& driver, const KernelTable& kernels, const GemmLaunch& launch);

}  // namespace tbdsim::blas
