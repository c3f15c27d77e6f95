// Device code of the simulated cuBLAS and cuBLASLt. The bodies are empty on purpose: the simulated
// driver never executes device code, it times launches with its cost model. What matters is what a
// profiler sees: realistic kernel names (modelled on the names real cuBLAS 13 kernels carry on
// Hopper) and a real parameter layout in the cubin (one TbdsimGemmParams struct), which the driver
// reads from .nv.info.
#include "gemm_params.h"

// One kernel per transpose combination; the first letter is op(A), the second op(B), as in cuBLAS.
#define TBDSIM_GEMM_KERNELS(prefix, suffix)                                           \
    extern "C" __global__ void prefix##_nn_##suffix(TbdsimGemmParams) {}              \
    extern "C" __global__ void prefix##_nt_##suffix(TbdsimGemmParams) {}              \
    extern "C" __global__ void prefix##_tn_##suffix(TbdsimGemmParams) {}              \
    extern "C" __global__ void prefix##_tt_##suffix(TbdsimGemmParams) {}

// cuBLASLt fuses its epilogues into the GEMM kernel: one variant per epilogue (kernel_catalog.cpp).
#define TBDSIM_GEMM_FAMILY(prefix, suffix)                 \
    TBDSIM_GEMM_KERNELS(prefix, suffix)                    \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_relu)    \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bias)    \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bias_relu)

// FP32 SIMT (FFMA) kernels for large problems.
TBDSIM_GEMM_FAMILY(sm90_xmma_gemm_f32f32_f32f32_f32,
                   n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas)
// TF32 tensor-core kernels (CUBLAS_COMPUTE_32F_FAST_TF32 or CUBLAS_TF32_TENSOR_OP_MATH).
TBDSIM_GEMM_FAMILY(sm90_xmma_gemm_f32f32_tf32f32_f32,
                   n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas)
// FP16 and BF16 tensor-core kernels (FP32 accumulation).
TBDSIM_GEMM_FAMILY(sm90_xmma_gemm_f16f16_f16f32_f32,
                   n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas)
TBDSIM_GEMM_FAMILY(sm90_xmma_gemm_bf16bf16_bf16f32_f32,
                   n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas)
// FP64 tensor-core (DMMA) kernels.
TBDSIM_GEMM_FAMILY(sm90_xmma_gemm_f64f64_f64f64_f64,
                   n_tilesize64x64x16_stage4_warpsize2x2x1_dmma_execute_kernel__5x_cublas)

// Small FP32 problems: real cuBLAS picks sliced SIMT kernels of the Ampere family for these. Their
// names end with the transposes, so the epilogue tag follows them directly.
#define TBDSIM_SMALL_KERNELS(tag)                                                      \
    extern "C" __global__ void ampere_sgemm_32x32_sliced1x4_nn##tag(TbdsimGemmParams) {} \
    extern "C" __global__ void ampere_sgemm_32x32_sliced1x4_nt##tag(TbdsimGemmParams) {} \
    extern "C" __global__ void ampere_sgemm_32x32_sliced1x4_tn##tag(TbdsimGemmParams) {} \
    extern "C" __global__ void ampere_sgemm_32x32_sliced1x4_tt##tag(TbdsimGemmParams) {}
TBDSIM_SMALL_KERNELS()
TBDSIM_SMALL_KERNELS(_epilogue_relu)
TBDSIM_SMALL_KERNELS(_epilogue_bias)
TBDSIM_SMALL_KERNELS(_epilogue_bias_relu)

// Level-1 and level-2 BLAS: one kernel per operation and data type (s, d, c, z), named like the
// kernel families real cuBLAS launches for them.
#include "vector_params.h"
#define TBDSIM_VECTOR_KERNELS(type)                                                        \
    extern "C" __global__ void dot_kernel_##type(TbdsimVectorParams) {}                    \
    extern "C" __global__ void axpy_kernel_val_##type(TbdsimVectorParams) {}               \
    extern "C" __global__ void scal_kernel_val_##type(TbdsimVectorParams) {}               \
    extern "C" __global__ void nrm2_kernel_##type(TbdsimVectorParams) {}                   \
    extern "C" __global__ void asum_kernel_##type(TbdsimVectorParams) {}                   \
    extern "C" __global__ void copy_kernel_##type(TbdsimVectorParams) {}                   \
    extern "C" __global__ void gemv2N_kernel_##type(TbdsimVectorParams) {}                 \
    extern "C" __global__ void gemv2T_kernel_val_##type(TbdsimVectorParams) {}             \
    extern "C" __global__ void ger_kernel_##type(TbdsimVectorParams) {}
TBDSIM_VECTOR_KERNELS(s)
TBDSIM_VECTOR_KERNELS(d)
TBDSIM_VECTOR_KERNELS(c)
TBDSIM_VECTOR_KERNELS(z)
