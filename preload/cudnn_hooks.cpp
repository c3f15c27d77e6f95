// cuDNN convolutions (the fused convolution-bias-activation too), batch norm, pooling, activation,
// softmax and add-tensor as library calls (what is recorded and why: cudnn_hook_support.h).
#include "cudnn_hook_support.h"
#include "cudnn_operands.h"

using namespace tbdprof::preload;
using tbdprof::raw::LibraryOp;
using tbdprof::raw::RawLibraryCall;
extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                                             const cudnnTensorDescriptor_t x_desc, const void* x,
                                                             const cudnnFilterDescriptor_t w_desc, const void* w,
                                                             const cudnnConvolutionDescriptor_t conv,
                                                             cudnnConvolutionFwdAlgo_t algo, void* workspace,
                                                             size_t workspace_bytes, const void* beta,
                                                             const cudnnTensorDescriptor_t y_desc, void* y) {
    TBD_CUDNN_CALL(cudnnConvolutionForward,
                   (handle, alpha, x_desc, x, w_desc, w, conv, algo, workspace, workspace_bytes, beta, y_desc, y))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnConvolutionForward", LibraryOp::ConvolutionForward, handle, x, w, y);
        describe_extents(record, tensor_bytes(x_desc), filter_bytes(w_desc), tensor_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_convolution(record, x_desc, w_desc, conv, y_desc);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                                                  const cudnnFilterDescriptor_t w_desc, const void* w,
                                                                  const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                                  const cudnnConvolutionDescriptor_t conv,
                                                                  cudnnConvolutionBwdDataAlgo_t algo, void* workspace,
                                                                  size_t workspace_bytes, const void* beta,
                                                                  const cudnnTensorDescriptor_t dx_desc, void* dx) {
    TBD_CUDNN_CALL(cudnnConvolutionBackwardData,
                   (handle, alpha, w_desc, w, dy_desc, dy, conv, algo, workspace, workspace_bytes, beta, dx_desc, dx))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnConvolutionBackwardData", LibraryOp::ConvolutionBackwardData, handle, dy, w, dx);
        describe_extents(record, tensor_bytes(dy_desc), filter_bytes(w_desc), tensor_bytes(dx_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_convolution(record, dx_desc, w_desc, conv, dy_desc);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnTensorDescriptor_t dy_desc, const void* dy, const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionBwdFilterAlgo_t algo, void* workspace, size_t workspace_bytes, const void* beta,
    const cudnnFilterDescriptor_t dw_desc, void* dw) {
    TBD_CUDNN_CALL(cudnnConvolutionBackwardFilter,
                   (handle, alpha, x_desc, x, dy_desc, dy, conv, algo, workspace, workspace_bytes, beta, dw_desc, dw))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnConvolutionBackwardFilter", LibraryOp::ConvolutionBackwardFilter, handle, x, dy,
               dw);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(dy_desc), filter_bytes(dw_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_convolution(record, x_desc, dw_desc, conv, dy_desc);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void* alpha,
                                                                  const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                                  const void* beta,
                                                                  const cudnnTensorDescriptor_t db_desc, void* db) {
    TBD_CUDNN_CALL(cudnnConvolutionBackwardBias, (handle, alpha, dy_desc, dy, beta, db_desc, db))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnConvolutionBackwardBias", LibraryOp::ConvolutionBackwardBias, handle, dy, nullptr,
               db);
        describe_extents(record, tensor_bytes(dy_desc), 0, tensor_bytes(db_desc));
        describe_elementwise(record, dy_desc, [](int64_t e) { return cudnn_flops::bias_gradient_flops(e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t y_desc, void* y,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, double factor, void* running_mean,
    void* running_variance, double epsilon, void* save_mean, void* save_inv_variance) {
    TBD_CUDNN_CALL(cudnnBatchNormalizationForwardTraining,
                   (handle, mode, alpha, beta, x_desc, x, y_desc, y, params_desc, scale, bias, factor, running_mean,
                    running_variance, epsilon, save_mean, save_inv_variance))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnBatchNormalizationForwardTraining", LibraryOp::BatchNormForwardTraining, handle, x,
               scale, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        const uint64_t param_bytes = tensor_bytes(params_desc);
        record_norm_forward(thread, record, {param_bytes, param_bytes}, bias, running_mean, running_variance, save_mean,
                            save_inv_variance);
        describe_elementwise(record, x_desc, [](int64_t e) {
            return cudnn_flops::batch_norm_flops(cudnn_flops::BatchNormPass::Training, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t y_desc, void* y,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, const void* mean,
    const void* variance, double epsilon) {
    TBD_CUDNN_CALL(cudnnBatchNormalizationForwardInference,
                   (handle, mode, alpha, beta, x_desc, x, y_desc, y, params_desc, scale, bias, mean, variance, epsilon))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnBatchNormalizationForwardInference", LibraryOp::BatchNormForwardInference, handle,
               x, scale, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        const uint64_t param_bytes = tensor_bytes(params_desc);
        record_norm_inference(thread, record, {param_bytes, param_bytes}, bias, mean, variance);
        describe_elementwise(record, x_desc, [](int64_t e) {
            return cudnn_flops::batch_norm_flops(cudnn_flops::BatchNormPass::Inference, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha_data, const void* beta_data,
    const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnTensorDescriptor_t dy_desc, const void* dy, const cudnnTensorDescriptor_t dx_desc, void* dx,
    const cudnnTensorDescriptor_t params_desc, const void* scale, void* dscale, void* dbias, double epsilon,
    const void* saved_mean, const void* saved_inv_variance) {
    TBD_CUDNN_CALL(cudnnBatchNormalizationBackward,
                   (handle, mode, alpha_data, beta_data, alpha_param, beta_param, x_desc, x, dy_desc, dy, dx_desc, dx,
                    params_desc, scale, dscale, dbias, epsilon, saved_mean, saved_inv_variance))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnBatchNormalizationBackward", LibraryOp::BatchNormBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        const uint64_t param_bytes = tensor_bytes(params_desc);
        record_norm_backward(thread, record, {param_bytes, param_bytes}, scale, nullptr, dscale, dbias, saved_mean,
                             saved_inv_variance);
        describe_elementwise(record, x_desc, [](int64_t e) {
            return cudnn_flops::batch_norm_flops(cudnn_flops::BatchNormPass::Backward, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t pooling,
                                                         const void* alpha, const cudnnTensorDescriptor_t x_desc,
                                                         const void* x, const void* beta,
                                                         const cudnnTensorDescriptor_t y_desc, void* y) {
    TBD_CUDNN_CALL(cudnnPoolingForward, (handle, pooling, alpha, x_desc, x, beta, y_desc, y))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnPoolingForward", LibraryOp::PoolingForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        int mode = 0;
        const int64_t window = pooling_window(pooling, &mode);
        describe_elementwise(record, y_desc,
                             [&](int64_t e) { return window < 0 ? 0.0 : cudnn_flops::pooling_flops(mode, window, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t pooling,
                                                          const void* alpha, const cudnnTensorDescriptor_t y_desc,
                                                          const void* y, const cudnnTensorDescriptor_t dy_desc,
                                                          const void* dy, const cudnnTensorDescriptor_t x_desc,
                                                          const void* x, const void* beta,
                                                          const cudnnTensorDescriptor_t dx_desc, void* dx) {
    TBD_CUDNN_CALL(cudnnPoolingBackward, (handle, pooling, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnPoolingBackward", LibraryOp::PoolingBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        int mode = 0;
        const int64_t window = pooling_window(pooling, &mode);
        describe_elementwise(record, dy_desc,
                             [&](int64_t e) { return window < 0 ? 0.0 : cudnn_flops::pooling_flops(mode, window, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle,
                                                            cudnnActivationDescriptor_t activation, const void* alpha,
                                                            const cudnnTensorDescriptor_t x_desc, const void* x,
                                                            const void* beta, const cudnnTensorDescriptor_t y_desc,
                                                            void* y) {
    TBD_CUDNN_CALL(cudnnActivationForward, (handle, activation, alpha, x_desc, x, beta, y_desc, y))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnActivationForward", LibraryOp::ActivationForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        const int mode = activation_mode(activation);
        describe_elementwise(record, y_desc,
                             [&](int64_t e) { return mode < 0 ? 0.0 : cudnn_flops::activation_flops(mode, false, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnActivationBackward(cudnnHandle_t handle,
                                                             cudnnActivationDescriptor_t activation, const void* alpha,
                                                             const cudnnTensorDescriptor_t y_desc, const void* y,
                                                             const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                             const cudnnTensorDescriptor_t x_desc, const void* x,
                                                             const void* beta, const cudnnTensorDescriptor_t dx_desc,
                                                             void* dx) {
    TBD_CUDNN_CALL(cudnnActivationBackward,
                   (handle, activation, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnActivationBackward", LibraryOp::ActivationBackward, handle, dy, y, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(y_desc), tensor_bytes(dx_desc));
        const int mode = activation_mode(activation);
        describe_elementwise(record, dx_desc,
                             [&](int64_t e) { return mode < 0 ? 0.0 : cudnn_flops::activation_flops(mode, true, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                                         cudnnSoftmaxMode_t mode, const void* alpha,
                                                         const cudnnTensorDescriptor_t x_desc, const void* x,
                                                         const void* beta, const cudnnTensorDescriptor_t y_desc,
                                                         void* y) {
    TBD_CUDNN_CALL(cudnnSoftmaxForward, (handle, algo, mode, alpha, x_desc, x, beta, y_desc, y))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnSoftmaxForward", LibraryOp::SoftmaxForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        describe_elementwise(record, y_desc, [](int64_t e) { return cudnn_flops::softmax_flops(e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                                          cudnnSoftmaxMode_t mode, const void* alpha,
                                                          const cudnnTensorDescriptor_t y_desc, const void* y,
                                                          const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                          const void* beta, const cudnnTensorDescriptor_t dx_desc,
                                                          void* dx) {
    TBD_CUDNN_CALL(cudnnSoftmaxBackward, (handle, algo, mode, alpha, y_desc, y, dy_desc, dy, beta, dx_desc, dx))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnSoftmaxBackward", LibraryOp::SoftmaxBackward, handle, dy, y, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(y_desc), tensor_bytes(dx_desc));
        describe_elementwise(record, dx_desc, [](int64_t e) { return cudnn_flops::softmax_flops(e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha,
                                                    const cudnnTensorDescriptor_t a_desc, const void* a,
                                                    const void* beta, const cudnnTensorDescriptor_t c_desc, void* c) {
    TBD_CUDNN_CALL(cudnnAddTensor, (handle, alpha, a_desc, a, beta, c_desc, c))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnAddTensor", LibraryOp::AddTensor, handle, a, nullptr, c);
        describe_extents(record, tensor_bytes(a_desc), 0, tensor_bytes(c_desc));
        describe_elementwise(record, c_desc, [](int64_t e) { return cudnn_flops::add_tensor_flops(e); });
    });
}

// The fused convolution: a forward convolution (x, w -> y) whose FLOPs add the epilogue's, counted
// as the simulator does (dnn_flops.h). z and the bias are read too but have no role column.
extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void* alpha1, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnFilterDescriptor_t w_desc, const void* w, const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionFwdAlgo_t algo, void* workspace, size_t workspace_bytes, const void* alpha2,
    const cudnnTensorDescriptor_t z_desc, const void* z, const cudnnTensorDescriptor_t bias_desc, const void* bias,
    const cudnnActivationDescriptor_t activation, const cudnnTensorDescriptor_t y_desc, void* y) {
    TBD_CUDNN_CALL(cudnnConvolutionBiasActivationForward,
                   (handle, alpha1, x_desc, x, w_desc, w, conv, algo, workspace, workspace_bytes, alpha2, z_desc, z,
                    bias_desc, bias, activation, y_desc, y))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnConvolutionBiasActivationForward", LibraryOp::ConvolutionForward, handle, x, w, y);
        describe_extents(record, tensor_bytes(x_desc), filter_bytes(w_desc), tensor_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_convolution(record, x_desc, w_desc, conv, y_desc);
        Tensor out;
        const int mode = activation_mode(activation);
        if (record.flops > 0 && mode >= 0 && read_tensor(y_desc, &out))
            record.flops = cudnn_flops::convolution_bias_activation_flops(record.flops, mode, out.elements());
    });
}
