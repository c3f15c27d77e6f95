// The collector's cuDNN FLOP rules (preload/cudnn_flops.h) and the simulated cuDNN's ground-truth
// rules (simgpu/cudnn/dnn_flops.h) are written apart, so that the record tests compare two counts,
// not one count with itself. This test holds them to the same results over a table of shapes and
// modes; it is the only place that sees both.
#include <doctest/doctest.h>

#include <cudnn.h>

#include <cstdint>
#include <vector>

#include "cudnn_flops.h"
#include "dnn_flops.h"

namespace product = tbdprof::preload::cudnn_flops;
namespace truth = tbdsim::dnn;

namespace {

const std::vector<int64_t> kElements = {0, 1, 7, 4096, 3 * 224 * 224 * 32};

}  // namespace

TEST_CASE("convolution and matmul") {
    struct Conv {
        int64_t n, c, k, groups, filter, output;
    };
    for (const Conv& s : {Conv{1, 3, 64, 1, 49, 112 * 112}, Conv{32, 64, 64, 1, 9, 56 * 56},
                          Conv{8, 32, 32, 32, 9, 28 * 28}, Conv{2, 16, 8, 4, 27, 10 * 10 * 10}}) {
        CHECK(product::convolution_flops(s.n, s.c, s.k, s.groups, s.filter, s.output) ==
              truth::convolution_flops(s.n, s.c, s.k, s.groups, s.filter, s.output));
        const double conv = truth::convolution_flops(s.n, s.c, s.k, s.groups, s.filter, s.output);
        for (int act : {CUDNN_ACTIVATION_RELU, CUDNN_ACTIVATION_IDENTITY})
            CHECK(product::convolution_bias_activation_flops(conv, act, s.n * s.k * s.output) ==
                  truth::convolution_bias_activation_flops(conv, act, s.n * s.k * s.output));
    }
    CHECK(product::matmul_flops(4, 128, 256, 512) == truth::matmul_flops(4, 128, 256, 512));
}

TEST_CASE("element-wise and normalisation families, every mode") {
    const std::vector<std::pair<product::BatchNormPass, truth::BatchNormPass>> passes = {
        {product::BatchNormPass::Training, truth::BatchNormPass::Training},
        {product::BatchNormPass::Inference, truth::BatchNormPass::Inference},
        {product::BatchNormPass::Backward, truth::BatchNormPass::Backward}};
    for (int64_t e : kElements) {
        CAPTURE(e);
        for (const auto& [p, t] : passes) {
            CHECK(product::batch_norm_flops(p, e) == truth::batch_norm_flops(t, e));
            for (bool add : {false, true})
                for (int act : {-1, int(CUDNN_ACTIVATION_RELU), int(CUDNN_ACTIVATION_SIGMOID)})
                    CHECK(product::batch_norm_ex_flops(p, add, act, e) == truth::batch_norm_ex_flops(t, add, act, e));
        }
        for (int mode = CUDNN_ACTIVATION_SIGMOID; mode <= CUDNN_ACTIVATION_SWISH; ++mode)
            for (bool backward : {false, true})
                CHECK(product::activation_flops(mode, backward, e) == truth::activation_flops(mode, backward, e));
        for (int mode = CUDNN_POOLING_MAX; mode <= CUDNN_POOLING_MAX_DETERMINISTIC; ++mode)
            CHECK(product::pooling_flops(mode, 9, e) == truth::pooling_flops(mode, 9, e));
        for (int op = CUDNN_OP_TENSOR_ADD; op <= CUDNN_OP_TENSOR_NOT; ++op)
            CHECK(product::op_tensor_flops(op, e) == truth::op_tensor_flops(op, e));
        for (int op = CUDNN_REDUCE_TENSOR_ADD; op <= CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS; ++op)
            CHECK(product::reduce_tensor_flops(op, e, e / 7 + 1) == truth::reduce_tensor_flops(op, e, e / 7 + 1));
        for (int mode : {0, 1, 2, 3, 4, 5, 21, 100, 200, 201})
            CHECK(product::pointwise_flops(mode, e) == truth::pointwise_flops(mode, e));
        for (bool backward : {false, true}) {
            CHECK(product::dropout_flops(backward, e) == truth::dropout_flops(backward, e));
            CHECK(product::lrn_flops(backward, 5, e) == truth::lrn_flops(backward, 5, e));
            CHECK(product::divisive_normalization_flops(backward, 3, e) ==
                  truth::divisive_normalization_flops(backward, 3, e));
        }
        CHECK(product::softmax_flops(e) == truth::softmax_flops(e));
        CHECK(product::add_tensor_flops(e) == truth::add_tensor_flops(e));
        CHECK(product::transform_tensor_flops(e) == truth::transform_tensor_flops(e));
        CHECK(product::bias_gradient_flops(e) == truth::bias_gradient_flops(e));
        for (bool softmax : {false, true})
            for (bool gradients : {false, true})
                CHECK(product::ctc_loss_flops(softmax, gradients, e, 3 * e + 1) ==
                      truth::ctc_loss_flops(softmax, gradients, e, 3 * e + 1));
    }
}

