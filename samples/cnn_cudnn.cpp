#include "cnn_cudnn.h"

#include <cstdio>
#include <cstdlib>

#include "common/check.h"

namespace tbdsample {

void fail_cudnn(cudnnStatus_t status, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s: %s failed at %s:%d: %s\n", program_name(), call, file, line, cudnnGetErrorString(status));
    std::exit(1);
}

TensorDesc::TensorDesc(int n, int c, int h, int w) {
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
}

TensorDesc::~TensorDesc() {
    cudnnDestroyTensorDescriptor(desc_);
}

namespace {

// The first algorithm the query ranks usable (the queries list the fastest first).
template <typename Perf>
const Perf& first_usable(const Perf* results, int count) {
    for (int i = 0; i < count; ++i) {
        if (results[i].status == CUDNN_STATUS_SUCCESS) return results[i];
    }
    std::fprintf(stderr, "%s: cuDNN offers no usable convolution algorithm\n", program_name());
    std::exit(1);
}

// Runs `call(workspace, bytes)` with a workspace of `bytes` allocated for it alone.
template <typename Call>
void with_workspace(DeviceAllocator& allocator, std::size_t bytes, Call&& call) {
    void* workspace = bytes > 0 ? allocator.allocate(bytes, Category::workspace) : nullptr;
    call(workspace, bytes);
    if (workspace != nullptr) allocator.release(workspace);
}

}  // namespace

ConvLayer::ConvLayer(cudnnHandle_t handle, int batch, int in, int out, int size, cudnnMathType_t math, bool backend)
    : handle_(handle),
      batch_(batch),
      in_(in),
      out_(out),
      size_(size),
      x_desc_(batch, in, size, size),
      y_desc_(batch, out, size, size),
      backend_(backend) {
    if (backend) {
        const std::vector<int64_t> x{batch, in, size, size}, w{out, in, 3, 3}, y{batch, out, size, size};
        const bool tensor_cores = math != CUDNN_FMA_MATH;
        auto build = [&](BackendPlan::Pass pass, const std::vector<int64_t>& in_dims,
                         const std::vector<int64_t>& second_dims, const std::vector<int64_t>& out_dims, float beta) {
            Backend b;
            b.plan = std::make_unique<BackendPlan>(handle, tensor_cores);
            b.in = b.plan->tensor(in_dims);
            b.second = b.plan->tensor(second_dims);
            b.out = b.plan->tensor(out_dims);
            b.plan->convolution(pass, b.in, b.second, b.out, beta);
            b.plan->finalize();
            return b;
        };
        forward_plan_ = build(BackendPlan::Pass::forward, x, w, y, 0.0f);
        data_plan_ = build(BackendPlan::Pass::backward_data, y, w, x, 0.0f);
        filter_plan_ = build(BackendPlan::Pass::backward_filter, x, y, w, 0.0f);
        filter_accumulate_plan_ = build(BackendPlan::Pass::backward_filter, x, y, w, 1.0f);
        return;
    }
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc_));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, out, in, 3, 3));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_desc_));
    CUDNN_CHECK(
        cudnnSetConvolution2dDescriptor(conv_desc_, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, math));
    int n = 0, c = 0, h = 0, w = 0;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv_desc_, x_desc_.get(), w_desc_, &n, &c, &h, &w));
    if (n != batch || c != out || h != size || w != size) {
        std::fprintf(stderr, "%s: unexpected convolution output %dx%dx%dx%d\n", program_name(), n, c, h, w);
        std::exit(1);
    }
    int count = 0;
    cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc_.get(), w_desc_, conv_desc_, y_desc_.get(),
                                                       CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, forward));
    forward_algo_ = first_usable(forward, count).algo;
    cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, w_desc_, y_desc_.get(), conv_desc_, x_desc_.get(),
                                                            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, data));
    data_algo_ = first_usable(data, count).algo;
    cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, x_desc_.get(), y_desc_.get(), conv_desc_, w_desc_,
                                                              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, filter));
    filter_algo_ = first_usable(filter, count).algo;
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc_.get(), w_desc_, conv_desc_, y_desc_.get(),
                                                        forward_algo_, &forward_workspace_));
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(handle, w_desc_, y_desc_.get(), conv_desc_, x_desc_.get(),
                                                             data_algo_, &data_workspace_));
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, x_desc_.get(), y_desc_.get(), conv_desc_,
                                                               w_desc_, filter_algo_, &filter_workspace_));
}

