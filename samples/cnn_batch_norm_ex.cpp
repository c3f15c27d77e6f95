#include "cnn_batch_norm_ex.h"

#include "cnn_cudnn.h"

namespace tbdsample {

BatchNormEx::BatchNormEx(cudnnHandle_t handle, cudnnTensorDescriptor_t data, cudnnTensorDescriptor_t params,
                         cudnnActivationDescriptor_t relu, bool fuse_relu)
    : handle_(handle),
      data_(data),
      params_(params),
      relu_(fuse_relu ? relu : nullptr),
      ops_(fuse_relu ? CUDNN_BATCHNORM_OPS_BN_ACTIVATION : CUDNN_BATCHNORM_OPS_BN) {
    const cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL;
    CUDNN_CHECK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(handle, mode, ops_, data, nullptr, data,
                                                                         params, relu_, &forward_workspace_));
    CUDNN_CHECK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(handle, mode, ops_, data, data, data, nullptr, data,
                                                                  params, relu_, &backward_workspace_));
    CUDNN_CHECK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, mode, ops_, relu_, data, &reserve_bytes_));
}

void BatchNormEx::forward(DeviceAllocator& allocator, const float* x, float* y, const float* scale, const float* shift,
                          float* running_mean, float* running_variance, float* save_mean, float* save_inv_variance,
                          void* reserve) const {
    const float one = 1.0f, zero = 0.0f;
    void* workspace = forward_workspace_ > 0 ? allocator.allocate(forward_workspace_, Category::workspace) : nullptr;
    CUDNN_CHECK(cudnnBatchNormalizationForwardTrainingEx(
        handle_, CUDNN_BATCHNORM_SPATIAL, ops_, &one, &zero, data_, x, nullptr, nullptr, data_, y, params_, scale,
        shift, 0.1, running_mean, running_variance, epsilon, save_mean, save_inv_variance, relu_, workspace,
        forward_workspace_, reserve, reserve_bytes_));
    if (workspace != nullptr) allocator.release(workspace);
}

void BatchNormEx::backward(DeviceAllocator& allocator, const float* x, const float* y, const float* dy, float* dx,
                           const float* scale, const float* shift, float* d_scale, float* d_shift, float beta_param,
                           const float* save_mean, const float* save_inv_variance, void* reserve) const {
    const float one = 1.0f, zero = 0.0f;
    void* workspace = backward_workspace_ > 0 ? allocator.allocate(backward_workspace_, Category::workspace) : nullptr;
    CUDNN_CHECK(cudnnBatchNormalizationBackwardEx(
        handle_, CUDNN_BATCHNORM_SPATIAL, ops_, &one, &zero, &one, &beta_param, data_, x, data_, y, data_, dy, nullptr,
        nullptr, data_, dx, params_, scale, shift, d_scale, d_shift, epsilon, save_mean, save_inv_variance, relu_,
        workspace, backward_workspace_, reserve, reserve_bytes_));
    if (workspace != nullptr) allocator.release(workspace);
}

}  // namespace tbdsample
