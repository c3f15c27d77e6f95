// The simulated libcudnn.so.9 through its public API, as a program linked against the toolkit's
// cuDNN sees it: handles, descriptor arithmetic, algorithm and workspace queries, argument checks,
// and the documented status of functions it does not model.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "cudnn_api_check.h"

using namespace cudnn_api_test;

namespace {
struct Convolution {
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t x_desc, y_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv;
    void *x, *w, *y, *workspace;
    size_t workspace_bytes;  // IMPLICIT_PRECOMP_GEMM's
};

// cudnnConvolutionBiasActivationForward as cuDNN documents it: y = act(alpha1 * conv(x) + alpha2 * z +
// bias), z shaped as y, bias 1 x K x 1 x 1, RELU with any supported algorithm, IDENTITY only with
// IMPLICIT_PRECOMP_GEMM, other activations not supported, the algorithm's workspace required.
void check_bias_activation(const Convolution& c, int k) {
    cudnnTensorDescriptor_t bias_desc, bad_bias;
    cudnnActivationDescriptor_t relu, identity, sigmoid;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&bias_desc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&bad_bias), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetTensor4dDescriptor(bias_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, k, 1, 1),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetTensor4dDescriptor(bad_bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, k, 2, 1),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateActivationDescriptor(&relu), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateActivationDescriptor(&identity), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateActivationDescriptor(&sigmoid), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetActivationDescriptor(identity, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetActivationDescriptor(sigmoid, CUDNN_ACTIVATION_SIGMOID, CUDNN_NOT_PROPAGATE_NAN, 0),
                  CUDNN_STATUS_SUCCESS);
    void* bias = nullptr;
    EXPECT(cudaMalloc(&bias, static_cast<size_t>(k) * 4) == cudaSuccess);
    const float one = 1, zero = 0;
    const auto fused = [&](cudnnConvolutionFwdAlgo_t algo, void* workspace, size_t bytes,
                           cudnnTensorDescriptor_t bias_shape, cudnnActivationDescriptor_t act) {
        return cudnnConvolutionBiasActivationForward(c.handle, &one, c.x_desc, c.x, c.w_desc, c.w, c.conv, algo,
                                                     workspace, bytes, &zero, c.y_desc, c.y, bias_shape, bias, act,
                                                     c.y_desc, c.y);
    };
    const auto precomp = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    const auto implicit = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    EXPECT_STATUS(fused(precomp, c.workspace, c.workspace_bytes, bias_desc, relu), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(fused(implicit, nullptr, 0, bias_desc, relu), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(fused(precomp, c.workspace, c.workspace_bytes, bias_desc, identity), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(fused(implicit, nullptr, 0, bias_desc, identity), CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(fused(precomp, c.workspace, c.workspace_bytes, bias_desc, sigmoid), CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(fused(precomp, nullptr, 0, bias_desc, relu), CUDNN_STATUS_BAD_PARAM);  // no workspace
    EXPECT_STATUS(fused(precomp, c.workspace, c.workspace_bytes, bad_bias, relu), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(fused(CUDNN_CONVOLUTION_FWD_ALGO_FFT, c.workspace, c.workspace_bytes, bias_desc, relu),
                  CUDNN_STATUS_NOT_SUPPORTED);
    cudaFree(bias);
    cudnnDestroyActivationDescriptor(sigmoid);
    cudnnDestroyActivationDescriptor(identity);
    cudnnDestroyActivationDescriptor(relu);
    cudnnDestroyTensorDescriptor(bad_bias);
    cudnnDestroyTensorDescriptor(bias_desc);
}

// cudnnOpTensor: A matches C, B matches C or is 1 per dimension; the descriptor reads back. The big
// ADD (4 Mi elements each) is the roofline check of cudnn.record_api: bandwidth-bound.
void check_op_tensor(cudnnHandle_t handle) {
    cudnnOpTensorDescriptor_t op = nullptr;
    EXPECT_STATUS(cudnnCreateOpTensorDescriptor(&op), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnOpTensor(handle, op, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
        CUDNN_STATUS_BAD_PARAM);  // not set
    EXPECT_STATUS(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN),
                  CUDNN_STATUS_SUCCESS);
    cudnnOpTensorOp_t got_op{};
    cudnnDataType_t got_type{};
    cudnnNanPropagation_t got_nan{};
    EXPECT_STATUS(cudnnGetOpTensorDescriptor(op, &got_op, &got_type, &got_nan), CUDNN_STATUS_SUCCESS);
    EXPECT(got_op == CUDNN_OP_TENSOR_ADD && got_type == CUDNN_DATA_FLOAT && got_nan == CUDNN_NOT_PROPAGATE_NAN);
    cudnnTensorDescriptor_t c_desc = tensor4d(16, 64, 64, 64), bias = tensor4d(1, 64, 1, 1),
                            wrong = tensor4d(16, 64, 64, 32);
    void *a = device_floats(16 * 64 * 64 * 64), *b = device_floats(16 * 64 * 64 * 64),
         *c = device_floats(16 * 64 * 64 * 64);
    const float one = 1, zero = 0;
    EXPECT_STATUS(cudnnOpTensor(handle, op, &one, c_desc, a, &one, c_desc, b, &zero, c_desc, c), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnOpTensor(handle, op, &one, c_desc, a, &one, bias, b, &one, c_desc, c), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnOpTensor(handle, op, &one, bias, a, &one, c_desc, b, &one, c_desc, c), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnOpTensor(handle, op, &one, c_desc, a, &one, wrong, b, &one, c_desc, c), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_SQRT, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnOpTensor(handle, op, &one, c_desc, a, nullptr, nullptr, nullptr, &zero, c_desc, c),
                  CUDNN_STATUS_SUCCESS);  // unary: B is not read
    cudaFree(c);
    cudaFree(b);
    cudaFree(a);
    cudnnDestroyTensorDescriptor(wrong);
    cudnnDestroyTensorDescriptor(bias);
    cudnnDestroyTensorDescriptor(c_desc);
    EXPECT_STATUS(cudnnDestroyOpTensorDescriptor(op), CUDNN_STATUS_SUCCESS);
}

// cudnnReduceTensor: C is A or 1 per dimension; indices only for MIN/MAX/AMAX with flattened
// indices (32-bit only); the workspace and indices the size queries give are required.
void check_reduce_tensor(cudnnHandle_t handle) {
    cudnnReduceTensorDescriptor_t r = nullptr;
    EXPECT_STATUS(cudnnCreateReduceTensorDescriptor(&r), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetReduceTensorDescriptor(r, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                                 CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_64BIT_INDICES),
                  CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(cudnnSetReduceTensorDescriptor(r, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                                 CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES),
                  CUDNN_STATUS_SUCCESS);
    cudnnTensorDescriptor_t a_desc = tensor4d(8, 32, 10, 10), c_desc = tensor4d(1, 32, 1, 1),
                            bad = tensor4d(1, 32, 2, 1);
    size_t indices = 0, workspace = 0;
    EXPECT_STATUS(cudnnGetReductionIndicesSize(handle, r, a_desc, c_desc, &indices), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnGetReductionWorkspaceSize(handle, r, a_desc, c_desc, &workspace), CUDNN_STATUS_SUCCESS);
    EXPECT(indices == 32 * 4 && workspace == 32 * 4);
    EXPECT_STATUS(cudnnGetReductionWorkspaceSize(handle, r, a_desc, bad, &workspace), CUDNN_STATUS_BAD_PARAM);
    void *a = device_floats(8 * 32 * 10 * 10), *c = device_floats(32), *space = device_floats(64);
    const float one = 1, zero = 0;
    EXPECT_STATUS(cudnnReduceTensor(handle, r, space, 128, space, 0, &one, a_desc, a, &zero, c_desc, c),
                  CUDNN_STATUS_BAD_PARAM);  // no workspace
    EXPECT_STATUS(cudnnReduceTensor(handle, r, space, 128, static_cast<char*>(space) + 128, 128, &one, a_desc, a, &zero,
                                    c_desc, c),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnSetReduceTensorDescriptor(r, CUDNN_REDUCE_TENSOR_NORM2, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                       CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES),
        CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnGetReductionIndicesSize(handle, r, a_desc, c_desc, &indices), CUDNN_STATUS_SUCCESS);
    EXPECT(indices == 0);  // NORM2 picks no element
    cudnnReduceTensorOp_t got{};
    cudnnDataType_t type{};
    cudnnNanPropagation_t nan{};
    cudnnReduceTensorIndices_t got_indices{};
    cudnnIndicesType_t indices_type{};
    EXPECT_STATUS(cudnnGetReduceTensorDescriptor(r, &got, &type, &nan, &got_indices, &indices_type),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(got == CUDNN_REDUCE_TENSOR_NORM2 && got_indices == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES);
    EXPECT_STATUS(cudnnReduceTensor(handle, r, nullptr, 0, space, 128, &one, a_desc, a, &zero, c_desc, c),
                  CUDNN_STATUS_SUCCESS);
    cudaFree(space);
    cudaFree(c);
    cudaFree(a);
    cudnnDestroyTensorDescriptor(bad);
    cudnnDestroyTensorDescriptor(c_desc);
    cudnnDestroyTensorDescriptor(a_desc);
    EXPECT_STATUS(cudnnDestroyReduceTensorDescriptor(r), CUDNN_STATUS_SUCCESS);
}

// Dropout: states sized by the device (one 32-byte state per resident thread: 132 SMs x 2048 on the
// H100 model), reserve space one byte per element rounded to 16; the rate must be in [0, 1); the
// passes need set states and enough reserve space.
void check_dropout(cudnnHandle_t handle) {
    cudnnDropoutDescriptor_t d = nullptr;
    EXPECT_STATUS(cudnnCreateDropoutDescriptor(&d), CUDNN_STATUS_SUCCESS);
    size_t states_bytes = 0, reserve_bytes = 0;
    EXPECT_STATUS(cudnnDropoutGetStatesSize(handle, &states_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT(states_bytes == 132u * 2048 * 32);
    cudnnTensorDescriptor_t x_desc = tensor4d(3, 5, 7, 9);
    EXPECT_STATUS(cudnnDropoutGetReserveSpaceSize(x_desc, &reserve_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT(reserve_bytes == 960);  // 945 mask bytes, rounded up to 16
    void *states = nullptr, *x = device_floats(945), *y = device_floats(945), *reserve = nullptr;
    EXPECT(cudaMalloc(&states, states_bytes) == cudaSuccess);
    EXPECT(cudaMalloc(&reserve, reserve_bytes) == cudaSuccess);
    EXPECT_STATUS(cudnnDropoutForward(handle, d, x_desc, x, x_desc, y, reserve, reserve_bytes),
                  CUDNN_STATUS_BAD_PARAM);  // not set
    EXPECT_STATUS(cudnnSetDropoutDescriptor(d, handle, 1.0f, states, states_bytes, 7), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetDropoutDescriptor(d, handle, 0.5f, states, states_bytes - 1, 7), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetDropoutDescriptor(d, handle, 0.5f, states, states_bytes, 7), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetDropoutDescriptor(d, handle, 0.25f, nullptr, 0, 0), CUDNN_STATUS_SUCCESS);  // rate only
    float rate = 0;
    void* got_states = nullptr;
    unsigned long long seed = 0;
    EXPECT_STATUS(cudnnGetDropoutDescriptor(d, handle, &rate, &got_states, &seed), CUDNN_STATUS_SUCCESS);
    EXPECT(rate == 0.25f && got_states == states && seed == 7);
    EXPECT_STATUS(cudnnDropoutForward(handle, d, x_desc, x, x_desc, y, reserve, reserve_bytes - 16),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnDropoutForward(handle, d, x_desc, x, x_desc, y, reserve, reserve_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnDropoutBackward(handle, d, x_desc, y, x_desc, x, reserve, reserve_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnRestoreDropoutDescriptor(d, handle, 0.5f, states, states_bytes, 7), CUDNN_STATUS_SUCCESS);
    cudaFree(reserve);
    cudaFree(y);
    cudaFree(x);
    cudaFree(states);
    cudnnDestroyTensorDescriptor(x_desc);
    EXPECT_STATUS(cudnnDestroyDropoutDescriptor(d), CUDNN_STATUS_SUCCESS);
}

// Batch norm Ex: workspace two FP32 sums per channel; reserve space one bit per element with a fused
// activation (ReLU only), none without; BN_ADD_ACTIVATION needs z.
void check_batch_norm_ex(cudnnHandle_t handle) {
    cudnnTensorDescriptor_t x_desc = tensor4d(4, 8, 6, 6), params = tensor4d(1, 8, 1, 1);
    cudnnActivationDescriptor_t relu = nullptr, tanh = nullptr;
    EXPECT_STATUS(cudnnCreateActivationDescriptor(&relu), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateActivationDescriptor(&tanh), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetActivationDescriptor(tanh, CUDNN_ACTIVATION_TANH, CUDNN_NOT_PROPAGATE_NAN, 0),
                  CUDNN_STATUS_SUCCESS);
    const auto mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    const auto add_relu = CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    size_t workspace = 0, reserve = 0;
    EXPECT_STATUS(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(handle, mode, add_relu, x_desc, x_desc,
                                                                           x_desc, params, relu, &workspace),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(workspace == 8 * 2 * 4);
    EXPECT_STATUS(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(handle, mode, add_relu, x_desc, x_desc,
                                                                           x_desc, params, tanh, &workspace),
                  CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, mode, add_relu, relu, x_desc, &reserve),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(reserve == 144);  // 1152 elements: 144 bytes of mask bits
    size_t plain = 1;
    EXPECT_STATUS(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, mode, CUDNN_BATCHNORM_OPS_BN, nullptr,
                                                                       x_desc, &plain),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(plain == 0);
    size_t backward_workspace = 0;
    EXPECT_STATUS(cudnnGetBatchNormalizationBackwardExWorkspaceSize(handle, mode, add_relu, x_desc, x_desc, x_desc,
                                                                    x_desc, x_desc, params, relu, &backward_workspace),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(backward_workspace == 8 * 2 * 4);
    void *x = device_floats(1152), *y = device_floats(1152), *z = device_floats(1152), *p = device_floats(8 * 6),
         *space = device_floats(256);
    float* f = static_cast<float*>(p);
    const float one = 1, zero = 0;
    const auto forward = [&](void* z_data, size_t reserve_bytes) {
        return cudnnBatchNormalizationForwardTrainingEx(
            handle, mode, add_relu, &one, &zero, x_desc, x, x_desc, z_data, x_desc, y, params, f, f + 8, 0.1, f + 16,
            f + 24, 1e-5, f + 32, f + 40, relu, space, workspace, static_cast<char*>(space) + 512, reserve_bytes);
    };
    EXPECT_STATUS(forward(z, reserve), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(forward(nullptr, reserve), CUDNN_STATUS_BAD_PARAM);  // BN_ADD_ACTIVATION without z
    EXPECT_STATUS(forward(z, reserve - 16), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnBatchNormalizationBackwardEx(handle, mode, add_relu, &one, &zero, &one, &zero, x_desc, x, x_desc,
                                                    y, x_desc, y, x_desc, z, x_desc, x, params, f, f + 8, f + 16,
                                                    f + 24, 1e-5, f + 32, f + 40, relu, space, backward_workspace,
                                                    static_cast<char*>(space) + 512, reserve),
                  CUDNN_STATUS_SUCCESS);
    cudaFree(space);
    cudaFree(p);
    cudaFree(z);
    cudaFree(y);
    cudaFree(x);
    cudnnDestroyActivationDescriptor(tanh);
    cudnnDestroyActivationDescriptor(relu);
    cudnnDestroyTensorDescriptor(params);
    cudnnDestroyTensorDescriptor(x_desc);
}

// RNNs (v8 API): a 2-layer bidirectional LSTM, input 16, hidden 32, batch 4, sequences 5, 4, 3, 2.
// Weight space per pseudo-layer: 4 gates x 32 x (layer input + 32) matrix elements + 2 x 4 x 32 biases
// (layer 0: 6400, layer 1 (input 64): 12544; two directions each): 37888 floats.
void check_rnn(cudnnHandle_t handle) {
    cudnnRNNDescriptor_t rnn = nullptr;
    EXPECT_STATUS(cudnnCreateRNNDescriptor(&rnn), CUDNN_STATUS_SUCCESS);
    const auto set = [&](cudnnRNNInputMode_t input_mode, int projection) {
        return cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                        CUDNN_BIDIRECTIONAL, input_mode, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                        CUDNN_DEFAULT_MATH, 16, 32, projection, 2, nullptr, 0);
    };
    EXPECT_STATUS(set(CUDNN_SKIP_INPUT, 32), CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(set(CUDNN_LINEAR_INPUT, 16), CUDNN_STATUS_NOT_SUPPORTED);  // projection
    EXPECT_STATUS(set(CUDNN_LINEAR_INPUT, 32), CUDNN_STATUS_SUCCESS);
    int32_t hidden = 0, layers = 0;
    cudnnRNNMode_t cell{};
    EXPECT_STATUS(cudnnGetRNNDescriptor_v8(rnn, nullptr, &cell, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                           nullptr, &hidden, nullptr, &layers, nullptr, nullptr),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(cell == CUDNN_LSTM && hidden == 32 && layers == 2);
    EXPECT_STATUS(cudnnRNNSetClip_v9(rnn, CUDNN_RNN_CLIP_MINMAX, -1.0, 1.0), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBuildRNNDynamic(handle, rnn, 4), CUDNN_STATUS_BAD_PARAM);  // not the dynamic algorithm
    size_t weight_bytes = 0, workspace = 0, reserve = 0, inference_reserve = 1;
    EXPECT_STATUS(cudnnGetRNNWeightSpaceSize(handle, rnn, &weight_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT(weight_bytes == 37888 * 4);
    cudnnRNNDataDescriptor_t x_desc = nullptr, y_desc = nullptr;
    EXPECT_STATUS(cudnnCreateRNNDataDescriptor(&x_desc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateRNNDataDescriptor(&y_desc), CUDNN_STATUS_SUCCESS);
    const int lengths[] = {5, 4, 3, 2}, unsorted[] = {2, 5, 3, 4};
    float padding = 0;
    const auto layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
    EXPECT_STATUS(cudnnSetRNNDataDescriptor(x_desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 5, 4, 16,
                                            unsorted, &padding),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetRNNDataDescriptor(x_desc, CUDNN_DATA_FLOAT, layout, 5, 4, 16, lengths, &padding),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetRNNDataDescriptor(y_desc, CUDNN_DATA_FLOAT, layout, 5, 4, 64, lengths, &padding),
                  CUDNN_STATUS_SUCCESS);
    // Workspace: 5 x 4 padded steps x 4 gates x 32 x 2 directions floats; reserve (training): 2 layers x
    // 2 directions x 20 steps x (128 gate + 2 x 32 state) floats.
    EXPECT_STATUS(cudnnGetRNNTempSpaceSizes(handle, rnn, CUDNN_FWD_MODE_TRAINING, x_desc, &workspace, &reserve),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(workspace == 20480 && reserve == 61440);
    EXPECT_STATUS(
        cudnnGetRNNTempSpaceSizes(handle, rnn, CUDNN_FWD_MODE_INFERENCE, x_desc, &workspace, &inference_reserve),
        CUDNN_STATUS_SUCCESS);
    EXPECT(inference_reserve == 0);
    void *weights = nullptr, *dweights = nullptr, *space = nullptr, *reserve_space = nullptr;
    EXPECT(cudaMalloc(&weights, weight_bytes) == cudaSuccess && cudaMalloc(&dweights, weight_bytes) == cudaSuccess);
    EXPECT(cudaMalloc(&space, workspace) == cudaSuccess && cudaMalloc(&reserve_space, reserve) == cudaSuccess);
    // Pseudo-layer 3 (layer 1, backward direction), recurrent matrix of gate 1 (id 5): after pseudo-layers
    // 0-2 (6400 + 6400 + 12544 floats) and the 4 input matrices [32 x 64] and recurrent matrix 4 [32 x 32].
    cudnnTensorDescriptor_t m_desc = nullptr, b_desc = nullptr;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&m_desc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&b_desc), CUDNN_STATUS_SUCCESS);
    void *m = nullptr, *b = nullptr;
    EXPECT_STATUS(cudnnGetRNNWeightParams(handle, rnn, 3, weight_bytes, weights, 5, m_desc, &m, b_desc, &b),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(static_cast<char*>(m) - static_cast<char*>(weights) == (25344 + 8192 + 1024) * 4);
    EXPECT(static_cast<char*>(b) - static_cast<char*>(weights) == (25344 + 12288 + 5 * 32) * 4);
    cudnnDataType_t type{};
    int dims = 0, dim[3] = {}, stride[3] = {};
    EXPECT_STATUS(cudnnGetTensorNdDescriptor(m_desc, 3, &type, &dims, dim, stride), CUDNN_STATUS_SUCCESS);
    EXPECT(dims == 3 && dim[1] == 32 && dim[2] == 32);
    EXPECT_STATUS(cudnnGetRNNWeightParams(handle, rnn, 4, weight_bytes, weights, 0, m_desc, &m, b_desc, &b),
                  CUDNN_STATUS_BAD_PARAM);  // 4 pseudo-layers only
    void *x = device_floats(20 * 16), *y = device_floats(20 * 64), *dx = device_floats(20 * 16);
    EXPECT_STATUS(
        cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_TRAINING, nullptr, x_desc, x, y_desc, y, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, weight_bytes, weights, workspace, space, reserve - 4, reserve_space),
        CUDNN_STATUS_BAD_PARAM);  // reserve too small
    EXPECT_STATUS(
        cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_TRAINING, nullptr, x_desc, x, y_desc, y, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, weight_bytes, weights, workspace, space, reserve, reserve_space),
        CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_TRAINING, nullptr, y_desc, y, x_desc, x, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, weight_bytes, weights, workspace, space, reserve, reserve_space),
        CUDNN_STATUS_BAD_PARAM);  // x and y swapped: vector sizes do not match
    EXPECT_STATUS(cudnnRNNBackwardData_v8(handle, rnn, nullptr, y_desc, y, y, x_desc, dx, nullptr, nullptr, nullptr,
                                          nullptr, nullptr, nullptr, nullptr, nullptr, weight_bytes, weights, workspace,
                                          space, reserve, reserve_space),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnRNNBackwardWeights_v8(handle, rnn, CUDNN_WGRAD_MODE_ADD, nullptr, x_desc, x, nullptr, nullptr, y_desc, y,
                                   weight_bytes, dweights, workspace, space, reserve, reserve_space),
        CUDNN_STATUS_SUCCESS);
    cudaFree(dx);
    cudaFree(y);
    cudaFree(x);
    cudaFree(reserve_space);
    cudaFree(space);
    cudaFree(dweights);
    cudaFree(weights);
    cudnnDestroyTensorDescriptor(b_desc);
    cudnnDestroyTensorDescriptor(m_desc);
    cudnnDestroyRNNDataDescriptor(y_desc);
    cudnnDestroyRNNDataDescriptor(x_desc);
    EXPECT_STATUS(cudnnDestroyRNNDescriptor(rnn), CUDNN_STATUS_SUCCESS);
}

// LRN (header defaults 5, 1e-4, 0.75, 2; n in [1, 16]) and divisive normalization (4-d tensors).
void check_lrn(cudnnHandle_t handle) {
    cudnnLRNDescriptor_t lrn = nullptr;
    EXPECT_STATUS(cudnnCreateLRNDescriptor(&lrn), CUDNN_STATUS_SUCCESS);
    unsigned n = 0;
    double alpha = 0, beta = 0, k = 0;
    EXPECT_STATUS(cudnnGetLRNDescriptor(lrn, &n, &alpha, &beta, &k), CUDNN_STATUS_SUCCESS);
    EXPECT(n == 5 && alpha == 1e-4 && beta == 0.75 && k == 2.0);
    EXPECT_STATUS(cudnnSetLRNDescriptor(lrn, 17, 1e-4, 0.75, 2.0), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetLRNDescriptor(lrn, 3, 1e-4, 0.75, 1.0), CUDNN_STATUS_SUCCESS);
    cudnnTensorDescriptor_t desc = tensor4d(2, 8, 6, 6);
    void *x = device_floats(576), *y = device_floats(576), *dy = device_floats(576), *dx = device_floats(576),
         *temp = device_floats(576), *temp2 = device_floats(576);
    const float one = 1, zero = 0;
    const auto cross = CUDNN_LRN_CROSS_CHANNEL_DIM1;
    EXPECT_STATUS(cudnnLRNCrossChannelForward(handle, lrn, cross, &one, desc, x, &zero, desc, y), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnLRNCrossChannelBackward(handle, lrn, cross, &one, desc, y, desc, dy, desc, x, &zero, desc, dx),
                  CUDNN_STATUS_SUCCESS);
    const auto means = CUDNN_DIVNORM_PRECOMPUTED_MEANS;
    EXPECT_STATUS(
        cudnnDivisiveNormalizationForward(handle, lrn, means, &one, desc, x, nullptr, temp, temp2, &zero, desc, y),
        CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnDivisiveNormalizationForward(handle, lrn, means, &one, desc, x, nullptr, nullptr, temp2, &zero, desc, y),
        CUDNN_STATUS_BAD_PARAM);  // no scratch
    EXPECT_STATUS(cudnnDivisiveNormalizationBackward(handle, lrn, means, &one, desc, x, nullptr, dy, temp, temp2, &zero,
                                                     desc, dx, nullptr),
                  CUDNN_STATUS_SUCCESS);
    for (void* p : {x, y, dy, dx, temp, temp2}) cudaFree(p);
    cudnnDestroyTensorDescriptor(desc);
    EXPECT_STATUS(cudnnDestroyLRNDescriptor(lrn), CUDNN_STATUS_SUCCESS);
}

// CTC loss: probs [T 10, N 3, A 6]; host labels of lengths 3, 2, 4 over inputs of 10, 8, 9 steps. The
// workspace holds alpha and beta, 4 bytes per state (2 x longest label + 1) per step per sample.
void check_ctc(cudnnHandle_t handle) {
    cudnnCTCLossDescriptor_t ctc = nullptr;
    EXPECT_STATUS(cudnnCreateCTCLossDescriptor(&ctc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetCTCLossDescriptor_v9(ctc, CUDNN_DATA_HALF, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                               CUDNN_CTC_ZERO_OOB_GRADIENTS, 5),
                  CUDNN_STATUS_BAD_PARAM);  // FP32 compute only
    EXPECT_STATUS(cudnnSetCTCLossDescriptor_v9(ctc, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                               CUDNN_CTC_ZERO_OOB_GRADIENTS, 5),
                  CUDNN_STATUS_SUCCESS);
    cudnnDataType_t type{};
    cudnnLossNormalizationMode_t normalization{};
    cudnnCTCGradMode_t grad_mode{};
    int max_label = 0;
    EXPECT_STATUS(cudnnGetCTCLossDescriptor_v9(ctc, &type, &normalization, &grad_mode, &max_label),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(type == CUDNN_DATA_FLOAT && normalization == CUDNN_LOSS_NORMALIZATION_SOFTMAX && max_label == 5);
    cudnnTensorDescriptor_t probs_desc = nullptr;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&probs_desc), CUDNN_STATUS_SUCCESS);
    const int dims[] = {10, 3, 6}, strides[] = {18, 6, 1};
    EXPECT_STATUS(cudnnSetTensorNdDescriptor(probs_desc, CUDNN_DATA_FLOAT, 3, dims, strides), CUDNN_STATUS_SUCCESS);
    const int labels[] = {1, 2, 3, 4, 5, 1, 2, 3, 4}, label_lengths[] = {3, 2, 4}, input_lengths[] = {10, 8, 9};
    size_t workspace = 0, workspace_v8 = 0;
    const auto algo = CUDNN_CTC_LOSS_ALGO_DETERMINISTIC;
    EXPECT_STATUS(cudnnGetCTCLossWorkspaceSize(handle, probs_desc, probs_desc, labels, label_lengths, input_lengths,
                                               algo, ctc, &workspace),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(workspace == 2 * 9 * 10 * 3 * 4);
    EXPECT_STATUS(cudnnGetCTCLossWorkspaceSize_v8(handle, algo, ctc, probs_desc, probs_desc, &workspace_v8),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(workspace_v8 == 2 * 11 * 10 * 3 * 4);
    void *probs = device_floats(180), *gradients = device_floats(180), *costs = device_floats(3),
         *space = device_floats(workspace_v8 / 4);
    EXPECT_STATUS(cudnnCTCLoss(handle, probs_desc, probs, labels, label_lengths, input_lengths, costs, probs_desc,
                               gradients, algo, ctc, space, workspace - 4),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnCTCLoss(handle, probs_desc, probs, labels, label_lengths, input_lengths, costs, probs_desc,
                               gradients, algo, ctc, space, workspace),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCTCLoss_v8(handle, algo, ctc, probs_desc, probs, nullptr, nullptr, nullptr, costs, probs_desc,
                                  nullptr, workspace_v8, space),
                  CUDNN_STATUS_SUCCESS);  // costs only
    for (void* p : {probs, gradients, costs, space}) cudaFree(p);
    cudnnDestroyTensorDescriptor(probs_desc);
    EXPECT_STATUS(cudnnDestroyCTCLossDescriptor(ctc), CUDNN_STATUS_SUCCESS);
}

// The normalization API: batch norm Ex's rules under cudnnNorm* names; derived descriptors per channel
// (1 x C x 1 x 1) and per activation (1 x C x H x W); groupCnt 1 only.
void check_normalization(cudnnHandle_t handle) {
    cudnnTensorDescriptor_t x_desc = tensor4d(4, 8, 6, 6), params = nullptr, mean_var = nullptr;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&params), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&mean_var), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnDeriveNormTensorDescriptor(params, mean_var, x_desc, CUDNN_NORM_PER_ACTIVATION, 1),
                  CUDNN_STATUS_SUCCESS);
    cudnnDataType_t type{};
    int n = 0, c = 0, h = 0, w = 0, ns = 0, cs = 0, hs = 0, ws = 0;
    EXPECT_STATUS(cudnnGetTensor4dDescriptor(params, &type, &n, &c, &h, &w, &ns, &cs, &hs, &ws), CUDNN_STATUS_SUCCESS);
    EXPECT(n == 1 && c == 8 && h == 6 && w == 6);
    EXPECT_STATUS(cudnnDeriveNormTensorDescriptor(params, mean_var, x_desc, CUDNN_NORM_PER_CHANNEL, 2),
                  CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(cudnnDeriveNormTensorDescriptor(params, mean_var, x_desc, CUDNN_NORM_PER_CHANNEL, 1),
                  CUDNN_STATUS_SUCCESS);
    const auto mode = CUDNN_NORM_PER_CHANNEL;
    const auto ops = CUDNN_NORM_OPS_NORM;
    const auto algo = CUDNN_NORM_ALGO_STANDARD;
    size_t workspace = 0, backward_workspace = 0, reserve = 1;
    EXPECT_STATUS(cudnnGetNormalizationForwardTrainingWorkspaceSize(handle, mode, ops, algo, x_desc, nullptr, x_desc,
                                                                    params, nullptr, mean_var, &workspace, 1),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(workspace == 8 * 2 * 4);
    EXPECT_STATUS(cudnnGetNormalizationBackwardWorkspaceSize(handle, mode, ops, algo, x_desc, x_desc, x_desc, nullptr,
                                                             x_desc, params, nullptr, mean_var, &backward_workspace, 1),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnGetNormalizationTrainingReserveSpaceSize(handle, mode, ops, algo, nullptr, x_desc, &reserve, 1),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(reserve == 0);
    void *x = device_floats(1152), *y = device_floats(1152), *p = device_floats(48), *space = device_floats(64);
    float* f = static_cast<float*>(p);
    const float one = 1, zero = 0;
    EXPECT_STATUS(cudnnNormalizationForwardTraining(handle, mode, ops, algo, &one, &zero, x_desc, x, params, f, f + 8,
                                                    0.1, mean_var, f + 16, f + 24, 1e-5, f + 32, f + 40, nullptr,
                                                    nullptr, nullptr, x_desc, y, space, workspace, nullptr, 0, 1),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnNormalizationForwardInference(handle, mode, ops, algo, &one, &zero, x_desc, x, params, f, f + 8, mean_var,
                                           f + 16, f + 24, nullptr, nullptr, nullptr, x_desc, y, 1e-5, 1),
        CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(
        cudnnNormalizationBackward(handle, mode, ops, algo, &one, &zero, &one, &zero, x_desc, x, x_desc, y, x_desc, y,
                                   nullptr, nullptr, x_desc, x, params, f, f + 8, f + 16, f + 24, 1e-5, mean_var,
                                   f + 32, f + 40, nullptr, space, backward_workspace, nullptr, 0, 1),
        CUDNN_STATUS_SUCCESS);
    for (void* q : {x, y, p, space}) cudaFree(q);
    cudnnDestroyTensorDescriptor(mean_var);
    cudnnDestroyTensorDescriptor(params);
    cudnnDestroyTensorDescriptor(x_desc);
}

// Tensor-transform descriptors: padding into another layout (folding not modelled), for tensors and
// filters; the destination from cudnnInitTransformDest.
void check_tensor_transform(cudnnHandle_t handle) {
    cudnnTensorTransformDescriptor_t t = nullptr;
    EXPECT_STATUS(cudnnCreateTensorTransformDescriptor(&t), CUDNN_STATUS_SUCCESS);
    const int32_t before[] = {0, 0, 1, 1}, after[] = {0, 1, 1, 1};
    const uint32_t fold[] = {1, 1, 2, 2}, no_fold[] = {1, 1, 1, 1};
    EXPECT_STATUS(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NHWC, before, after, fold, CUDNN_TRANSFORM_FOLD),
                  CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(
        cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NHWC, before, after, no_fold, CUDNN_TRANSFORM_FOLD),
        CUDNN_STATUS_SUCCESS);
    cudnnTensorFormat_t format{};
    int32_t got_before[4] = {}, got_after[4] = {};
    uint32_t got_fold[4] = {};
    cudnnFoldingDirection_t direction{};
    EXPECT_STATUS(cudnnGetTensorTransformDescriptor(t, 4, &format, got_before, got_after, got_fold, &direction),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(format == CUDNN_TENSOR_NHWC && got_before[2] == 1 && got_after[1] == 1 && got_fold[3] == 1);
    cudnnTensorDescriptor_t src = tensor4d(2, 3, 4, 4), dest = nullptr;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&dest), CUDNN_STATUS_SUCCESS);
    size_t dest_bytes = 0;
    EXPECT_STATUS(cudnnInitTransformDest(t, src, dest, &dest_bytes), CUDNN_STATUS_SUCCESS);
    EXPECT(dest_bytes == 2 * 4 * 6 * 6 * 4);  // C 3 + 1, H and W 4 + 2
    void *x = device_floats(96), *y = device_floats(288);
    const float one = 1, zero = 0;
    EXPECT_STATUS(cudnnTransformTensorEx(handle, t, &one, src, x, &zero, dest, y), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnTransformTensorEx(handle, t, &one, src, x, &zero, src, y), CUDNN_STATUS_BAD_PARAM);
    cudnnFilterDescriptor_t w_src = nullptr, w_dest = nullptr;
    EXPECT_STATUS(cudnnCreateFilterDescriptor(&w_src), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateFilterDescriptor(&w_dest), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetFilter4dDescriptor(w_src, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 3, 4, 4),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetFilter4dDescriptor(w_dest, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 2, 4, 6, 6),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnTransformFilter(handle, t, &one, w_src, x, &zero, w_dest, y), CUDNN_STATUS_SUCCESS);
    cudnnDestroyFilterDescriptor(w_dest);
    cudnnDestroyFilterDescriptor(w_src);
    cudaFree(y);
    cudaFree(x);
    cudnnDestroyTensorDescriptor(dest);
    cudnnDestroyTensorDescriptor(src);
    EXPECT_STATUS(cudnnDestroyTensorTransformDescriptor(t), CUDNN_STATUS_SUCCESS);
}

}  // namespace

int main() {
    EXPECT(cudnnGetVersion() == CUDNN_VERSION);
    EXPECT(std::strcmp(cudnnGetErrorString(CUDNN_STATUS_NOT_SUPPORTED), "CUDNN_STATUS_NOT_SUPPORTED") == 0);
    EXPECT_STATUS(cudnnCreate(nullptr), CUDNN_STATUS_BAD_PARAM_NULL_POINTER);

    cudnnHandle_t handle = nullptr;
    EXPECT_STATUS(cudnnCreate(&handle), CUDNN_STATUS_SUCCESS);
    cudaStream_t stream = nullptr;
    EXPECT(cudaStreamCreate(&stream) == cudaSuccess);
    EXPECT_STATUS(cudnnSetStream(handle, stream), CUDNN_STATUS_SUCCESS);
    cudaStream_t got = nullptr;
    EXPECT_STATUS(cudnnGetStream(handle, &got), CUDNN_STATUS_SUCCESS);
    EXPECT(got == stream);

    // x [8, 6, 20, 20], w [12, 3, 5, 5] with 2 groups, padding 1, stride 2 -> y [8, 12, 9, 9].
    cudnnTensorDescriptor_t x_desc, y_desc, bad_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&x_desc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&y_desc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&bad_desc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateFilterDescriptor(&w_desc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCreateConvolutionDescriptor(&conv), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 6, 20, 20),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 0, 20, 20),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 6, 20, 20),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetFilter4dDescriptor(w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 12, 3, 5, 5),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetConvolution2dDescriptor(conv, 1, 1, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                  CUDNN_STATUS_SUCCESS);
    int n = 0, c = 0, h = 0, w = 0;
    // Without the group count the channels do not match the filter.
    EXPECT_STATUS(cudnnGetConvolution2dForwardOutputDim(conv, x_desc, w_desc, &n, &c, &h, &w), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnSetConvolutionGroupCount(conv, 2), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnGetConvolution2dForwardOutputDim(conv, x_desc, w_desc, &n, &c, &h, &w), CUDNN_STATUS_SUCCESS);
    EXPECT(n == 8 && c == 12 && h == 9 && w == 9);
    EXPECT_STATUS(cudnnSetTensor4dDescriptor(y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 12, 9, 9),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetTensor4dDescriptor(bad_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 12, 10, 9),
                  CUDNN_STATUS_SUCCESS);
    size_t bytes = 0;
    EXPECT_STATUS(cudnnGetTensorSizeInBytes(y_desc, &bytes), CUDNN_STATUS_SUCCESS);
    EXPECT(bytes == 8u * 12 * 9 * 9 * 4);

    // Algorithm queries: supported ones first, each with its workspace; the rest NOT_SUPPORTED.
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    EXPECT_STATUS(cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc, w_desc, conv, y_desc,
                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(returned == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    EXPECT(perf[0].status == CUDNN_STATUS_SUCCESS && perf[0].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    EXPECT(perf[0].time > 0 && perf[0].time <= perf[1].time);
    EXPECT(perf[returned - 1].status == CUDNN_STATUS_NOT_SUPPORTED);
    size_t workspace = 0;
    EXPECT_STATUS(
        cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc, w_desc, conv, y_desc, perf[0].algo, &workspace),
        CUDNN_STATUS_SUCCESS);
    EXPECT(workspace == perf[0].memory && workspace > 0);
    EXPECT_STATUS(cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc, w_desc, conv, y_desc,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_FFT, &workspace),
                  CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT_STATUS(cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc, w_desc, conv, bad_desc,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &workspace),
                  CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH);

    // The compute calls check the workspace against the algorithm.
    void *x = nullptr, *wt = nullptr, *y = nullptr, *ws = nullptr;
    EXPECT(cudaMalloc(&x, 8 * 6 * 20 * 20 * 4) == cudaSuccess);
    EXPECT(cudaMalloc(&wt, 12 * 3 * 5 * 5 * 4) == cudaSuccess);
    EXPECT(cudaMalloc(&y, bytes) == cudaSuccess);
    EXPECT(cudaMalloc(&ws, perf[0].memory) == cudaSuccess);
    const float one = 1, zero = 0;
    EXPECT_STATUS(
        cudnnConvolutionForward(handle, &one, x_desc, x, w_desc, wt, conv, perf[0].algo, nullptr, 0, &zero, y_desc, y),
        CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnConvolutionForward(handle, &one, x_desc, x, w_desc, wt, conv, perf[0].algo, ws, perf[0].memory,
                                          &zero, y_desc, y),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnConvolutionForward(handle, &one, x_desc, x, w_desc, wt, conv,
                                          CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, ws, perf[0].memory, &zero, y_desc, y),
                  CUDNN_STATUS_NOT_SUPPORTED);
    check_bias_activation({handle, x_desc, y_desc, w_desc, conv, x, wt, y, ws, perf[0].memory}, 12);
    // The Ex forms of Find answer as Get_v7 does (nothing is measured here).
    cudnnConvolutionBwdDataAlgoPerf_t data_perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    EXPECT_STATUS(cudnnFindConvolutionBackwardDataAlgorithmEx(handle, w_desc, wt, y_desc, y, conv, x_desc, x,
                                                              CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned,
                                                              data_perf, nullptr, 0),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(returned > 0 && data_perf[0].algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
    cudnnConvolutionBwdFilterAlgoPerf_t filter_perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    EXPECT_STATUS(cudnnFindConvolutionBackwardFilterAlgorithmEx(handle, x_desc, x, y_desc, y, conv, w_desc, wt,
                                                                CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned,
                                                                filter_perf, nullptr, 0),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(returned > 0 && filter_perf[0].algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
    EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);

    check_op_tensor(handle);
    check_reduce_tensor(handle);
    check_dropout(handle);
    check_batch_norm_ex(handle);
    check_queries(handle);
    check_rnn(handle);
    check_lrn(handle);
    check_ctc(handle);
    check_normalization(handle);
    check_tensor_transform(handle);
    check_attention(handle);
    check_fused_ops(handle);
    check_spatial_transformer(handle);
    EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);

    // Functions the simulator does not model answer with the documented status, never crash.
    EXPECT_STATUS(cudnnGetFoldedConvBackwardDataDescriptors(handle, nullptr, nullptr, nullptr, nullptr,
                                                            CUDNN_TENSOR_NCHW, nullptr, nullptr, nullptr, nullptr,
                                                            nullptr, nullptr, nullptr, nullptr),
                  CUDNN_STATUS_NOT_SUPPORTED);

    // Backend API: tensors finalize only when complete; a finalized descriptor takes no more
    // attributes; reading back an unset attribute or with the wrong type fails; a plan must be
    // finalized before it runs.
    cudnnBackendDescriptor_t tensor = nullptr, plan = nullptr, pack = nullptr;
    EXPECT_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &tensor), CUDNN_STATUS_SUCCESS);
    const int64_t dims[] = {2, 3, 4, 4}, strides[] = {48, 16, 4, 1}, uid = 7, alignment = 16;
    const cudnnDataType_t type = CUDNN_DATA_FLOAT;
    EXPECT_STATUS(cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendFinalize(tensor), CUDNN_STATUS_BAD_PARAM);  // no strides, type, id yet
    EXPECT_STATUS(cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendFinalize(tensor), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid),
                  CUDNN_STATUS_BAD_PARAM);
    int64_t read[4] = {}, count = 0;
    EXPECT_STATUS(cudnnBackendGetAttribute(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, &count, read),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(count == 4 && read[1] == 3 && read[3] == 4);
    EXPECT_STATUS(cudnnBackendGetAttribute(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_FLOAT, 4, &count, read),
                  CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE);
    EXPECT_STATUS(cudnnBackendGetAttribute(tensor, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &count, read),
                  CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendFinalize(plan), CUDNN_STATUS_BAD_PARAM);  // no engine config
    EXPECT_STATUS(cudnnBackendExecute(handle, plan, pack), CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    EXPECT_STATUS(cudnnBackendExecute(handle, pack, plan), CUDNN_STATUS_BAD_PARAM);
    EXPECT_STATUS(cudnnBackendDestroyDescriptor(pack), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendDestroyDescriptor(plan), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendDestroyDescriptor(tensor), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendDestroyDescriptor(tensor), CUDNN_STATUS_BAD_PARAM);  // already destroyed
    check_frontend_lifetimes(handle);

    cudaFree(ws);
    cudaFree(y);
    cudaFree(wt);
    cudaFree(x);
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w_desc);
    cudnnDestroyTensorDescriptor(bad_desc);
    cudnnDestroyTensorDescriptor(y_desc);
    cudnnDestroyTensorDescriptor(x_desc);
    EXPECT_STATUS(cudnnDestroy(handle), CUDNN_STATUS_SUCCESS);
    cudaStreamDestroy(stream);
    if (g_failures == 0) std::printf("OK\n");
    return g_failures == 0 ? 0 : 1;
}
