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
#define TBDSIM_GEMM_FAMILY(prefix, suffix)                      \
    TBDSIM_GEMM_KERNELS(prefix, suffix)                         \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_relu)         \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bias)         \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bias_relu)    \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_relu_aux)     \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bias_relu_aux) \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_gelu)         \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_gelu_aux)     \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bias_gelu)    \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bias_gelu_aux) \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_drelu)        \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_drelu_bgrad)  \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_dgelu)        \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_dgelu_bgrad)  \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bgrada)       \
    TBDSIM_GEMM_KERNELS(prefix, suffix##_epilogue_bgradb)

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
TBDSIM_SMALL_KERNELS(_epilogue_relu_aux)
TBDSIM_SMALL_KERNELS(_epilogue_bias_relu_aux)
TBDSIM_SMALL_KERNELS(_epilogue_gelu)
TBDSIM_SMALL_KERNELS(_epilogue_gelu_aux)
TBDSIM_SMALL_KERNELS(_epilogue_bias_gelu)
TBDSIM_SMALL_KERNELS(_epilogue_bias_gelu_aux)
TBDSIM_SMALL_KERNELS(_epilogue_drelu)
TBDSIM_SMALL_KERNELS(_epilogue_drelu_bgrad)
TBDSIM_SMALL_KERNELS(_epilogue_dgelu)
TBDSIM_SMALL_KERNELS(_epilogue_dgelu_bgrad)
TBDSIM_SMALL_KERNELS(_epilogue_bgrada)
TBDSIM_SMALL_KERNELS(_epilogue_bgradb)


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

// The generic routine families of cuBLAS (simgpu/cublas/routine.h): one kernel per family and element
// type (s, d, c, z; h and t for half and bfloat16 data, i for 8-bit integers), named
// <family>_kernel_<type> as routine_cost.cpp's stems say.
#include "routine_params.h"
#define TBDSIM_ROUTINE_KERNEL(stem, type) extern "C" __global__ void stem##_##type(TbdsimRoutineParams) {}
#define TBDSIM_ROUTINE_KERNELS(stem)                                                                  \
    TBDSIM_ROUTINE_KERNEL(stem, s) TBDSIM_ROUTINE_KERNEL(stem, d) TBDSIM_ROUTINE_KERNEL(stem, c)     \
    TBDSIM_ROUTINE_KERNEL(stem, z) TBDSIM_ROUTINE_KERNEL(stem, h) TBDSIM_ROUTINE_KERNEL(stem, t)     \
    TBDSIM_ROUTINE_KERNEL(stem, i)
TBDSIM_ROUTINE_KERNELS(swap_kernel)
TBDSIM_ROUTINE_KERNELS(rot_kernel)
TBDSIM_ROUTINE_KERNELS(rotm_kernel)
TBDSIM_ROUTINE_KERNELS(rotg_kernel)
TBDSIM_ROUTINE_KERNELS(rotmg_kernel)
TBDSIM_ROUTINE_KERNELS(iamax_kernel)
TBDSIM_ROUTINE_KERNELS(iamin_kernel)
TBDSIM_ROUTINE_KERNELS(axpy_ex_kernel)
TBDSIM_ROUTINE_KERNELS(dot_ex_kernel)
TBDSIM_ROUTINE_KERNELS(dotc_ex_kernel)
TBDSIM_ROUTINE_KERNELS(scal_ex_kernel)
TBDSIM_ROUTINE_KERNELS(nrm2_ex_kernel)
TBDSIM_ROUTINE_KERNELS(asum_ex_kernel)
TBDSIM_ROUTINE_KERNELS(copy_ex_kernel)
TBDSIM_ROUTINE_KERNELS(gbmv_kernel)
TBDSIM_ROUTINE_KERNELS(sbmv_kernel)
TBDSIM_ROUTINE_KERNELS(hbmv_kernel)
TBDSIM_ROUTINE_KERNELS(symv_kernel)
TBDSIM_ROUTINE_KERNELS(hemv_kernel)
TBDSIM_ROUTINE_KERNELS(spmv_kernel)
TBDSIM_ROUTINE_KERNELS(hpmv_kernel)
TBDSIM_ROUTINE_KERNELS(syr_kernel)
TBDSIM_ROUTINE_KERNELS(her_kernel)
TBDSIM_ROUTINE_KERNELS(spr_kernel)
TBDSIM_ROUTINE_KERNELS(hpr_kernel)
TBDSIM_ROUTINE_KERNELS(syr2_kernel)
TBDSIM_ROUTINE_KERNELS(her2_kernel)
TBDSIM_ROUTINE_KERNELS(spr2_kernel)
TBDSIM_ROUTINE_KERNELS(hpr2_kernel)
TBDSIM_ROUTINE_KERNELS(tbmv_kernel)
TBDSIM_ROUTINE_KERNELS(tbsv_kernel)
TBDSIM_ROUTINE_KERNELS(tpmv_kernel)
TBDSIM_ROUTINE_KERNELS(tpsv_kernel)
TBDSIM_ROUTINE_KERNELS(trmv_kernel)
TBDSIM_ROUTINE_KERNELS(trsv_kernel)
TBDSIM_ROUTINE_KERNELS(gemv_batched_kernel)
TBDSIM_ROUTINE_KERNELS(gemm_kernel)
TBDSIM_ROUTINE_KERNELS(gemm3m_kernel)
TBDSIM_ROUTINE_KERNELS(symm_kernel)
TBDSIM_ROUTINE_KERNELS(hemm_kernel)
TBDSIM_ROUTINE_KERNELS(spmm_kernel)
TBDSIM_ROUTINE_KERNELS(syrk_kernel)
TBDSIM_ROUTINE_KERNELS(herk_kernel)
TBDSIM_ROUTINE_KERNELS(syr2k_kernel)
TBDSIM_ROUTINE_KERNELS(her2k_kernel)
TBDSIM_ROUTINE_KERNELS(syrkx_kernel)
TBDSIM_ROUTINE_KERNELS(herkx_kernel)
TBDSIM_ROUTINE_KERNELS(trmm_kernel)
TBDSIM_ROUTINE_KERNELS(trsm_kernel)
TBDSIM_ROUTINE_KERNELS(trsm_batched_kernel)
TBDSIM_ROUTINE_KERNELS(geam_kernel)
TBDSIM_ROUTINE_KERNELS(dgmm_kernel)
TBDSIM_ROUTINE_KERNELS(getrf_batched_kernel)
TBDSIM_ROUTINE_KERNELS(getri_batched_kernel)
TBDSIM_ROUTINE_KERNELS(getrs_batched_kernel)
TBDSIM_ROUTINE_KERNELS(matinv_batched_kernel)
TBDSIM_ROUTINE_KERNELS(geqrf_batched_kernel)
TBDSIM_ROUTINE_KERNELS(gels_batched_kernel)
TBDSIM_ROUTINE_KERNELS(tpttr_kernel)
TBDSIM_ROUTINE_KERNELS(trttp_kernel)

// cublasLtMatrixTransform: C = alpha op(A) + beta op(B), one kernel per element type.
TBDSIM_ROUTINE_KERNELS(matrix_transform_kernel)
