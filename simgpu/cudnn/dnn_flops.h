// How the simulated cuDNN counts the FLOPs of its operations (docs/simgpu-cudnn.md), shared with the
// collector's cuDNN hooks so that a trace's library calls and the simulator's truth agree exactly.
// Header only, no cuDNN types: plain enums and counts.
#pragma once

#include <cstdint>

namespace tbdsim::dnn {

// Convolution (all three passes): 2 * N * K * (C / groups) * prod(filter dims) * prod(output dims).
inline double convolution_flops(int64_t n, int64_t c, int64_t k, int64_t groups, int64_t filter_spatial,
                                int64_t output_spatial) {
    return 2.0 * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(c / groups) *
           static_cast<double>(filter_spatial) * static_cast<double>(output_spatial);
}

enum class BatchNormPass { Training, Inference, Backward };

// Per element of x: training 7 (mean 1, variance 2, normalise and affine 4), inference 4, backward
// 10 (two reductions 3, normalised input 2, input gradient 5).
inline double batch_norm_flops(BatchNormPass pass, int64_t elements) {
    const double per = pass == BatchNormPass::Training ? 7 : pass == BatchNormPass::Inference ? 4 : 10;
    return per * static_cast<double>(elements);
}

// cudnnActivationMode_t values: RELU (1), CLIPPED_RELU (3) and IDENTITY (5) are comparisons or
// copies, 0 FLOPs; the others (sigmoid, tanh, ELU, swish) 4 per element forward, 3 backward.
inline double activation_flops(int mode, bool backward, int64_t elements) {
    if (mode == 1 || mode == 3 || mode == 5) return 0;
    return (backward ? 3.0 : 4.0) * static_cast<double>(elements);
}

// cudnnPoolingMode_t: max pooling (0, 3) compares only; average pooling adds the window and scales
// once, per output element (forward) or per output gradient element (backward).
inline double pooling_flops(int mode, int64_t window, int64_t output_elements) {
    if (mode == 0 || mode == 3) return 0;
    return static_cast<double>(window + 1) * static_cast<double>(output_elements);
}

// Softmax: 4 per element either way (forward: subtract max, exp, sum, scale; backward: dot product
// 2, subtract, multiply).
inline double softmax_flops(int64_t elements) {
    return 4.0 * static_cast<double>(elements);
}

// cudnnAddTensor: alpha * A + beta * C per element of C.
inline double add_tensor_flops(int64_t elements) {
    return 3.0 * static_cast<double>(elements);
}

// Backend matmul: 2 * batch * M * N * K.
inline double matmul_flops(int64_t batch, int64_t m, int64_t n, int64_t k) {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// Backend pointwise operations (cudnnPointwiseMode_t): MAX (3), MIN (2), IDENTITY (21), RELU_FWD (100)
// and RELU_BWD (200) compare or copy, 0 FLOPs; every other mode 1 per output element.
inline double pointwise_flops(int mode, int64_t elements) {
    if (mode == 2 || mode == 3 || mode == 21 || mode == 100 || mode == 200) return 0;
    return static_cast<double>(elements);
}

// cudnnConvolutionBiasActivationForward, y = act(alpha1 * conv(x, w) + alpha2 * z + bias): the
// convolution, then per output element 4 (scale by alpha1, multiply z by alpha2 and add, add the
// bias) and the activation's forward FLOPs (RELU and IDENTITY, the modes it accepts: 0).
inline double convolution_bias_activation_flops(double convolution, int activation_mode, int64_t output_elements) {
    return convolution + 4.0 * static_cast<double>(output_elements) +
           activation_flops(activation_mode, false, output_elements);
}

// cudnnTransformTensor, y = alpha * x + beta * y into y's layout: as cudnnAddTensor, 3 per element.
inline double transform_tensor_flops(int64_t elements) {
    return add_tensor_flops(elements);
}

// cudnnOpTensor, C = op(alpha1 * A, alpha2 * B) + beta * C, per element of C: alpha1 1, alpha2 1
// (binary ops only: SQRT and NOT ignore B), the op 1 (ADD, MUL, SQRT; MIN, MAX and NOT compare: 0),
// beta * C and the add 2. cudnnOpTensorOp_t: ADD 0, MUL 1, MIN 2, MAX 3, SQRT 4, NOT 5.
inline double op_tensor_flops(int op, int64_t elements) {
    const bool binary = op != 4 && op != 5;
    const bool arithmetic = op == 0 || op == 1 || op == 4;
    return (3.0 + (binary ? 1 : 0) + (arithmetic ? 1 : 0)) * static_cast<double>(elements);
}

// cudnnReduceTensor, C = reduce(alpha * A) + beta * C: per element of A, alpha 1 and the combining
// step (ADD, MUL, AVG, NORM1, MUL_NO_ZEROS 1; NORM2 2, a square and an add; MIN, MAX, AMAX compare:
// 0); per element of C, beta * C and the add 2, plus the final divide (AVG) or square root (NORM2).
// cudnnReduceTensorOp_t: ADD 0, MUL 1, MIN 2, MAX 3, AMAX 4, AVG 5, NORM1 6, NORM2 7, MUL_NO_ZEROS 8.
inline double reduce_tensor_flops(int op, int64_t input_elements, int64_t output_elements) {
    const double combine = op == 7 ? 2 : (op == 2 || op == 3 || op == 4) ? 0 : 1;
    const double finish = op == 5 || op == 7 ? 1 : 0;
    return (1.0 + combine) * static_cast<double>(input_elements) +
           (2.0 + finish) * static_cast<double>(output_elements);
}

// Scaled dot-product attention through the backend API (a fused flash-attention kernel): the
// graph's matmuls (forward Q.K^T and P.V; backward the recomputed Q.K^T, dP, dV, dQ and dK), each
// 2 * batch * M * N * K, plus the softmax over the scores (batch x heads x s_q x s_kv elements) at
// softmax_flops' 4 per element, twice in the backward pass (recomputing P, then its gradient).
inline double attention_flops(double matmul_flops, int64_t score_elements, bool backward) {
    return matmul_flops + (backward ? 8.0 : 4.0) * static_cast<double>(score_elements);
}

// Dropout per element: forward 2 (random bits to a uniform float, scale the kept value by 1/(1-p);
// the keep test is a comparison), backward 1 (the scale).
inline double dropout_flops(bool backward, int64_t elements) {
    return (backward ? 1.0 : 2.0) * static_cast<double>(elements);
}

// Batch norm through the Ex API: the plain pass, plus per element 1 for the added z
// (CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) and the activation's FLOPs (ReLU: 0) when fused.
inline double batch_norm_ex_flops(BatchNormPass pass, bool add, int activation_mode, int64_t elements) {
    const double extra =
        (add ? 1.0 : 0.0) * static_cast<double>(elements) +
        (activation_mode >= 0 ? activation_flops(activation_mode, pass == BatchNormPass::Backward, elements) : 0.0);
    return batch_norm_flops(pass, elements) + extra;
}

// RNNs (cudnnRNNForward, cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8), over the time steps
// actually run (`steps`: the sum of the sequence lengths), per layer and direction:
//   GEMMs   2 * steps * gates * hidden * (layer input + hidden): the input and recurrent matrices;
//   biases  steps * gates * hidden per bias vector (double bias 2, single 1, none 0);
//   cell    steps * hidden * per-unit element-wise FLOPs (RELU 0, TANH 4, LSTM 24: three sigmoids and
//           two tanh at 4, three products and an add; GRU 17: two sigmoids and a tanh at 4, three
//           products, two adds).
// Forward counts all three, backward data the GEMMs and the cell, backward weights the GEMMs and
// one add per bias element. Gates: RELU and TANH 1, LSTM 4, GRU 3. cudnnRNNMode_t: RELU 0, TANH 1,
// LSTM 2, GRU 3; cudnnRNNBiasMode_t: NO_BIAS 0, SINGLE_INP 1, DOUBLE 2, SINGLE_REC 3. Layer 0's input
// is the input size, the others' hidden * directions.
enum class RnnPass { Forward, BackwardData, BackwardWeights };

struct RnnShape {
    int cell = 2;
    int bias_mode = 2;
    int layers = 1;
    int directions = 1;
    int64_t input = 0;
    int64_t hidden = 0;
    int64_t steps = 0;
};

inline int rnn_gates(int cell) {
    return cell == 2 ? 4 : cell == 3 ? 3 : 1;
}

inline int rnn_bias_vectors(int bias_mode) {
    return bias_mode == 2 ? 2 : bias_mode == 0 ? 0 : 1;
}

inline double rnn_flops(RnnPass pass, const RnnShape& s) {
    const double cell_per_unit = s.cell == 2 ? 24 : s.cell == 3 ? 17 : s.cell == 1 ? 4 : 0;
    const double units = static_cast<double>(rnn_gates(s.cell)) * static_cast<double>(s.hidden);
    const double steps = static_cast<double>(s.steps);
    double total = 0;
    for (int layer = 0; layer < s.layers; ++layer) {
        const double in = layer == 0 ? static_cast<double>(s.input) : static_cast<double>(s.hidden) * s.directions;
        const double gemm = 2.0 * steps * units * (in + static_cast<double>(s.hidden));
        const double bias = steps * units * rnn_bias_vectors(s.bias_mode);
        const double cell = steps * static_cast<double>(s.hidden) * cell_per_unit;
        const double per_direction = pass == RnnPass::Forward        ? gemm + bias + cell
                                     : pass == RnnPass::BackwardData ? gemm + cell
                                                                     : gemm + bias;
        total += per_direction * s.directions;
    }
    return total;
}

// Local response normalization across channels (window n): per element, forward 2n (the window's
// sum of squares) + 6 (scale by alpha/n, add k, power -beta at 4) + 3 (the call's alpha/beta blend);
// backward 4n + 12. Divisive normalization (an n x n spatial window, cuDNN's lrnN): per element,
// forward 2n^2 + 10 (the mean subtracted, square root and divide at 5, the blend), backward 4n^2 + 14.
inline double lrn_flops(bool backward, int64_t window, int64_t elements) {
    const double w = static_cast<double>(window);
    return (backward ? 4.0 * w + 12.0 : 2.0 * w + 9.0) * static_cast<double>(elements);
}
inline double divisive_normalization_flops(bool backward, int64_t window, int64_t elements) {
    const double area = static_cast<double>(window) * static_cast<double>(window);
    return (backward ? 4.0 * area + 14.0 : 2.0 * area + 10.0) * static_cast<double>(elements);
}

// CTC loss over probs [T, N, A]: the softmax 4 per element of probs (CUDNN_LOSS_NORMALIZATION_SOFTMAX),
// the alpha and beta recursions 4 per state (2 label-length + 1 states) per time step run, per sample,
// and the gradient 2 per element of probs when gradients are asked for. `label_steps` is the sum over
// the samples of input length x (2 x label length + 1).
inline double ctc_loss_flops(bool softmax, bool gradients, int64_t probs_elements, int64_t label_steps) {
    const double per_element = (softmax ? 4.0 : 0.0) + (gradients ? 2.0 : 0.0);
    return per_element * static_cast<double>(probs_elements) + 2.0 * 4.0 * static_cast<double>(label_steps);
}

// Backward bias: one add per element of dy.
inline double bias_gradient_flops(int64_t elements) {
    return static_cast<double>(elements);
}

// Multi-head attention (cudnnMultiHeadAttn*). `rows_q` = batch x beam x query time steps, `rows_kv` =
// the key/value sequences' rows (batch, or batch x beam with CUDNN_ATTN_QUERYMAP_ONE_TO_ONE, x key
// time steps); `window_pairs` = the (query, key) pairs the attention windows admit, summed over the
// query rows. Per head: projections 2 x rows x size x proj (skipped where proj is 0), Q.K^T and P.V
// 2 x pairs x qk (or v) width, softmax 4 per pair (softmax_flops), output projection 2 x rows_q x
// heads x v width x o_proj, biases 1 per projected element. Backward data: the O projection's and the
// input projections' data gradients (as forward) and the attention core twice over (dP, dV, dQ, dK
// at 2 x pairs x width each, softmax backward 4 per pair); backward weights: the four projections'
// weight gradients (as forward) and their bias gradients.
enum class AttnPass { Forward, BackwardData, BackwardWeights };

struct AttnShape {
    int64_t heads = 1;
    int64_t q_size = 0, k_size = 0, v_size = 0;
    int64_t q_proj = 0, k_proj = 0, v_proj = 0, o_proj = 0;  // 0: no projection
    int64_t rows_q = 0, rows_kv = 0;
    int64_t window_pairs = 0;  // summed over batch x beam x query steps
    bool biases = false;
};

inline double attention_flops(AttnPass pass, const AttnShape& s) {
    const double h = static_cast<double>(s.heads), rq = static_cast<double>(s.rows_q);
    const double rkv = static_cast<double>(s.rows_kv), pairs = static_cast<double>(s.window_pairs);
    const double qk_width = static_cast<double>(s.q_proj > 0 ? s.q_proj : s.q_size);
    const double v_width = static_cast<double>(s.v_proj > 0 ? s.v_proj : s.v_size);
    const double in_proj =
        2.0 * h *
        (rq * static_cast<double>(s.q_size * s.q_proj) + rkv * static_cast<double>(s.k_size * s.k_proj) +
         rkv * static_cast<double>(s.v_size * s.v_proj));
    const double out_proj = 2.0 * rq * h * v_width * static_cast<double>(s.o_proj);
    const double bias =
        s.biases ? h * (rq * static_cast<double>(s.q_proj) + rkv * static_cast<double>(s.k_proj + s.v_proj)) +
                       rq * static_cast<double>(s.o_proj)
                 : 0.0;
    const double core = 2.0 * h * pairs * (qk_width + v_width) + 4.0 * h * pairs;
    switch (pass) {
        case AttnPass::Forward:
            return in_proj + out_proj + bias + core;
        case AttnPass::BackwardData:
            return in_proj + out_proj + 2.0 * core;
        case AttnPass::BackwardWeights:
            return in_proj + out_proj + bias;
    }
    return 0;
}

// Fused ops (cudnnFusedOpsExecute; `ops` is the cudnnFusedOps_t value). The convolution operations
// (0: scale, bias, activation, convolution, BN statistics; 1: scale, bias, activation, weight
// gradient): the convolution's FLOPs, 2 per input element for the per-channel scale and bias when
// given, the activation's forward rule per input element, and 3 per output element (add, square, add)
// for the statistics when asked for. BN finalization per channel: training 13 (mean 1, variance 3,
// inverse standard deviation 2, equivalent scale 1 and bias 2, running mean and variance 4),
// inference 5 (equivalent scale 3 and bias 2).
struct FusedOpsShape {
    int ops = 0;
    double convolution = 0;
    int64_t input_elements = 0, output_elements = 0, channels = 0;
    bool scale_bias = false;
    int activation_mode = 5;  // identity
    bool statistics = false;
    double bytes = 0;  // device-memory traffic (the roofline's), not a FLOP count
};

inline double fused_ops_flops(const FusedOpsShape& s) {
    if (s.ops == 2) return 13.0 * static_cast<double>(s.channels);
    if (s.ops == 3) return 5.0 * static_cast<double>(s.channels);
    const double in = static_cast<double>(s.input_elements);
    return s.convolution + (s.scale_bias ? 2.0 * in : 0.0) +
           activation_flops(s.activation_mode, false, s.input_elements) +
           (s.statistics ? 3.0 * static_cast<double>(s.output_elements) : 0.0);
}

// Spatial transformer over `points` grid points (N x H x W of the output) and `elements` output (or
// output gradient) elements. Grid generator: forward 8 per point (two affine rows, 2 multiplies and
// 2 adds each), backward 12 per point (the six theta gradients, a multiply-add each). Bilinear sampler:
// forward 8 per point (the coordinates scaled to pixels 4, the four weights 4) and 10 per element (4
// products and 3 sums, the alpha/beta blend 3); backward 16 per point (the weights 8, the grid
// gradient's blend and scale 8) and 16 per element (the dx scatter 4 multiply-adds, the neighbour
// differences for dgrid 4 multiply-adds).
enum class SpatialTfPass { GridForward, GridBackward, SamplerForward, SamplerBackward };

inline double spatial_transformer_flops(SpatialTfPass pass, int64_t elements, int64_t points) {
    const double e = static_cast<double>(elements), p = static_cast<double>(points);
    switch (pass) {
        case SpatialTfPass::GridForward:
            return 8.0 * p;
        case SpatialTfPass::GridBackward:
            return 12.0 * p;
        case SpatialTfPass::SamplerForward:
            return 8.0 * p + 10.0 * e;
        case SpatialTfPass::SamplerBackward:
            return 16.0 * p + 16.0 * e;
    }
    return 0;
}

}  // namespace tbdsim::dnn
