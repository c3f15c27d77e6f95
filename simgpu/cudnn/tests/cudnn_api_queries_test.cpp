// The simulated libcudnn.so.9's start-up queries through the public API; run by cudnn_api_test.cpp's
// main.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <cstring>

#include "cudnn_api_check.h"

namespace cudnn_api_test {
namespace {

void test_callback(cudnnSeverity_t, void*, const cudnnDebug_t*, const char*) {}

}  // namespace

// Start-up queries: version checks, the runtime-error query, the logging callback, the 4d/2d getters,
// filter sizes, N-d tensors by format, swish beta; cudnnTransformTensor between NCHW and NHWC.
void check_queries(cudnnHandle_t handle) {
    EXPECT_STATUS(cudnnGraphVersionCheck(), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnOpsVersionCheck(), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnCnnVersionCheck(), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnAdvVersionCheck(), CUDNN_STATUS_SUCCESS);
    cudnnStatus_t runtime = CUDNN_STATUS_INTERNAL_ERROR;
    EXPECT_STATUS(cudnnQueryRuntimeError(handle, &runtime, CUDNN_ERRQUERY_BLOCKING, nullptr), CUDNN_STATUS_SUCCESS);
    EXPECT(runtime == CUDNN_STATUS_SUCCESS);
    int user = 0;
    EXPECT_STATUS(cudnnSetCallback(CUDNN_SEV_ERROR_EN, &user, test_callback), CUDNN_STATUS_SUCCESS);
    unsigned mask = 0;
    void* got_user = nullptr;
    cudnnCallback_t got = nullptr;
    EXPECT_STATUS(cudnnGetCallback(&mask, &got_user, &got), CUDNN_STATUS_SUCCESS);
    EXPECT(mask == CUDNN_SEV_ERROR_EN && got_user == &user && got == test_callback);

    cudnnFilterDescriptor_t w;
    EXPECT_STATUS(cudnnCreateFilterDescriptor(&w), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 8, 4, 3, 3), CUDNN_STATUS_SUCCESS);
    cudnnDataType_t type{};
    cudnnTensorFormat_t format{};
    int k = 0, c = 0, h = 0, width = 0;
    EXPECT_STATUS(cudnnGetFilter4dDescriptor(w, &type, &format, &k, &c, &h, &width), CUDNN_STATUS_SUCCESS);
    EXPECT(type == CUDNN_DATA_HALF && format == CUDNN_TENSOR_NCHW && k == 8 && c == 4 && h == 3 && width == 3);
    size_t bytes = 0;
    EXPECT_STATUS(cudnnGetFilterSizeInBytes(w, &bytes), CUDNN_STATUS_SUCCESS);
    EXPECT(bytes == 8 * 4 * 3 * 3 * 2);
    cudnnDestroyFilterDescriptor(w);

    cudnnConvolutionDescriptor_t conv;
    EXPECT_STATUS(cudnnCreateConvolutionDescriptor(&conv), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetConvolution2dDescriptor(conv, 1, 2, 3, 4, 1, 2, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT),
                  CUDNN_STATUS_SUCCESS);
    int pad_h = 0, pad_w = 0, u = 0, v = 0, dil_h = 0, dil_w = 0;
    cudnnConvolutionMode_t mode{};
    EXPECT_STATUS(cudnnGetConvolution2dDescriptor(conv, &pad_h, &pad_w, &u, &v, &dil_h, &dil_w, &mode, &type),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(pad_h == 1 && pad_w == 2 && u == 3 && v == 4 && dil_h == 1 && dil_w == 2 && mode == CUDNN_CONVOLUTION);
    cudnnReorderType_t reorder = CUDNN_NO_REORDER;
    EXPECT_STATUS(cudnnGetConvolutionReorderType(conv, &reorder), CUDNN_STATUS_SUCCESS);
    EXPECT(reorder == CUDNN_DEFAULT_REORDER);
    cudnnDestroyConvolutionDescriptor(conv);

    cudnnPoolingDescriptor_t pool;
    EXPECT_STATUS(cudnnCreatePoolingDescriptor(&pool), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 2, 1, 0, 2, 1),
                  CUDNN_STATUS_SUCCESS);
    cudnnPoolingMode_t pool_mode{};
    cudnnNanPropagation_t nan{};
    int wh = 0, ww = 0, ph = 0, pw = 0, sh = 0, sw = 0;
    EXPECT_STATUS(cudnnGetPooling2dDescriptor(pool, &pool_mode, &nan, &wh, &ww, &ph, &pw, &sh, &sw),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(pool_mode == CUDNN_POOLING_MAX && wh == 3 && ww == 2 && ph == 1 && pw == 0 && sh == 2 && sw == 1);
    cudnnDestroyPoolingDescriptor(pool);

    cudnnActivationDescriptor_t swish;
    EXPECT_STATUS(cudnnCreateActivationDescriptor(&swish), CUDNN_STATUS_SUCCESS);
    double beta = 0;
    EXPECT_STATUS(cudnnSetActivationDescriptorSwishBeta(swish, 1.5), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnGetActivationDescriptorSwishBeta(swish, &beta), CUDNN_STATUS_SUCCESS);
    EXPECT(beta == 1.5);
    cudnnDestroyActivationDescriptor(swish);

    // [2, 3, 4, 5] NHWC: channels fastest, then W, H, N.
    const int dims[] = {2, 3, 4, 5};
    cudnnTensorDescriptor_t nchw = tensor4d(2, 3, 4, 5), nhwc;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&nhwc), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetTensorNdDescriptorEx(nhwc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 4, dims),
                  CUDNN_STATUS_SUCCESS);
    int n = 0, strides[4] = {};
    int got_dims[4] = {};
    EXPECT_STATUS(cudnnGetTensorNdDescriptor(nhwc, 4, &type, &n, got_dims, strides), CUDNN_STATUS_SUCCESS);
    EXPECT(n == 4 && strides[0] == 60 && strides[1] == 1 && strides[2] == 15 && strides[3] == 3);
    void *x = device_floats(120), *y = device_floats(120);
    const float one = 1, zero = 0;
    EXPECT_STATUS(cudnnTransformTensor(handle, &one, nchw, x, &zero, nhwc, y), CUDNN_STATUS_SUCCESS);
    cudnnTensorDescriptor_t other = tensor4d(2, 3, 5, 4);
    EXPECT_STATUS(cudnnTransformTensor(handle, &one, nchw, x, &zero, other, y), CUDNN_STATUS_BAD_PARAM);
    cudaFree(y);
    cudaFree(x);
    cudnnDestroyTensorDescriptor(other);
    cudnnDestroyTensorDescriptor(nhwc);
    cudnnDestroyTensorDescriptor(nchw);
}

}  // namespace cudnn_api_test