TEST_CASE("RNNs: every cell, bias mode, depth and direction") {
    const std::vector<std::pair<product::RnnPass, truth::RnnPass>> passes = {
        {product::RnnPass::Forward, truth::RnnPass::Forward},
        {product::RnnPass::BackwardData, truth::RnnPass::BackwardData},
        {product::RnnPass::BackwardWeights, truth::RnnPass::BackwardWeights}};
    for (int cell = CUDNN_RNN_RELU; cell <= CUDNN_GRU; ++cell)
        for (int bias = CUDNN_RNN_NO_BIAS; bias <= CUDNN_RNN_SINGLE_REC_BIAS; ++bias)
            for (int layers : {1, 3})
                for (int directions : {1, 2})
                    for (const auto& [p, t] : passes) {
                        CAPTURE(cell);
                        CAPTURE(bias);
                        const product::RnnShape ps{cell, bias, layers, directions, 96, 128, 35};
                        const truth::RnnShape ts{cell, bias, layers, directions, 96, 128, 35};
                        CHECK(product::rnn_flops(p, ps) == truth::rnn_flops(t, ts));
                    }
}

// Scaled dot-product attention (the backend API's fused kernel): the collector's rule for cuDNN's SDPA
// operation against the truth's matmul rule over the pass's matmuls, and both attention rules over
// the same matmul FLOPs, per shape: batch x heads, s_q, s_kv, head dimensions d and d_v.
TEST_CASE("attention, forward and backward") {
    struct Attn {
        int64_t batch_heads, s_q, s_kv, d, d_v;
    };
    for (const Attn& s : {Attn{1, 1, 1, 1, 1}, Attn{8, 128, 128, 64, 64}, Attn{2 * 12, 512, 512, 64, 64},
                          Attn{4 * 16, 1, 2048, 128, 128}, Attn{3, 77, 300, 80, 32}, Attn{32, 4096, 4096, 128, 64}}) {
        const double forward = truth::matmul_flops(s.batch_heads, s.s_q, s.s_kv, s.d) +     // S = Q.K^T
                               truth::matmul_flops(s.batch_heads, s.s_q, s.d_v, s.s_kv);    // O = P.V
        const double backward = truth::matmul_flops(s.batch_heads, s.s_q, s.s_kv, s.d) +    // S recomputed
                                truth::matmul_flops(s.batch_heads, s.s_q, s.s_kv, s.d_v) +  // dP = dO.V^T
                                truth::matmul_flops(s.batch_heads, s.s_kv, s.d_v, s.s_q) +  // dV = P^T.dO
                                truth::matmul_flops(s.batch_heads, s.s_q, s.d, s.s_kv) +    // dQ = dS.K
                                truth::matmul_flops(s.batch_heads, s.s_kv, s.d, s.s_q);     // dK = dS^T.Q
        CHECK(product::sdpa_matmul_flops(s.batch_heads, s.s_q, s.s_kv, s.d, s.d_v, false) == forward);
        CHECK(product::sdpa_matmul_flops(s.batch_heads, s.s_q, s.s_kv, s.d, s.d_v, true) == backward);
        const int64_t scores = s.batch_heads * s.s_q * s.s_kv;
        for (bool pass_backward : {false, true}) {
            const double matmuls = pass_backward ? backward : forward;
            CHECK(product::attention_flops(matmuls, scores, pass_backward) ==
                  truth::attention_flops(matmuls, scores, pass_backward));
        }
    }
    CHECK(product::attention_flops(0, 0, true) == 0);
}
