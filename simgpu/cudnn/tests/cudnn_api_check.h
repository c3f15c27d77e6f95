// Shared by the simulated cuDNN's API tests (cudnn_api_test.cpp, cudnn_api_families_test.cpp): the
// failure count and its checks, and small descriptor and memory helpers.
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdio>

namespace cudnn_api_test {

inline int g_failures = 0;

#define EXPECT(condition)                                                    \
    do {                                                                     \
        if (!(condition)) {                                                  \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition); \
            ++cudnn_api_test::g_failures;                                    \
        }                                                                    \
    } while (0)

#define EXPECT_STATUS(call, status) EXPECT((call) == (status))

inline cudnnTensorDescriptor_t tensor4d(int n, int c, int h, int w) {
    cudnnTensorDescriptor_t d = nullptr;
    EXPECT_STATUS(cudnnCreateTensorDescriptor(&d), CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w), CUDNN_STATUS_SUCCESS);
    return d;
}

inline void* device_floats(size_t count) {
    void* p = nullptr;
    EXPECT(cudaMalloc(&p, count * sizeof(float)) == cudaSuccess);
    return p;
}

// The multi-head attention, fused-ops, convolution-helper and spatial-transformer families
// (cudnn_api_families_test.cpp).
void check_attention(cudnnHandle_t handle);
void check_fused_ops(cudnnHandle_t handle);
void check_spatial_transformer(cudnnHandle_t handle);
// Start-up queries (cudnn_api_queries_test.cpp).
void check_queries(cudnnHandle_t handle);
// The backend API as PyTorch's cudnn frontend drives it (cudnn_api_backend_test.cpp).
void check_frontend_lifetimes(cudnnHandle_t handle);

}  // namespace cudnn_api_test
