// The FLOPs the collector records for cuDNN operations: tbdprof's counting rules, written in terms of
// cuDNN's own enums. The simulated cuDNN counts its ground truth separately (simgpu/cudnn/dnn_flops.h);
// tests/cudnn/flops_agree_test.cpp holds the two to the same results over a table of shapes, so a
// change to either shows.
//
// Rules (docs/collector.md): a multiply-add is 2 FLOPs; comparisons and copies are 0; element-wise
// work counts per element of the tensor the call writes unless stated.
#pragma once

#include <cudnn.h>

#include <cstdint>

namespace tbdprof::preload::cudnn_flops {

inline double per_element(double flops_per_element, int64_t elements) {
    return flops_per_element * static_cast<double>(elements);
}

// Forward, backward data and backward filter alike: 2 * N * K * (C / groups) * filter * output positions.
inline double convolution_flops(int64_t n, int64_t c, int64_t k, int64_t groups, int64_t filter_spatial,
                                int64_t output_spatial) {
    const double macs = static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(c / groups) *
                        static_cast<double>(filter_spatial) * static_cast<double>(output_spatial);
    return 2.0 * macs;
}

enum class BatchNormPass { Training, Inference, Backward };

// Training: mean (1) and variance (2) reductions, normalise and scale-shift (4); inference: the
// normalise and scale-shift only; backward: two reductions (3), the normalised input (2), dx (5).
inline double batch_norm_flops(BatchNormPass pass, int64_t elements) {
    switch (pass) {
        case BatchNormPass::Training:
            return per_element(7, elements);
        case BatchNormPass::Inference:
            return per_element(4, elements);
        case BatchNormPass::Backward:
            return per_element(10, elements);
    }
    return 0;
}

// RELU, CLIPPED_RELU and IDENTITY compare or copy; the transcendental ones (sigmoid, tanh, ELU,
// swish) cost 4 per element forward and 3 backward.
inline double activation_flops(int mode, bool backward, int64_t elements) {
    switch (mode) {
        case CUDNN_ACTIVATION_RELU:
        case CUDNN_ACTIVATION_CLIPPED_RELU:
        case CUDNN_ACTIVATION_IDENTITY:
            return 0;
        default:
            return per_element(backward ? 3 : 4, elements);
    }
}

// Max pooling compares; average pooling sums the window and scales once per output element.
inline double pooling_flops(int mode, int64_t window, int64_t output_elements) {
    if (mode == CUDNN_POOLING_MAX || mode == CUDNN_POOLING_MAX_DETERMINISTIC) return 0;
    return per_element(static_cast<double>(window) + 1.0, output_elements);
}

// Forward: subtract the maximum, exponentiate, sum, scale; backward: a dot product (2), subtract, multiply.
inline double softmax_flops(int64_t elements) {
    return per_element(4, elements);
}

// Backend reduction operations: one operation per element reduced.
inline double backend_reduction_flops(int64_t input_elements) {
    return per_element(1, input_elements);
}

// cuDNN's own SDPA operations, Q [b, h, s_q, d], K [b, h, s_kv, d], V [b, h, s_kv, d_v]
// (batch_heads = b * h): their matmuls, 2 * batch_heads * s_q * s_kv per unit of width. Forward
// Q.K^T (d) and P.V (d_v); backward the recomputed Q.K^T, dQ and dK (d each) and dV and dP (d_v each).
inline double sdpa_matmul_flops(int64_t batch_heads, int64_t s_q, int64_t s_kv, int64_t d, int64_t d_v, bool backward) {
    const double per_width =
        2.0 * static_cast<double>(batch_heads) * static_cast<double>(s_q) * static_cast<double>(s_kv);
    const double width = backward ? 3.0 * static_cast<double>(d) + 2.0 * static_cast<double>(d_v)
                                  : static_cast<double>(d) + static_cast<double>(d_v);
    return per_width * width;
}

// Scaled dot-product attention run as one fused kernel (a backend graph of matmuls around a softmax,
// or cuDNN's SDPA operation): the matmuls' FLOPs, plus the softmax over the scores (batch x heads x
// s_q x s_kv elements) at 4 per element (softmax_flops), twice backward (P recomputed from the
// statistics, then its gradient). The masks, scale and dropout inside the kernel are not counted.
inline double attention_flops(double matmul_flops, int64_t score_elements, bool backward) {
    return matmul_flops + softmax_flops(score_elements) * (backward ? 2.0 : 1.0);
}

// C = alpha * A + beta * C.
inline double add_tensor_flops(int64_t elements) {
    return per_element(3, elements);
}

inline double matmul_flops(int64_t batch, int64_t m, int64_t n, int64_t k) {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// Backend pointwise: MIN, MAX, IDENTITY, RELU forward and backward compare or copy; every other mode
// one FLOP per output element.
inline double pointwise_flops(int mode, int64_t elements) {
    switch (mode) {
        case CUDNN_POINTWISE_MIN:
        case CUDNN_POINTWISE_MAX:
        case CUDNN_POINTWISE_IDENTITY:
        case CUDNN_POINTWISE_RELU_FWD:
        case CUDNN_POINTWISE_RELU_BWD:
            return 0;
        default:
            return per_element(1, elements);
    }
}

// y = act(alpha1 * conv(x, w) + alpha2 * z + bias): the convolution, 4 per output element for the
// scales and adds, and the activation (the call accepts RELU and IDENTITY: 0).
inline double convolution_bias_activation_flops(double convolution, int activation_mode, int64_t output_elements) {
    return convolution + per_element(4, output_elements) + activation_flops(activation_mode, false, output_elements);
}

// y = alpha * x + beta * y into y's layout, as cudnnAddTensor.
inline double transform_tensor_flops(int64_t elements) {
    return add_tensor_flops(elements);
}

// C = op(alpha1 * A, alpha2 * B) + beta * C: both scales (one for the unary SQRT and NOT), the op
// itself when it is arithmetic (ADD, MUL, SQRT; MIN, MAX, NOT compare), and beta * C plus the add.
inline double op_tensor_flops(int op, int64_t elements) {
    const bool unary = op == CUDNN_OP_TENSOR_SQRT || op == CUDNN_OP_TENSOR_NOT;
    const bool arithmetic = op == CUDNN_OP_TENSOR_ADD || op == CUDNN_OP_TENSOR_MUL || op == CUDNN_OP_TENSOR_SQRT;
    const double scales = unary ? 1 : 2;
    return per_element(scales + (arithmetic ? 1 : 0) + 2, elements);
}

// C = reduce(alpha * A) + beta * C. Per input element: alpha, and the combining step (NORM2 squares
// and adds: 2; MIN, MAX, AMAX compare: 0; the rest 1). Per output element: beta * C and the add, and
// the final divide (AVG) or square root (NORM2).
inline double reduce_tensor_flops(int op, int64_t input_elements, int64_t output_elements) {
    double combine = 1;
    if (op == CUDNN_REDUCE_TENSOR_NORM2) combine = 2;
    if (op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX || op == CUDNN_REDUCE_TENSOR_AMAX) combine = 0;
    const double finish = (op == CUDNN_REDUCE_TENSOR_AVG || op == CUDNN_REDUCE_TENSOR_NORM2) ? 1 : 0;
    return per_element(1 + combine, input_elements) + per_element(2 + finish, output_elements);
}

// Forward: random bits to a uniform float and the 1/(1-p) scale (the keep test compares); backward: the scale.
inline double dropout_flops(bool backward, int64_t elements) {
    return per_element(backward ? 1 : 2, elements);
}

// The Ex API: the plain pass, plus the added z (1 per element) and a fused activation's FLOPs
// (activation_mode < 0: none fused).
inline double batch_norm_ex_flops(BatchNormPass pass, bool add, int activation_mode, int64_t elements) {
    double flops = batch_norm_flops(pass, elements);
    if (add) flops += per_element(1, elements);
    if (activation_mode >= 0) flops += activation_flops(activation_mode, pass == BatchNormPass::Backward, elements);
    return flops;
}

// RNN calls over the time steps actually run (`steps`, the sum of the sequence lengths), per layer
// and direction: the input and recurrent GEMMs, 2 * steps * gates * hidden * (layer input + hidden);
// the biases, steps * gates * hidden per bias vector; the cell's element-wise work per hidden unit
// (TANH 4; LSTM 24: three sigmoids and two tanh at 4, three products and an add; GRU 17: two sigmoids
// and a tanh at 4, three products, two adds; RELU 0). Forward counts all three, backward data the
// GEMMs and the cell, backward weights the GEMMs and the biases.
enum class RnnPass { Forward, BackwardData, BackwardWeights };

struct RnnShape {
    int cell = CUDNN_LSTM;
    int bias_mode = CUDNN_RNN_DOUBLE_BIAS;
    int layers = 1;
    int directions = 1;
    int64_t input = 0;
    int64_t hidden = 0;
    int64_t steps = 0;
};

inline double rnn_flops(RnnPass pass, const RnnShape& s) {
    const int gates = s.cell == CUDNN_LSTM ? 4 : s.cell == CUDNN_GRU ? 3 : 1;
    const double cell_per_hidden_unit = s.cell == CUDNN_LSTM       ? 24
                                        : s.cell == CUDNN_GRU      ? 17
                                        : s.cell == CUDNN_RNN_TANH ? 4
                                                                   : 0;
    const int bias_vectors = s.bias_mode == CUDNN_RNN_DOUBLE_BIAS ? 2 : s.bias_mode == CUDNN_RNN_NO_BIAS ? 0 : 1;
    const double gate_units = static_cast<double>(gates) * static_cast<double>(s.hidden);
    const double steps = static_cast<double>(s.steps);
    const double hidden = static_cast<double>(s.hidden);
    double total = 0;
    for (int layer = 0; layer < s.layers; ++layer) {
        const double layer_input = layer == 0 ? static_cast<double>(s.input) : hidden * s.directions;
        const double gemm = 2.0 * steps * gate_units * (layer_input + hidden);
        const double bias = steps * gate_units * bias_vectors;
        const double cell = steps * hidden * cell_per_hidden_unit;
        double one_direction = gemm + bias;
        if (pass == RnnPass::Forward) one_direction = gemm + bias + cell;
        if (pass == RnnPass::BackwardData) one_direction = gemm + cell;
        total += one_direction * s.directions;
    }
    return total;
}

// Cross-channel LRN over a window of n: forward 2n (the window's sum of squares) + 6 (scale, add k,
// the power) + 3 (the alpha/beta blend); backward 4n + 12.
inline double lrn_flops(bool backward, int64_t window, int64_t elements) {
    const double n = static_cast<double>(window);
    return per_element(backward ? 4 * n + 12 : 2 * n + 9, elements);
}

// Divisive normalization over an n x n window: forward 2n^2 + 10, backward 4n^2 + 14.
inline double divisive_normalization_flops(bool backward, int64_t window, int64_t elements) {
    const double area = static_cast<double>(window) * static_cast<double>(window);
    return per_element(backward ? 4 * area + 14 : 2 * area + 10, elements);
}

// CTC loss over probs [T, N, A]: the softmax (4 per element, when cuDNN applies it), the gradient
// (2 per element, when asked for), and the alpha and beta recursions, 4 each per state and step;
// `label_steps` sums input length x (2 x label length + 1) over the samples.
inline double ctc_loss_flops(bool softmax, bool gradients, int64_t probs_elements, int64_t label_steps) {
    const double per_probability = (softmax ? 4 : 0) + (gradients ? 2 : 0);
    return per_element(per_probability, probs_elements) + per_element(8, label_steps);
}

// Backward bias: one add per element of dy.
inline double bias_gradient_flops(int64_t elements) {
    return per_element(1, elements);
}

}  // namespace tbdprof::preload::cudnn_flops
