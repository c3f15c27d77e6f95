// cuDNN for the CNN sample: the error check, owned descriptors and one convolution layer that picks
// its algorithms with the Get_v7 queries and allocates the workspace each call needs (category
// workspace, freed right after the call, as a framework's workspace of one operation).
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <memory>

#include "cnn_backend.h"

#include "common/device_memory.h"

namespace tbdsample {

[[noreturn]] void fail_cudnn(cudnnStatus_t status, const char* call, const char* file, int line);

}  // namespace tbdsample

#define CUDNN_CHECK(call)                                                          \
    do {                                                                           \
        cudnnStatus_t tbd_check_status_ = (call);                                  \
        if (tbd_check_status_ != CUDNN_STATUS_SUCCESS)                             \
            ::tbdsample::fail_cudnn(tbd_check_status_, #call, __FILE__, __LINE__); \
    } while (0)

namespace tbdsample {

// An NCHW float tensor descriptor.
class TensorDesc {
public:
    TensorDesc(int n, int c, int h, int w);
    ~TensorDesc();
    TensorDesc(const TensorDesc&) = delete;
    TensorDesc& operator=(const TensorDesc&) = delete;
    cudnnTensorDescriptor_t get() const { return desc_; }

private:
    cudnnTensorDescriptor_t desc_ = nullptr;
};

// A 3x3, stride 1, padding 1 convolution from `in` to `out` channels on [batch, in, size, size],
// through the legacy API or (backend) through backend execution plans built once per pass.
class ConvLayer {
public:
    ConvLayer(cudnnHandle_t handle, int batch, int in, int out, int size, cudnnMathType_t math, bool backend = false);
    ~ConvLayer();
    ConvLayer(const ConvLayer&) = delete;
    ConvLayer& operator=(const ConvLayer&) = delete;

    void forward(DeviceAllocator& allocator, const float* x, const float* w, float* y) const;
    // y = act(conv(x, w) + bias) in one cudnnConvolutionBiasActivationForward (legacy API only; z is
    // not read: alpha2 = 0).
    void forward_bias_activation(DeviceAllocator& allocator, const float* x, const float* w, const float* bias,
                                 cudnnTensorDescriptor_t bias_desc, cudnnActivationDescriptor_t activation,
                                 float* y) const;
    void backward_data(DeviceAllocator& allocator, const float* w, const float* dy, float* dx) const;
    void backward_filter(DeviceAllocator& allocator, const float* x, const float* dy, float* dw, float beta) const;

    // 2 * N * K * C * R * S * P * Q, the FLOPs of each of the three passes.
    double flops() const;

private:
    cudnnHandle_t handle_;
    int batch_, in_, out_, size_;
    TensorDesc x_desc_, y_desc_;
    cudnnFilterDescriptor_t w_desc_ = nullptr;
    cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
    cudnnConvolutionFwdAlgo_t forward_algo_{};
    cudnnConvolutionBwdDataAlgo_t data_algo_{};
    cudnnConvolutionBwdFilterAlgo_t filter_algo_{};
    std::size_t forward_workspace_ = 0, data_workspace_ = 0, filter_workspace_ = 0;
    // Backend mode: one plan per pass (two for backward filter: overwrite and accumulate), and the
    // unique ids of their tensors in argument order.
    struct Backend {
        std::unique_ptr<BackendPlan> plan;
        int64_t in = 0, second = 0, out = 0;
    };
    Backend forward_plan_, data_plan_, filter_plan_, filter_accumulate_plan_;
    bool backend_ = false;
};

}  // namespace tbdsample
