// The simulated libcudnn.so.9 through its public API, as a program linked against the toolkit's
// cuDNN sees it: handles, descriptor arithmetic, algorithm and workspace queries, argument checks,
// and the documented status of functions it does not model.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdio>
#include <cstring>

namespace {

int g_failures = 0;

#define EXPECT(condition)                                                    \
    do {                                                                     \
        if (!(condition)) {                                                  \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition); \
            ++g_failures;                                                    \
        }                                                                    \
    } while (0)

#define EXPECT_STATUS(call, status) EXPECT((call) == (status))

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
    EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);

    // Functions the simulator does not model answer with the documented status, never crash.
    cudnnRNNDescriptor_t rnn = nullptr;
    EXPECT_STATUS(cudnnCreateRNNDescriptor(&rnn), CUDNN_STATUS_NOT_SUPPORTED);
    size_t ctc_workspace = 0;
    EXPECT_STATUS(cudnnGetCTCLossWorkspaceSize(handle, nullptr, nullptr, nullptr, nullptr, nullptr,
                                               CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, nullptr, &ctc_workspace),
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
