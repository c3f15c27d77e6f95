// The simulated libcudnn.so.9's multi-head attention, fused-ops, convolution-helper and
// spatial-transformer families through the public API (descriptor round trips, documented argument
// errors, sizes, one compute call per pass); run by cudnn_api_test.cpp's main.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "cudnn_api_check.h"

namespace cudnn_api_test {
namespace {

cudnnSeqDataDescriptor_t seq_data(int time, int batch, int beam, int vect) {
    cudnnSeqDataDescriptor_t d = nullptr;
    EXPECT_STATUS(cudnnCreateSeqDataDescriptor(&d), CUDNN_STATUS_SUCCESS);
    int dims[CUDNN_SEQDATA_DIM_COUNT] = {};
    dims[CUDNN_SEQDATA_TIME_DIM] = time, dims[CUDNN_SEQDATA_BATCH_DIM] = batch;
    dims[CUDNN_SEQDATA_BEAM_DIM] = beam, dims[CUDNN_SEQDATA_VECT_DIM] = vect;
    const cudnnSeqDataAxis_t axes[] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM,
                                       CUDNN_SEQDATA_VECT_DIM};
    int lengths[16] = {};
    for (int i = 0; i < batch * beam; ++i) lengths[i] = time - i % 2;
    EXPECT_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, static_cast<size_t>(batch * beam),
                                            lengths, nullptr),
                  CUDNN_STATUS_SUCCESS);
    return d;
}

// Sequence data: dims by axis, VECT innermost, one length per batch x beam entry within the time dim;
// everything reads back (the padding fill too).
void check_seq_data() {
    cudnnSeqDataDescriptor_t d = seq_data(10, 3, 1, 16);
    int dims[4] = {10, 3, 1, 16}, lengths[3] = {10, 9, 11};
    const cudnnSeqDataAxis_t vect_outer[] = {CUDNN_SEQDATA_VECT_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                             CUDNN_SEQDATA_TIME_DIM};
    const cudnnSeqDataAxis_t repeated[] = {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                           CUDNN_SEQDATA_VECT_DIM};
    EXPECT_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, vect_outer, 3, lengths, nullptr),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, repeated, 3, lengths, nullptr),
                  CUDNN_STATUS_BAD_PARAM);
    const cudnnSeqDataAxis_t axes[] = {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                       CUDNN_SEQDATA_VECT_DIM};
    EXPECT_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 3, lengths, nullptr),
                  CUDNN_STATUS_BAD_PARAM);  // 11 > 10 steps
    lengths[2] = 7;
    EXPECT_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 2, lengths, nullptr),
                  CUDNN_STATUS_BAD_PARAM);  // 3 x 1 lengths needed
    EXPECT_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 3, dims, axes, 3, lengths, nullptr),
                  CUDNN_STATUS_BAD_PARAM);
    float fill = -1.5f;
    EXPECT_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 3, lengths, &fill),
                  CUDNN_STATUS_SUCCESS);
    cudnnDataType_t type{};
    int got_dims[4] = {}, count = 0, got_lengths[3] = {};
    cudnnSeqDataAxis_t got_axes[4] = {};
    size_t lengths_count = 0;
    float got_fill = 0;
    EXPECT_STATUS(
        cudnnGetSeqDataDescriptor(d, &type, &count, 4, got_dims, got_axes, &lengths_count, 3, got_lengths, &got_fill),
        CUDNN_STATUS_SUCCESS);
    EXPECT(type == CUDNN_DATA_FLOAT && count == 4 && got_dims[CUDNN_SEQDATA_TIME_DIM] == 10 &&
           got_dims[CUDNN_SEQDATA_VECT_DIM] == 16 && got_axes[0] == CUDNN_SEQDATA_TIME_DIM &&
           got_axes[3] == CUDNN_SEQDATA_VECT_DIM && lengths_count == 3 && got_lengths[1] == 9 && got_lengths[2] == 7 &&
           got_fill == -1.5f);
    EXPECT_STATUS(cudnnDestroySeqDataDescriptor(d), CUDNN_STATUS_SUCCESS);
}

}  // namespace