ConvLayer::~ConvLayer() {
    if (conv_desc_ != nullptr) cudnnDestroyConvolutionDescriptor(conv_desc_);
    if (w_desc_ != nullptr) cudnnDestroyFilterDescriptor(w_desc_);
}

void ConvLayer::forward(DeviceAllocator& allocator, const float* x, const float* w, float* y) const {
    if (backend_) {
        forward_plan_.plan->execute(allocator, {{forward_plan_.in, const_cast<float*>(x)},
                                                {forward_plan_.second, const_cast<float*>(w)},
                                                {forward_plan_.out, y}});
        return;
    }
    const float alpha = 1.0f, beta = 0.0f;
    with_workspace(allocator, forward_workspace_, [&](void* workspace, std::size_t bytes) {
        CUDNN_CHECK(cudnnConvolutionForward(handle_, &alpha, x_desc_.get(), x, w_desc_, w, conv_desc_, forward_algo_,
                                            workspace, bytes, &beta, y_desc_.get(), y));
    });
}

void ConvLayer::forward_bias_activation(DeviceAllocator& allocator, const float* x, const float* w, const float* bias,
                                        cudnnTensorDescriptor_t bias_desc, cudnnActivationDescriptor_t activation,
                                        float* y) const {
    const float alpha1 = 1.0f, alpha2 = 0.0f;
    with_workspace(allocator, forward_workspace_, [&](void* workspace, std::size_t bytes) {
        CUDNN_CHECK(cudnnConvolutionBiasActivationForward(handle_, &alpha1, x_desc_.get(), x, w_desc_, w, conv_desc_,
                                                          forward_algo_, workspace, bytes, &alpha2, y_desc_.get(), y,
                                                          bias_desc, bias, activation, y_desc_.get(), y));
    });
}

void ConvLayer::backward_data(DeviceAllocator& allocator, const float* w, const float* dy, float* dx) const {
    if (backend_) {
        data_plan_.plan->execute(allocator, {{data_plan_.in, const_cast<float*>(dy)},
                                             {data_plan_.second, const_cast<float*>(w)},
                                             {data_plan_.out, dx}});
        return;
    }
    const float alpha = 1.0f, beta = 0.0f;
    with_workspace(allocator, data_workspace_, [&](void* workspace, std::size_t bytes) {
        CUDNN_CHECK(cudnnConvolutionBackwardData(handle_, &alpha, w_desc_, w, y_desc_.get(), dy, conv_desc_, data_algo_,
                                                 workspace, bytes, &beta, x_desc_.get(), dx));
    });
}

void ConvLayer::backward_filter(DeviceAllocator& allocator, const float* x, const float* dy, float* dw,
                                float beta) const {
    if (backend_) {
        const Backend& b = beta == 0.0f ? filter_plan_ : filter_accumulate_plan_;
        b.plan->execute(allocator, {{b.in, const_cast<float*>(x)}, {b.second, const_cast<float*>(dy)}, {b.out, dw}});
        return;
    }
    const float alpha = 1.0f;
    with_workspace(allocator, filter_workspace_, [&](void* workspace, std::size_t bytes) {
        CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle_, &alpha, x_desc_.get(), x, y_desc_.get(), dy, conv_desc_,
                                                   filter_algo_, workspace, bytes, &beta, w_desc_, dw));
    });
}

double ConvLayer::flops() const {
    return 2.0 * batch_ * out_ * in_ * 9.0 * size_ * size_;
}

}  // namespace tbdsample
