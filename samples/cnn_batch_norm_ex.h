// Batch norm (spatial, training) through cuDNN's Ex API for the CNN sample: the forward and backward
// Ex calls with the workspace and reserve space their size queries ask for, either batch norm alone
// (CUDNN_BATCHNORM_OPS_BN, ReLU as its own call) or with the ReLU fused in
// (CUDNN_BATCHNORM_OPS_BN_ACTIVATION). Each call's workspace is allocated for that call alone
// (category workspace); the reserve space is written by forward and read by backward, so it lives
// with the micro-batch's activations (category activations).
#pragma once

#include <cudnn.h>

#include <cstddef>

#include "common/device_memory.h"

namespace tbdsample {

class BatchNormEx {
public:
    // x, y, dy and dx of one block share `data` ([batch, channels, h, w]); `params` is [1, channels, 1, 1].
    BatchNormEx(cudnnHandle_t handle, cudnnTensorDescriptor_t data, cudnnTensorDescriptor_t params,
                cudnnActivationDescriptor_t relu, bool fuse_relu);

    std::size_t reserve_bytes() const { return reserve_bytes_; }
    bool fuses_relu() const { return ops_ == CUDNN_BATCHNORM_OPS_BN_ACTIVATION; }

    // y = [relu](batch_norm(x)); updates the running statistics, saves mean and inverse variance.
    void forward(DeviceAllocator& allocator, const float* x, float* y, const float* scale, const float* shift,
                 float* running_mean, float* running_variance, float* save_mean, float* save_inv_variance,
                 void* reserve) const;
    // dx from dy (dy: of y, before the fused ReLU's backward); d_scale and d_shift written with
    // beta_param (0: overwrite, 1: accumulate).
    void backward(DeviceAllocator& allocator, const float* x, const float* y, const float* dy, float* dx,
                  const float* scale, const float* shift, float* d_scale, float* d_shift, float beta_param,
                  const float* save_mean, const float* save_inv_variance, void* reserve) const;

    static constexpr double epsilon = CUDNN_BN_MIN_EPSILON * 10;

private:
    cudnnHandle_t handle_;
    cudnnTensorDescriptor_t data_, params_;
    cudnnActivationDescriptor_t relu_;
    cudnnBatchNormOps_t ops_;
    std::size_t forward_workspace_ = 0, backward_workspace_ = 0, reserve_bytes_ = 0;
};

}  // namespace tbdsample