// Multi-head attention (2 heads, Q/K/V 16 wide projected to 8, O projected to 16, biases, 10 query and
// 12 key steps, batch 3): the descriptor reads back, buffer sizes by docs/simgpu-cudnn.md's formula,
// weight regions where the layout puts them, the passes check their arguments and each launches one
// kernel (cudnn.record_api checks their FLOPs in the truth).
void check_attention(cudnnHandle_t handle) {
    check_seq_data();
    cudnnAttnDescriptor_t attn = nullptr;
    EXPECT_STATUS(cudnnCreateAttnDescriptor(&attn), CUDNN_STATUS_SUCCESS);
    const auto set = [&](unsigned mode, int k_proj, cudnnDataType_t compute) {
        return cudnnSetAttnDescriptor(attn, mode, 2, 0.35, CUDNN_DATA_FLOAT, compute, CUDNN_DEFAULT_MATH, nullptr,
                                      nullptr, 16, 16, 16, 8, k_proj, 8, 16, 10, 12, 3, 1);
    };
    EXPECT_STATUS(set(CUDNN_ATTN_QUERYMAP_ALL_TO_ONE, 4, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);  // Q 8, K 4
    EXPECT_STATUS(set(CUDNN_ATTN_QUERYMAP_ALL_TO_ONE, 8, CUDNN_DATA_HALF), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(set(CUDNN_ATTN_QUERYMAP_ALL_TO_ONE, 8, CUDNN_DATA_FLOAT), CUDNN_STATUS_SUCCESS);
    size_t weight_bytes = 0, workspace_bytes = 0, reserve_bytes = 0;
    EXPECT_STATUS(cudnnGetMultiHeadAttnBuffers(handle, attn, &weight_bytes, &workspace_bytes, &reserve_bytes),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(weight_bytes == 4 * (3 * 2 * 8 * 16 + 16 * 16));  // Q, K, V [2, 8, 16], O [1, 16, 16]
    EXPECT_STATUS(set(CUDNN_ATTN_ENABLE_PROJ_BIASES, 8, CUDNN_DATA_FLOAT), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnGetMultiHeadAttnBuffers(handle, attn, &weight_bytes, &workspace_bytes, &reserve_bytes),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(weight_bytes == 4096 + 4 * (3 * 16 + 16));
    // Q, K, V projected (30 + 36 + 36 rows x 16), scores (30 x 2 x 12), output (30 x 16), 4 bytes each.
    EXPECT(workspace_bytes == 4 * (30 * 16 + 36 * 16 + 36 * 16 + 30 * 2 * 12 + 30 * 16));
    EXPECT(reserve_bytes == workspace_bytes);
    unsigned mode = 0;
    int heads = 0, o_proj = 0, kv_max = 0;
    double scaler = 0;
    EXPECT_STATUS(cudnnGetAttnDescriptor(attn, &mode, &heads, &scaler, nullptr, nullptr, nullptr, nullptr, nullptr,
                                         nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &o_proj, nullptr,
                                         &kv_max, nullptr, nullptr),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(mode == CUDNN_ATTN_ENABLE_PROJ_BIASES && heads == 2 && scaler == 0.35 && o_proj == 16 && kv_max == 12);

    void *weights = device_floats(weight_bytes / 4), *dweights = device_floats(weight_bytes / 4),
         *workspace = device_floats(workspace_bytes / 4), *reserve = device_floats(reserve_bytes / 4);
    cudnnTensorDescriptor_t w_desc = nullptr;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&w_desc), CUDNN_STATUS_SUCCESS);
    void* addr = nullptr;
    const auto region = [&](cudnnMultiHeadAttnWeightKind_t kind, int d0, int d1, int d2, size_t offset) {
        EXPECT_STATUS(cudnnGetMultiHeadAttnWeights(handle, attn, kind, weight_bytes, weights, w_desc, &addr),
                      CUDNN_STATUS_SUCCESS);
        cudnnDataType_t type{};
        int dims = 0, dim[3] = {}, stride[3] = {};
        EXPECT_STATUS(cudnnGetTensorNdDescriptor(w_desc, 3, &type, &dims, dim, stride), CUDNN_STATUS_SUCCESS);
        EXPECT(dims == 3 && dim[0] == d0 && dim[1] == d1 && dim[2] == d2 && stride[2] == 1 && stride[0] == d1 * d2);
        EXPECT(addr == static_cast<char*>(weights) + offset);
    };
    region(CUDNN_MH_ATTN_Q_WEIGHTS, 2, 8, 16, 0);
    region(CUDNN_MH_ATTN_V_WEIGHTS, 2, 8, 16, 2048);
    region(CUDNN_MH_ATTN_O_WEIGHTS, 1, 16, 16, 3072);
    region(CUDNN_MH_ATTN_K_BIASES, 2, 8, 1, 4096 + 64);
    region(CUDNN_MH_ATTN_O_BIASES, 1, 16, 1, 4096 + 192);
    EXPECT_STATUS(
        cudnnGetMultiHeadAttnWeights(handle, attn, CUDNN_MH_ATTN_Q_WEIGHTS, weight_bytes - 4, weights, w_desc, &addr),
        CUDNN_STATUS_BAD_PARAM);
    cudnnAttnDescriptor_t plain = nullptr;  // no projections of V and O, no biases
    EXPECT_STATUS(cudnnCreateAttnDescriptor(&plain), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnSetAttnDescriptor(plain, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE, 2, 1.0, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                               CUDNN_DEFAULT_MATH, nullptr, nullptr, 16, 16, 16, 8, 8, 0, 0, 10, 12, 3, 1),
        CUDNN_STATUS_SUCCESS);
    size_t plain_bytes = 0, plain_ws = 0;
    EXPECT_STATUS(cudnnGetMultiHeadAttnBuffers(handle, plain, &plain_bytes, &plain_ws, nullptr), CUDNN_STATUS_SUCCESS);
    EXPECT(plain_bytes == 2048);  // Q and K [2, 8, 16] only
    addr = weights;
    EXPECT_STATUS(
        cudnnGetMultiHeadAttnWeights(handle, plain, CUDNN_MH_ATTN_V_WEIGHTS, plain_bytes, weights, w_desc, &addr),
        CUDNN_STATUS_SUCCESS);
    EXPECT(addr == nullptr);
    EXPECT_STATUS(cudnnDestroyAttnDescriptor(plain), CUDNN_STATUS_SUCCESS);

    cudnnSeqDataDescriptor_t q = seq_data(10, 3, 1, 16), kv = seq_data(12, 3, 1, 16), o = seq_data(10, 3, 1, 16),
                             bad_o = seq_data(10, 3, 1, 8);
    void *qd = device_floats(480), *kd = device_floats(576), *vd = device_floats(576), *od = device_floats(480);
    int lo[10] = {}, hi[10] = {}, causal[10] = {};
    for (int t = 0; t < 10; ++t) hi[t] = 12, causal[t] = t + 1;
    const auto forward = [&](const int* hi_win, cudnnSeqDataDescriptor_t o_desc, size_t ws_bytes, void* res) {
        return cudnnMultiHeadAttnForward(handle, attn, -1, lo, hi_win, nullptr, nullptr, q, qd, nullptr, kv, kd, kv, vd,
                                         o_desc, od, weight_bytes, weights, ws_bytes, workspace,
                                         res != nullptr ? reserve_bytes : 0, res);
    };
    EXPECT_STATUS(forward(hi, o, workspace_bytes, reserve), CUDNN_STATUS_SUCCESS);      // training, full windows
    EXPECT_STATUS(forward(causal, o, workspace_bytes, nullptr), CUDNN_STATUS_SUCCESS);  // inference, causal
    EXPECT_STATUS(cudnnMultiHeadAttnForward(handle, attn, 4, lo, causal, nullptr, nullptr, q, qd, nullptr, kv, kd, kv,
                                            vd, o, od, weight_bytes, weights, workspace_bytes, workspace, 0, nullptr),
                  CUDNN_STATUS_SUCCESS);  // inference, query step 4 alone
    EXPECT_STATUS(
        cudnnMultiHeadAttnForward(handle, attn, 4, lo, causal, nullptr, nullptr, q, qd, nullptr, kv, kd, kv, vd, o, od,
                                  weight_bytes, weights, workspace_bytes, workspace, reserve_bytes, reserve),
        CUDNN_STATUS_BAD_PARAM);  // one step at a time is for inference
    EXPECT_STATUS(forward(hi, bad_o, workspace_bytes, reserve), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(forward(hi, o, workspace_bytes - 16, reserve), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(forward(hi, kv, workspace_bytes, reserve), CUDNN_STATUS_BAD_PARAM);  // output 12 steps
    EXPECT_STATUS(
        cudnnMultiHeadAttnBackwardData(handle, attn, lo, hi, nullptr, nullptr, o, od, q, qd, qd, kv, kd, kd, kv, vd, vd,
                                       weight_bytes, weights, workspace_bytes, workspace, reserve_bytes, reserve),
        CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnMultiHeadAttnBackwardData(handle, attn, lo, hi, nullptr, nullptr, o, od, q, qd, qd, kv, kd, kd, kv, vd, vd,
                                       weight_bytes, weights, workspace_bytes, workspace, 0, nullptr),
        CUDNN_STATUS_BAD_PARAM);  // backward needs the reserve space
    EXPECT_STATUS(cudnnMultiHeadAttnBackwardWeights(handle, attn, CUDNN_WGRAD_MODE_SET, q, qd, kv, kd, kv, vd, o, od,
                                                    weight_bytes, weights, dweights, workspace_bytes, workspace,
                                                    reserve_bytes, reserve),
                  CUDNN_STATUS_SUCCESS);
    for (void* p : {weights, dweights, workspace, reserve, qd, kd, vd, od}) cudaFree(p);
    for (cudnnSeqDataDescriptor_t d : {q, kv, o, bad_o}) cudnnDestroySeqDataDescriptor(d);
    cudnnDestroyTensorDescriptor(w_desc);
    EXPECT_STATUS(cudnnDestroyAttnDescriptor(attn), CUDNN_STATUS_SUCCESS);
}

namespace {

// The shapes the fused-ops checks share: x [2, 32, 8, 8], w [16, 32, 3, 3], padding 1, y [2, 16, 8, 8],
// per-channel statistics [1, 16, 1, 1], with device buffers for each.
struct FusedShapes {
    cudnnTensorDescriptor_t x_desc, y_desc, stats;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv;
    void *x, *w, *y, *per_k;
};

FusedShapes fused_shapes() {
    FusedShapes s{tensor4d(2, 32, 8, 8), tensor4d(2, 16, 8, 8),      tensor4d(1, 16, 1, 1), nullptr,          nullptr,
                  device_floats(4096),   device_floats(16 * 32 * 9), device_floats(2048),   device_floats(64)};
    EXPECT_STATUS(cudnnCreateFilterDescriptor(&s.w_desc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetFilter4dDescriptor(s.w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 16, 32, 3, 3),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateConvolutionDescriptor(&s.conv), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetConvolution2dDescriptor(s.conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                  CUDNN_STATUS_SUCCESS);
    return s;
}

void release(const FusedShapes& s) {
    for (void* p : {s.x, s.w, s.y, s.per_k}) cudaFree(p);
    cudnnDestroyConvolutionDescriptor(s.conv);
    cudnnDestroyFilterDescriptor(s.w_desc);
    for (cudnnTensorDescriptor_t d : {s.x_desc, s.y_desc, s.stats}) cudnnDestroyTensorDescriptor(d);
}

const cudnnFusedOpsPointerPlaceHolder_t kAligned = CUDNN_PTR_16B_ALIGNED, kElemAligned = CUDNN_PTR_ELEM_ALIGNED;

void set_const(cudnnFusedOpsConstParamPack_t p, cudnnFusedOpsConstParamLabel_t label, const void* param) {
    EXPECT_STATUS(cudnnSetFusedOpsConstParamPackAttribute(p, label, param), CUDNN_STATUS_SUCCESS);
}

void set_variant(cudnnFusedOpsVariantParamPack_t p, cudnnFusedOpsVariantParamLabel_t label, void* ptr) {
    EXPECT_STATUS(cudnnSetFusedOpsVariantParamPackAttribute(p, label, ptr), CUDNN_STATUS_SUCCESS);
}

// The conv-with-BN-stats pack (scale, bias, ReLU, statistics) and what it reads back.
cudnnFusedOpsConstParamPack_t conv_bnstats_pack(const FusedShapes& s, cudnnActivationDescriptor_t relu) {
    cudnnFusedOpsConstParamPack_t pack = nullptr;
    EXPECT_STATUS(cudnnCreateFusedOpsConstParamPack(&pack, static_cast<cudnnFusedOps_t>(7)), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnCreateFusedOpsConstParamPack(&pack, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS),
                  CUDNN_STATUS_SUCCESS);
    set_const(pack, CUDNN_PARAM_XDESC, s.x_desc), set_const(pack, CUDNN_PARAM_WDESC, s.w_desc);
    set_const(pack, CUDNN_PARAM_CONV_DESC, s.conv), set_const(pack, CUDNN_PARAM_YDESC, s.y_desc);
    set_const(pack, CUDNN_PARAM_ACTIVATION_DESC, relu), set_const(pack, CUDNN_PARAM_YSTATS_DESC, s.stats);
    set_const(pack, CUDNN_PARAM_BN_EQSCALEBIAS_DESC, s.stats);
    for (const auto label :
         {CUDNN_PARAM_XDATA_PLACEHOLDER, CUDNN_PARAM_WDATA_PLACEHOLDER, CUDNN_PARAM_YDATA_PLACEHOLDER,
          CUDNN_PARAM_YSUM_PLACEHOLDER, CUDNN_PARAM_YSQSUM_PLACEHOLDER}) {
        set_const(pack, label, &kAligned);
    }
    set_const(pack, CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER, &kElemAligned);
    set_const(pack, CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER, &kElemAligned);
    EXPECT_STATUS(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_ZDATA_PLACEHOLDER, nullptr),
                  CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    EXPECT_STATUS(
        cudnnSetFusedOpsConstParamPackAttribute(pack, static_cast<cudnnFusedOpsConstParamLabel_t>(40), &kElemAligned),
        CUDNN_STATUS_BAD_PARAM);
    cudnnTensorDescriptor_t got = tensor4d(1, 1, 1, 1);
    int is_null = -1;
    EXPECT_STATUS(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_YDESC, got, &is_null),
                  CUDNN_STATUS_SUCCESS);
    cudnnDataType_t type{};
    int n = 0, c = 0, h = 0, w = 0, ns = 0, cs = 0, hs = 0, ws = 0;
    EXPECT_STATUS(cudnnGetTensor4dDescriptor(got, &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws), CUDNN_STATUS_SUCCESS);
    EXPECT(is_null == 0 && n == 2 && c == 16 && h == 8 && w == 8);
    EXPECT_STATUS(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_ZDESC, got, &is_null),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(is_null == 1);
    cudnnFusedOpsPointerPlaceHolder_t placeholder{};
    EXPECT_STATUS(
        cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER, &placeholder, &is_null),
        CUDNN_STATUS_SUCCESS);
    EXPECT(placeholder == CUDNN_PTR_ELEM_ALIGNED && is_null == 0);
    cudnnDestroyTensorDescriptor(got);
    return pack;
}

// The conv-with-BN-stats plan: made from a pack of its own ops only, no workspace; it runs once every
// placeholder has its pointer. The variant pack reads back. The ops reserved for future use are not
// supported.
void check_fused_conv_bnstats(cudnnHandle_t handle, const FusedShapes& s) {
    cudnnActivationDescriptor_t relu = nullptr;
    EXPECT_STATUS(cudnnCreateActivationDescriptor(&relu), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0),
                  CUDNN_STATUS_SUCCESS);
    cudnnFusedOpsConstParamPack_t pack = conv_bnstats_pack(s, relu), reserved_pack = nullptr;
    cudnnFusedOpsPlan_t plan = nullptr, wrong_plan = nullptr, reserved = nullptr;
    size_t workspace_bytes = 1;
    EXPECT_STATUS(cudnnCreateFusedOpsPlan(&plan, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateFusedOpsPlan(&wrong_plan, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnMakeFusedOpsPlan(handle, wrong_plan, pack, &workspace_bytes), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnMakeFusedOpsPlan(handle, plan, pack, &workspace_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT(workspace_bytes == 0);
    cudnnFusedOpsVariantParamPack_t vars = nullptr;
    EXPECT_STATUS(cudnnCreateFusedOpsVariantParamPack(&vars, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS),
                  CUDNN_STATUS_SUCCESS);
    set_variant(vars, CUDNN_PTR_XDATA, s.x), set_variant(vars, CUDNN_PTR_WDATA, s.w);
    set_variant(vars, CUDNN_PTR_YDATA, s.y), set_variant(vars, CUDNN_PTR_BN_EQSCALE, s.per_k);
    set_variant(vars, CUDNN_PTR_BN_EQBIAS, s.per_k);
    EXPECT_STATUS(cudnnFusedOpsExecute(handle, plan, vars), CUDNN_STATUS_BAD_PARAM);  // no y sums yet
    set_variant(vars, CUDNN_PTR_YSUM, s.per_k), set_variant(vars, CUDNN_PTR_YSQSUM, static_cast<char*>(s.per_k) + 64);
    EXPECT_STATUS(cudnnFusedOpsExecute(handle, plan, vars), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnFusedOpsExecute(handle, wrong_plan, vars), CUDNN_STATUS_BAD_PARAM);  // not made
    double epsilon = 1e-5, got_epsilon = 0;
    void* got_ptr = nullptr;
    set_variant(vars, CUDNN_SCALAR_DOUBLE_BN_EPSILON, &epsilon);
    EXPECT_STATUS(cudnnGetFusedOpsVariantParamPackAttribute(vars, CUDNN_SCALAR_DOUBLE_BN_EPSILON, &got_epsilon),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnGetFusedOpsVariantParamPackAttribute(vars, CUDNN_PTR_YDATA, &got_ptr), CUDNN_STATUS_SUCCESS);
    EXPECT(got_epsilon == 1e-5 && got_ptr == s.y);
    EXPECT_STATUS(cudnnCreateFusedOpsPlan(&reserved, CUDNN_FUSED_CONV_SCALE_BIAS_ADD_ACTIVATION), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateFusedOpsConstParamPack(&reserved_pack, CUDNN_FUSED_CONV_SCALE_BIAS_ADD_ACTIVATION),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnMakeFusedOpsPlan(handle, reserved, reserved_pack, &workspace_bytes), CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(cudnnDestroyFusedOpsVariantParamPack(vars), CUDNN_STATUS_SUCCESS);
    for (cudnnFusedOpsPlan_t p : {plan, wrong_plan, reserved}) cudnnDestroyFusedOpsPlan(p);
    for (cudnnFusedOpsConstParamPack_t p : {pack, reserved_pack}) {
        EXPECT_STATUS(cudnnDestroyFusedOpsConstParamPack(p), CUDNN_STATUS_SUCCESS);
    }
    cudnnDestroyActivationDescriptor(relu);
}

// The weight gradient (an FP32 workspace of K x C x R x S, required) and BN finalization for training
// (per channel of the statistics descriptor, which it needs).
void check_fused_wgrad_and_finalize(cudnnHandle_t handle, const FusedShapes& s) {
    cudnnFusedOpsConstParamPack_t wgrad_pack = nullptr, bn_pack = nullptr;
    cudnnFusedOpsPlan_t wgrad_plan = nullptr, bn_plan = nullptr;
    cudnnFusedOpsVariantParamPack_t wgrad_vars = nullptr, bn_vars = nullptr;
    size_t workspace_bytes = 0;
    EXPECT_STATUS(cudnnCreateFusedOpsConstParamPack(&wgrad_pack, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateFusedOpsPlan(&wgrad_plan, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD), CUDNN_STATUS_SUCCESS);
    set_const(wgrad_pack, CUDNN_PARAM_XDESC, s.x_desc), set_const(wgrad_pack, CUDNN_PARAM_CONV_DESC, s.conv);
    set_const(wgrad_pack, CUDNN_PARAM_DYDESC, s.y_desc);
    EXPECT_STATUS(cudnnMakeFusedOpsPlan(handle, wgrad_plan, wgrad_pack, &workspace_bytes), CUDNN_STATUS_BAD_PARAM);
    set_const(wgrad_pack, CUDNN_PARAM_DWDESC, s.w_desc);
    for (const auto label :
         {CUDNN_PARAM_XDATA_PLACEHOLDER, CUDNN_PARAM_DYDATA_PLACEHOLDER, CUDNN_PARAM_DWDATA_PLACEHOLDER}) {
        set_const(wgrad_pack, label, &kAligned);
    }
    EXPECT_STATUS(cudnnMakeFusedOpsPlan(handle, wgrad_plan, wgrad_pack, &workspace_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT(workspace_bytes == 16 * 32 * 9 * 4);
    EXPECT_STATUS(cudnnCreateFusedOpsVariantParamPack(&wgrad_vars, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD),
                  CUDNN_STATUS_SUCCESS);
    void* workspace = device_floats(workspace_bytes / 4);
    set_variant(wgrad_vars, CUDNN_PTR_XDATA, s.x), set_variant(wgrad_vars, CUDNN_PTR_DYDATA, s.y);
    set_variant(wgrad_vars, CUDNN_PTR_DWDATA, s.w);
    EXPECT_STATUS(cudnnFusedOpsExecute(handle, wgrad_plan, wgrad_vars), CUDNN_STATUS_BAD_PARAM);  // no workspace
    set_variant(wgrad_vars, CUDNN_PTR_WORKSPACE, workspace);
    set_variant(wgrad_vars, CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES, &workspace_bytes);
    EXPECT_STATUS(cudnnFusedOpsExecute(handle, wgrad_plan, wgrad_vars), CUDNN_STATUS_SUCCESS);

    EXPECT_STATUS(cudnnCreateFusedOpsConstParamPack(&bn_pack, CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateFusedOpsPlan(&bn_plan, CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnMakeFusedOpsPlan(handle, bn_plan, bn_pack, &workspace_bytes), CUDNN_STATUS_BAD_PARAM);
    set_const(bn_pack, CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC, s.stats);
    EXPECT_STATUS(cudnnMakeFusedOpsPlan(handle, bn_plan, bn_pack, &workspace_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateFusedOpsVariantParamPack(&bn_vars, CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnFusedOpsExecute(handle, bn_plan, bn_vars), CUDNN_STATUS_SUCCESS);
    cudaFree(workspace);
    for (cudnnFusedOpsVariantParamPack_t p : {wgrad_vars, bn_vars}) cudnnDestroyFusedOpsVariantParamPack(p);
    for (cudnnFusedOpsPlan_t p : {wgrad_plan, bn_plan}) cudnnDestroyFusedOpsPlan(p);
    for (cudnnFusedOpsConstParamPack_t p : {wgrad_pack, bn_pack}) cudnnDestroyFusedOpsConstParamPack(p);
}

// im2col: (2 x 8 x 8) rows of (32 x 3 x 3) columns; the reorder takes INT8 NCHW_VECT_C filters only.
void check_convolution_helpers(cudnnHandle_t handle, const FusedShapes& s) {
    void* col = device_floats(2 * 64 * 32 * 9);
    EXPECT_STATUS(cudnnIm2Col(handle, s.x_desc, s.x, s.w_desc, s.conv, col), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnIm2Col(handle, s.x_desc, s.x, s.w_desc, s.conv, nullptr), CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    EXPECT_STATUS(cudnnIm2Col(handle, s.y_desc, s.x, s.w_desc, s.conv, col), CUDNN_STATUS_BAD_PARAM);  // 16 channels
    cudnnFilterDescriptor_t int8_w = nullptr;
    EXPECT_STATUS(cudnnCreateFilterDescriptor(&int8_w), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetFilter4dDescriptor(int8_w, CUDNN_DATA_INT8, CUDNN_TENSOR_NCHW_VECT_C, 16, 32, 3, 3),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnReorderFilterAndBias(handle, int8_w, CUDNN_DEFAULT_REORDER, s.w, col, 1, s.per_k, s.per_k),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnReorderFilterAndBias(handle, s.w_desc, CUDNN_DEFAULT_REORDER, s.w, col, 0, nullptr, nullptr),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnReorderFilterAndBias(handle, int8_w, CUDNN_DEFAULT_REORDER, s.w, col, 1, nullptr, nullptr),
                  CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    cudnnDestroyFilterDescriptor(int8_w);
    cudaFree(col);
}

}  // namespace

// Fused ops: packs store descriptors by value and placeholders, pointers and scalars, and read them
// back; plans check their packs and run one kernel each (cudnn.record_api checks the FLOPs). Then
// im2col and the INT8x32 filter reorder.
void check_fused_ops(cudnnHandle_t handle) {
    const FusedShapes shapes = fused_shapes();
    check_fused_conv_bnstats(handle, shapes);
    check_fused_wgrad_and_finalize(handle, shapes);
    check_convolution_helpers(handle, shapes);
    release(shapes);
}

// Spatial transformer: the descriptor takes the bilinear sampler and 2-d transformations only; the
// grid generator and the sampler check x and y against it and launch one kernel each (cudnn.record_api
// checks their FLOPs).
void check_spatial_transformer(cudnnHandle_t handle) {
    cudnnSpatialTransformerDescriptor_t st = nullptr;
    EXPECT_STATUS(cudnnCreateSpatialTransformerDescriptor(&st), CUDNN_STATUS_SUCCESS);
    void *theta = device_floats(12), *grid = device_floats(256), *dgrid = device_floats(256);
    EXPECT_STATUS(cudnnSpatialTfGridGeneratorForward(handle, st, theta, grid), CUDNN_STATUS_BAD_PARAM);  // not set
    const int dims[] = {2, 3, 8, 8}, dims_3d[] = {2, 3, 4, 8, 8};
    EXPECT_STATUS(
        cudnnSetSpatialTransformerNdDescriptor(st, static_cast<cudnnSamplerType_t>(1), CUDNN_DATA_FLOAT, 4, dims),
        CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 5, dims_3d),
                  CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_INT8, 4, dims),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSpatialTfGridGeneratorForward(handle, st, theta, grid), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSpatialTfGridGeneratorForward(handle, st, theta, nullptr), CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    cudnnTensorDescriptor_t x_desc = tensor4d(2, 3, 16, 16), y_desc = tensor4d(2, 3, 8, 8),
                            wrong_y = tensor4d(2, 3, 8, 4), wrong_x = tensor4d(2, 4, 16, 16);
    void *x = device_floats(2 * 3 * 256), *dx = device_floats(2 * 3 * 256), *y = device_floats(2 * 3 * 64);
    const float one = 1, zero = 0;
    EXPECT_STATUS(cudnnSpatialTfSamplerForward(handle, st, &one, x_desc, x, grid, &zero, y_desc, y),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSpatialTfSamplerForward(handle, st, &one, x_desc, x, grid, &zero, wrong_y, y),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSpatialTfSamplerForward(handle, st, &one, wrong_x, x, grid, &zero, y_desc, y),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSpatialTfSamplerBackward(handle, st, &one, x_desc, x, &zero, x_desc, dx, &one, y_desc, y, grid,
                                                &zero, dgrid),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSpatialTfSamplerBackward(handle, st, &one, x_desc, x, &zero, y_desc, dx, &one, y_desc, y, grid,
                                                &zero, dgrid),
                  CUDNN_STATUS_BAD_PARAM);  // dx not shaped as x
    EXPECT_STATUS(cudnnSpatialTfGridGeneratorBackward(handle, st, dgrid, theta), CUDNN_STATUS_SUCCESS);
    for (void* p : {theta, grid, dgrid, x, dx, y}) cudaFree(p);
    for (cudnnTensorDescriptor_t d : {x_desc, y_desc, wrong_y, wrong_x}) cudnnDestroyTensorDescriptor(d);
    EXPECT_STATUS(cudnnDestroySpatialTransformerDescriptor(st), CUDNN_STATUS_SUCCESS);
}

}  // namespace cudnn_api_test
