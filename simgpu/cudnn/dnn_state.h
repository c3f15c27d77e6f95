// The simulated cuDNN's handle and legacy descriptors (the opaque structs cudnn_*_v9.h declare), and
// the helpers the operations share: status bookkeeping, scalar reading, shapes and FLOP counts.
#pragma once

#include <cuda.h>
#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "bound_context.h"
#include "dnn_flops.h"
#include "driver_entry_points.h"
#include "kernel_table.h"

struct cudnnContext {
    const tbdsim::blas::DriverEntryPoints* driver = nullptr;
    tbdsim::blas::BoundContext bound;
    CUmodule module = nullptr;
    tbdsim::dnn::KernelTable kernels{};
    CUstream stream = nullptr;  // null: the legacy default stream
    int compute_capability_major = 9;
    int sm_count = 132;  // sizes the dropout states (one RNG state per resident thread)
    // What cudnnCreate allocates for the handle, as cuDNN 9.19 did on the real H200 (docs/simgpu.md,
    // "cuDNN handles"): two device buffers and a pinned host word, freed by cudnnDestroy.
    CUdeviceptr own_device[2] = {};
    void* own_pinned = nullptr;
};

namespace tbdsim::dnn {
inline constexpr std::size_t kHandleDeviceBytes[2] = {25344, 4};
inline constexpr std::size_t kHandlePinnedBytes = 4;
}  // namespace tbdsim::dnn

inline constexpr int kMaxDims = 8;

struct cudnnTensorStruct {
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    int dims = 0;
    std::array<int, kMaxDims> dim{};
    std::array<int, kMaxDims> stride{};
    bool set = false;
};

struct cudnnFilterStruct {
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
    int dims = 0;
    std::array<int, kMaxDims> dim{};  // K, C, spatial...
    bool set = false;
};

struct cudnnConvolutionStruct {
    int spatial = 0;
    std::array<int, kMaxDims> pad{}, stride{}, dilation{};
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    int groups = 1;
    cudnnReorderType_t reorder = CUDNN_DEFAULT_REORDER;
    bool set = false;
};

struct cudnnActivationStruct {
    cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
    cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
    double coef = 0;
    double swish_beta = 1.0;  // cudnnSetActivationDescriptorSwishBeta; 1 until set (plain swish)
    bool set = false;
};

struct cudnnPoolingStruct {
    cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
    cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
    int spatial = 0;
    std::array<int, kMaxDims> window{}, pad{}, stride{};
    bool set = false;
};

namespace tbdsim::dnn {

// Remembers the message of the last failure for cudnnGetLastErrorString (per thread, as cuDNN does).
cudnnStatus_t fail(cudnnStatus_t status, const char* message);
// cudnnCreate's own memory (cudnnContext::own_device, own_pinned): false when an allocation failed.
bool allocate_handle_memory(cudnnContext& handle);
void release_handle_memory(cudnnContext& handle);

std::size_t element_bytes(cudnnDataType_t type);
int64_t element_count(const cudnnTensorStruct& tensor);
// alpha/beta: double for double data, float otherwise (the documented rule).
double read_scalar(const void* value, cudnnDataType_t data_type);

// The precision a convolution on this data with this math type runs in on the handle's device.
TbdsimPrecision convolution_precision(cudnnHandle_t handle, cudnnDataType_t data_type, cudnnMathType_t math);

// A convolution's sizes, checked: x [N, C, spatial], w [K, C/groups, filter spatial], y [N, K, out].
struct ConvShape {
    int64_t n = 0, c = 0, k = 0, groups = 1;
    int64_t filter_spatial = 1;  // R*S(*T)
    int64_t output_spatial = 1;  // P*Q(*O)
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    // 2 * N * K * (C / groups) * R * S * P * Q: the same for forward, backward data and backward filter.
    double flops() const { return convolution_flops(n, c, k, groups, filter_spatial, output_spatial); }
};
// The output dims of a convolution (N, K, spatial...), BAD_PARAM when they do not fit.
cudnnStatus_t convolution_output(const cudnnConvolutionStruct& conv, const cudnnTensorStruct& x,
                                 const cudnnFilterStruct& w, int* dims_out, int* out);
// Checks x, w, y against each other (y must be what convolution_output says) and fills the shape.
cudnnStatus_t convolution_shape(const cudnnConvolutionStruct* conv, const cudnnTensorStruct* x,
                                const cudnnFilterStruct* w, const cudnnTensorStruct* y, ConvShape* shape);

// Launches one kernel on the handle's stream; EXECUTION_FAILED when the driver refuses.
cudnnStatus_t run(cudnnHandle_t handle, const Launch& launch);

// One element-wise kernel over `out`'s elements (grid from them unless grid_x is given), timed as a
// roofline on `flops` (at FP32, or FP64 for double data) and `bytes` of device-memory traffic.
struct Elementwise {
    int kernel = 0;
    const cudnnTensorStruct* out = nullptr;
    double flops = 0;
    double bytes = 0;
    TbdsimDnnParams params{};
    unsigned grid_x = 0;
    unsigned threads = 256;
};
cudnnStatus_t run_elementwise(cudnnHandle_t handle, const Elementwise& work);

// The bytes of `tensor`'s elements (packed).
double tensor_bytes(const cudnnTensorStruct& tensor);

// Both set and of the same dims (not necessarily the same data type).
bool same_dims(const cudnnTensorStruct* a, const cudnnTensorStruct* b);

}  // namespace tbdsim::dnn
