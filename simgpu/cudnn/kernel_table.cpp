#include "kernel_table.h"

#include <algorithm>
#include <cstddef>

#include "driver_entry_points.h"

// Generated at build time from kernels.fatbin by embed_file.cmake.
extern "C" const unsigned char tbdsim_dnn_fatbin[];
extern "C" const std::size_t tbdsim_dnn_fatbin_size;

namespace tbdsim::dnn {
namespace {

// In TbdsimDnnKernel order; the names must match kernels.cu.
constexpr const char* kNames[kKernelCount] = {
    "implicit_convolve_sgemm",
    "precomputed_convolve_sgemm",
    "im2col4d_kernel_gemm_sgemm",
    "dgrad_engine",
    "dgrad2d_alg1_1",
    "wgrad_alg0_engine",
    "wgrad_alg1_engine",
    "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nchwkcrs_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nchwkcrs_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "sm80_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nchwkcrs_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_"
    "tensor16x8x8_kernel",
    "convolve_bias_grad_kernel",
    "bn_fw_tr_1C11_kernel_NCHW",
    "bn_fw_inf_1C11_kernel_NCHW",
    "bn_bw_1C11_kernel_new",
    "pooling_fw_4d_kernel",
    "pooling_bw_kernel_max_nchw",
    "pooling_bw_kernel_avg",
    "activation_fw_4d_kernel",
    "activation_bw_4d_kernel",
    "softmax_fw_kernel",
    "softmax_bw_kernel",
    "add_tensor_kernel_v3",
    "set_tensor4d_kernel",
    "scale_tensor4d_kernel",
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_kernel",
    "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel",
    "cudnn_generated_pointwise_kernel",
    "op_generic_tensor_kernel",
    "reduce_tensor_kernel",
    "dropout_init_states_kernel",
    "dropout_fw_kernel",
    "dropout_bw_kernel",
    "bn_fw_tr_1C11_singleread_kernel",
    "bn_bw_1C11_singleread_kernel",
    "transform_tensor_kernel",
    "rnn_forward_kernel",
    "rnn_backward_data_kernel",
    "rnn_backward_weights_kernel",
    "lrn_fw_kernel",
    "lrn_bw_kernel",
    "divisive_norm_fw_kernel",
    "divisive_norm_bw_kernel",
    "ctc_loss_kernel",
    "mha_fprop_kernel",
    "mha_dgrad_kernel",
    "mha_wgrad_kernel",
    "fused_scale_bias_act_conv_bnstats_kernel",
    "fused_scale_bias_act_wgrad_kernel",
    "fused_bn_finalize_kernel",
    "im2col_kernel",
    "reorder_filter_bias_kernel",
    "st_grid_generator_fw_kernel",
    "st_grid_generator_bw_kernel",
    "st_bilinear_sampler_fw_kernel",
    "st_bilinear_sampler_bw_kernel",
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0",
    "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0",
};

constexpr int64_t kMaxGridYZ = 65535;

}  // namespace

const char* kernel_name(int kernel) {
    return kernel >= 0 && kernel < kKernelCount ? kNames[kernel] : "?";
}

CUresult load_kernels(const blas::DriverEntryPoints& driver, CUmodule* module, KernelTable* table) {
    CUresult result = driver.module_load_data(module, tbdsim_dnn_fatbin);
    if (result != CUDA_SUCCESS) return result;
    for (int kernel = 0; kernel < kKernelCount; ++kernel) {
        result = driver.module_get_function(&(*table)[kernel], *module, kNames[kernel]);
        if (result != CUDA_SUCCESS) {
            driver.module_unload(*module);
            *module = nullptr;
            return result;
        }
    }
    return CUDA_SUCCESS;
}

unsigned blocks_for(int64_t elements, unsigned threads, unsigned per_thread) {
    const int64_t per_block = static_cast<int64_t>(threads) * per_thread;
    return static_cast<unsigned>(std::clamp<int64_t>((elements + per_block - 1) / per_block, 1, 0x7fffffff));
}

CUresult launch(const blas::DriverEntryPoints& driver, const KernelTable& kernels, CUstream stream,
                const Launch& request) {
    TbdsimDnnParams params = request.params;
    params.operation = request.kernel;
    const TbdsimPrivateApi* api = driver.private_api;
    const bool roofline =
        api != nullptr && api->struct_size >= offsetof(TbdsimPrivateApi, annotate_next_launch_roofline) +
                                                  sizeof(api->annotate_next_launch_roofline);
    if (roofline && request.bytes > 0) {
        api->annotate_next_launch_roofline(request.flops, request.precision, request.bytes);
    } else if (api != nullptr && request.flops > 0) {
        api->annotate_next_launch(request.flops, request.precision);
    }
    void* arguments[] = {&params};
    return driver.launch_kernel(kernels[request.kernel], request.grid_x,
                                static_cast<unsigned>(std::min<int64_t>(request.grid_y, kMaxGridYZ)),
                                static_cast<unsigned>(std::min<int64_t>(request.grid_z, kMaxGridYZ)), request.threads,
                                1, 1, 0, stream, arguments, nullptr);
}

}  // namespace tbdsim::dnn
