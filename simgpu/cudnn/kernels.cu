// Device code of the simulated cuDNN: empty bodies (the simulated driver times kernels, it does not
// run them) under names modelled on what profilers show for real cuDNN 9 kernels. Real cuDNN's
// legacy kernels are C++ templates in namespaces (cudnn::detail::...); ours keep the leaf name as an
// extern "C" symbol. Keep the list in kernel_table.cpp's order.
#include "dnn_params.h"

#define TBDSIM_DNN_KERNEL(name) \
    extern "C" __global__ void name(TbdsimDnnParams) {}

// Convolution, FP32 on FMA units.
TBDSIM_DNN_KERNEL(implicit_convolve_sgemm)
TBDSIM_DNN_KERNEL(precomputed_convolve_sgemm)
TBDSIM_DNN_KERNEL(im2col4d_kernel_gemm_sgemm)
TBDSIM_DNN_KERNEL(dgrad_engine)
TBDSIM_DNN_KERNEL(dgrad2d_alg1_1)
TBDSIM_DNN_KERNEL(wgrad_alg0_engine)
TBDSIM_DNN_KERNEL(wgrad_alg1_engine)
// Convolution on TF32 tensor cores (xmma implicit-GEMM kernels).
TBDSIM_DNN_KERNEL(
    sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nchwkcrs_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel)
TBDSIM_DNN_KERNEL(
    sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nchwkcrs_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel)
TBDSIM_DNN_KERNEL(
    sm80_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nchwkcrs_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel)
// Bias gradient, batch norm, pooling, activation, softmax, tensor arithmetic.
TBDSIM_DNN_KERNEL(convolve_bias_grad_kernel)
TBDSIM_DNN_KERNEL(bn_fw_tr_1C11_kernel_NCHW)
TBDSIM_DNN_KERNEL(bn_fw_inf_1C11_kernel_NCHW)
TBDSIM_DNN_KERNEL(bn_bw_1C11_kernel_new)
TBDSIM_DNN_KERNEL(pooling_fw_4d_kernel)
TBDSIM_DNN_KERNEL(pooling_bw_kernel_max_nchw)
TBDSIM_DNN_KERNEL(pooling_bw_kernel_avg)
TBDSIM_DNN_KERNEL(activation_fw_4d_kernel)
TBDSIM_DNN_KERNEL(activation_bw_4d_kernel)
TBDSIM_DNN_KERNEL(softmax_fw_kernel)
TBDSIM_DNN_KERNEL(softmax_bw_kernel)
TBDSIM_DNN_KERNEL(add_tensor_kernel_v3)
TBDSIM_DNN_KERNEL(set_tensor4d_kernel)
TBDSIM_DNN_KERNEL(scale_tensor4d_kernel)
// Backend (graph) API engines: matmul on FMA units and on TF32 tensor cores, standalone pointwise.
TBDSIM_DNN_KERNEL(sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_kernel)
TBDSIM_DNN_KERNEL(sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel)
TBDSIM_DNN_KERNEL(cudnn_generated_pointwise_kernel)
// Tensor arithmetic and reductions, dropout (state initialisation, forward, backward), batch norm
// through the Ex API (with its fused add and activation).
TBDSIM_DNN_KERNEL(op_generic_tensor_kernel)
TBDSIM_DNN_KERNEL(reduce_tensor_kernel)
TBDSIM_DNN_KERNEL(dropout_init_states_kernel)
TBDSIM_DNN_KERNEL(dropout_fw_kernel)
TBDSIM_DNN_KERNEL(dropout_bw_kernel)
TBDSIM_DNN_KERNEL(bn_fw_tr_1C11_singleread_kernel)
TBDSIM_DNN_KERNEL(bn_bw_1C11_singleread_kernel)
TBDSIM_DNN_KERNEL(transform_tensor_kernel)
// RNNs: one kernel per pass, carrying its GEMMs and cell arithmetic.
TBDSIM_DNN_KERNEL(rnn_forward_kernel)
TBDSIM_DNN_KERNEL(rnn_backward_data_kernel)
TBDSIM_DNN_KERNEL(rnn_backward_weights_kernel)
// Local response and divisive normalization.
TBDSIM_DNN_KERNEL(lrn_fw_kernel)
TBDSIM_DNN_KERNEL(lrn_bw_kernel)
TBDSIM_DNN_KERNEL(divisive_norm_fw_kernel)
TBDSIM_DNN_KERNEL(divisive_norm_bw_kernel)
TBDSIM_DNN_KERNEL(ctc_loss_kernel)
// Multi-head attention: one kernel per pass, carrying its projections, Q.K^T, softmax and P.V.
TBDSIM_DNN_KERNEL(mha_fprop_kernel)
TBDSIM_DNN_KERNEL(mha_dgrad_kernel)
TBDSIM_DNN_KERNEL(mha_wgrad_kernel)
// Fused ops (the conv-with-BN-stats forward, the weight gradient, BN finalization), im2col and the
// INT8x32 filter reorder.
TBDSIM_DNN_KERNEL(fused_scale_bias_act_conv_bnstats_kernel)
TBDSIM_DNN_KERNEL(fused_scale_bias_act_wgrad_kernel)
TBDSIM_DNN_KERNEL(fused_bn_finalize_kernel)
TBDSIM_DNN_KERNEL(im2col_kernel)
TBDSIM_DNN_KERNEL(reorder_filter_bias_kernel)
// Spatial transformer: the affine grid generator and the bilinear sampler, forward and backward.
TBDSIM_DNN_KERNEL(st_grid_generator_fw_kernel)
TBDSIM_DNN_KERNEL(st_grid_generator_bw_kernel)
TBDSIM_DNN_KERNEL(st_bilinear_sampler_fw_kernel)
TBDSIM_DNN_KERNEL(st_bilinear_sampler_bw_kernel)
// Scaled dot-product attention graphs of the backend API: one fused flash-attention kernel per pass.
TBDSIM_DNN_KERNEL(cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0)
TBDSIM_DNN_KERNEL(cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0)
