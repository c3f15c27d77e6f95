// Convolution helpers (cudnn_cnn_v9.h): cudnnIm2Col, which lays out the A matrix of a GEMM
// convolution, and cudnnReorderFilterAndBias, which reorders INT8x32 filters (and their bias) once
// ahead of inference. Both are copies: one kernel each, 0 FLOPs, timed on the bytes they move.
#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kVectorChannels = 32;  // INT8x32: 32 channels per vector

cudnnStatus_t copy_kernel(cudnnHandle_t handle, int kernel, int64_t elements, double bytes, const void* in, void* out) {
    dnn::Launch launch;
    launch.kernel = kernel;
    launch.grid_x = dnn::blocks_for(elements, 256);
    launch.bytes = bytes;
    launch.params = {in, nullptr, out, nullptr, 0, elements, 1, 0, 0, 0, nullptr, {}};
    return dnn::run(handle, launch);
}

}  // namespace

// The A matrix: (N x output spatial) rows of (C x filter spatial) columns, in x's data type.
TBD_EXPORT cudnnStatus_t cudnnIm2Col(cudnnHandle_t handle, const cudnnTensorDescriptor_t x_desc, const void* x,
                                     const cudnnFilterDescriptor_t w_desc, const cudnnConvolutionDescriptor_t conv,
                                     void* col) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (x_desc == nullptr || w_desc == nullptr || conv == nullptr || x == nullptr || col == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "im2col: null argument");
    }
    int dims = 0;
    int out[kMaxDims] = {};
    if (const cudnnStatus_t s = dnn::convolution_output(*conv, *x_desc, *w_desc, &dims, out);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    int64_t rows = out[0], columns = x_desc->dim[1];
    for (int i = 2; i < dims; ++i) {
        rows *= out[i];
        columns *= w_desc->dim[i];
    }
    const int64_t elements = rows * columns;
    const double bytes = dnn::tensor_bytes(*x_desc) +
                         static_cast<double>(elements) * static_cast<double>(dnn::element_bytes(x_desc->type));
    return copy_kernel(handle, dnn::kIm2Col, elements, bytes, x, col);
}

// Filters in CUDNN_TENSOR_NCHW_VECT_C of 8-bit integers, C a multiple of 32 (the simulator's filter
// descriptors hold INT8x32 data as INT8 in that format); the bias, when asked for, is K floats.
TBD_EXPORT cudnnStatus_t cudnnReorderFilterAndBias(cudnnHandle_t handle, const cudnnFilterDescriptor_t w_desc,
                                                   cudnnReorderType_t reorder, const void* w, void* reordered_w,
                                                   int reorder_bias, const void* bias, void* reordered_bias) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (w_desc == nullptr || w == nullptr || reordered_w == nullptr ||
        (reorder_bias != 0 && (bias == nullptr || reordered_bias == nullptr))) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "reorder filter: null argument");
    }
    if (reorder != CUDNN_DEFAULT_REORDER && reorder != CUDNN_NO_REORDER) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "reorder filter: unknown reorder type");
    }
    if (!w_desc->set || w_desc->format != CUDNN_TENSOR_NCHW_VECT_C ||
        (w_desc->type != CUDNN_DATA_INT8 && w_desc->type != CUDNN_DATA_UINT8) ||
        w_desc->dim[1] % kVectorChannels != 0) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "reorder filter: INT8x32 filters in NCHW_VECT_C expected");
    }
    int64_t elements = 1;
    for (int i = 0; i < w_desc->dims; ++i) elements *= w_desc->dim[i];
    const double bias_bytes = reorder_bias != 0 ? static_cast<double>(w_desc->dim[0]) * sizeof(float) : 0.0;
    return copy_kernel(handle, dnn::kReorderFilterBias, elements, 2.0 * (static_cast<double>(elements) + bias_bytes), w,
                       reordered_w);
}
