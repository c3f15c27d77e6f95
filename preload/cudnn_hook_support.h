// Shared by the cuDNN hooks (cudnn_hooks.cpp: convolutions and the basic ops; cudnn_ops_hooks.cpp:
// tensor ops, dropout, normalization, LRN; cudnn_adv_hooks.cpp: RNN and CTC): reading cuDNN's
// opaque descriptors back with its own getters and filling a library-call record.
//
// cuDNN operations as library calls. After the real call succeeds the hook reads the descriptors back
// with cuDNN's own getters (they are opaque) and records the operation, its shape, data and compute
// types, FLOPs (counted by the collector's rules, cudnn_flops.h), the
// operands in the library_calls role columns (a, b read; c written; workspace), the workspace passed
// and the handle's stream, and each operand's byte extent (a_bytes, b_bytes, c_bytes: from the
// descriptor's dimensions, strides and data type; filters are packed), which sizes the tensors a
// caching allocator hands out (the implicit-GEMM shape m, n, k does not). Roles: convolution forward x, w -> y;
// backward data dy, w -> dx; backward filter x, dy -> dw; batch norm x, scale -> y (backward dy, x -> dx); element-wise
// ops input -> output. The compute type follows the math type: FP32 data under CUDNN_FMA_MATH (or a pre-Ampere device,
// or NVIDIA_TF32_OVERRIDE=0) is CUBLAS_COMPUTE_32F, otherwise CUBLAS_COMPUTE_32F_FAST_TF32, so the analyzer's precision
// split needs no cuDNN knowledge.
#pragma once

#include <cudnn.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "cudnn_common.h"
#include "cudnn_flops.h"
#include "library_call.h"
#include "operand_extent.h"

namespace tbdprof::preload {

inline LibraryFunction<decltype(&cudnnGetTensorNdDescriptor)> real_get_tensor{"cudnnGetTensorNdDescriptor"};
inline LibraryFunction<decltype(&cudnnGetFilterNdDescriptor)> real_get_filter{"cudnnGetFilterNdDescriptor"};
inline LibraryFunction<decltype(&cudnnGetConvolutionMathType)> real_get_math{"cudnnGetConvolutionMathType"};
inline LibraryFunction<decltype(&cudnnGetConvolutionGroupCount)> real_get_groups{"cudnnGetConvolutionGroupCount"};
inline LibraryFunction<decltype(&cudnnGetPoolingNdDescriptor)> real_get_pooling{"cudnnGetPoolingNdDescriptor"};
inline LibraryFunction<decltype(&cudnnGetActivationDescriptor)> real_get_activation{"cudnnGetActivationDescriptor"};

constexpr int kMaxDims = 8;

struct Tensor {
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    int dims = 0;
    int dim[kMaxDims] = {};
    int stride[kMaxDims] = {};  // filters are packed: strides follow from the dimensions
    bool strided = false;
    int64_t elements() const {
        int64_t count = dims > 0 ? 1 : 0;
        for (int i = 0; i < dims; ++i) count *= dim[i];
        return count;
    }
};

inline bool read_tensor(cudnnTensorDescriptor_t descriptor, Tensor* out) {
    auto get = real_get_tensor.get();
    out->strided = true;
    return get != nullptr && descriptor != nullptr &&
           get(descriptor, kMaxDims, &out->type, &out->dims, out->dim, out->stride) == CUDNN_STATUS_SUCCESS &&
           out->dims > 0 && out->dims <= kMaxDims;
}

inline bool read_filter(cudnnFilterDescriptor_t descriptor, Tensor* out) {
    auto get = real_get_filter.get();
    cudnnTensorFormat_t format{};
    return get != nullptr && descriptor != nullptr &&
           get(descriptor, kMaxDims, &out->type, &format, &out->dims, out->dim) == CUDNN_STATUS_SUCCESS &&
           out->dims > 0 && out->dims <= kMaxDims;
}

// The bytes the tensor spans from its pointer (0 unknown): from its strides, or packed for filters.
inline uint64_t extent_bytes(const Tensor& t) {
    int64_t dim[kMaxDims], stride[kMaxDims];
    int64_t packed = 1;
    for (int i = t.dims - 1; i >= 0; --i) {
        dim[i] = t.dim[i];
        stride[i] = t.strided ? t.stride[i] : packed;
        packed *= t.dim[i];
    }
    return strided_extent_bytes(t.dims, dim, stride, element_bytes(t.type));
}

inline uint64_t tensor_bytes(cudnnTensorDescriptor_t descriptor) {
    Tensor t;
    return read_tensor(descriptor, &t) ? extent_bytes(t) : 0;
}

inline uint64_t filter_bytes(cudnnFilterDescriptor_t descriptor) {
    Tensor t;
    return read_filter(descriptor, &t) ? extent_bytes(t) : 0;
}

// The operands' extents, in the roles `common` recorded (a, b read; c written); null descriptors give 0.
inline void describe_extents(raw::RawLibraryCall& record, uint64_t a, uint64_t b, uint64_t c) {
    record.a_bytes = record.a != 0 ? a : 0;
    record.b_bytes = record.b != 0 ? b : 0;
    record.c_bytes = record.c != 0 ? c : 0;
}

// Compute capability major of the current device (once per process; 9 when it cannot be read).
inline int device_major() {
    static const int major = [] {
        using GetDevice = CUresult (*)(CUdevice*);
        using GetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
        auto get_device = reinterpret_cast<GetDevice>(real_dlsym(RTLD_NEXT, "cuCtxGetDevice"));
        auto get_attribute = reinterpret_cast<GetAttribute>(real_dlsym(RTLD_NEXT, "cuDeviceGetAttribute"));
        CUdevice device = 0;
        int value = 9;
        if (get_device == nullptr || get_attribute == nullptr || get_device(&device) != CUDA_SUCCESS ||
            get_attribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) != CUDA_SUCCESS) {
            return 9;
        }
        return value;
    }();
    return major;
}

// cublasComputeType_t values: what the convolution runs in (see the file comment).
inline uint8_t convolution_compute_type(cudnnDataType_t type, cudnnMathType_t math) {
    if (type == CUDNN_DATA_DOUBLE) return CUBLAS_COMPUTE_64F;
    if (type != CUDNN_DATA_FLOAT) return CUBLAS_COMPUTE_32F;  // half/bf16 data with FP32 accumulation
    const char* override_tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
    if (override_tf32 != nullptr && std::strcmp(override_tf32, "0") == 0) return CUBLAS_COMPUTE_32F;
    if (math == CUDNN_FMA_MATH || device_major() < 8) return CUBLAS_COMPUTE_32F;
    return CUBLAS_COMPUTE_32F_FAST_TF32;
}

inline uint8_t arithmetic_compute_type(cudnnDataType_t type) {
    return type == CUDNN_DATA_DOUBLE ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
}

inline void common(ThreadState& thread, raw::RawLibraryCall& record, const char* name, raw::LibraryOp op,
                   cudnnHandle_t handle, const void* a, const void* b, void* c) {
    record.name_string = collector::intern_string(thread, name);
    record.op = op;
    record.stream = reinterpret_cast<uint64_t>(cudnn_stream_of(handle));
    record.a = reinterpret_cast<uint64_t>(a);
    record.b = reinterpret_cast<uint64_t>(b);
    record.c = reinterpret_cast<uint64_t>(c);
    record.batch = 1;
}

// A convolution pass: x [N, C, ...], w [K, C/g, ...], y [N, K, ...] (for backward data x is dx, y is dy).
inline void describe_convolution(raw::RawLibraryCall& record, cudnnTensorDescriptor_t x_desc,
                                 cudnnFilterDescriptor_t w_desc, cudnnConvolutionDescriptor_t conv,
                                 cudnnTensorDescriptor_t y_desc) {
    Tensor x, w, y;
    if (!read_tensor(x_desc, &x) || !read_filter(w_desc, &w) || !read_tensor(y_desc, &y) || x.dims != w.dims ||
        x.dims != y.dims) {
        return;  // shapes unknown: FLOPs stay 0
    }
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    int groups = 1;
    if (auto get = real_get_math.get(); get != nullptr) get(conv, &math);
    if (auto get = real_get_groups.get(); get != nullptr) get(conv, &groups);
    if (groups < 1) groups = 1;
    int64_t filter_spatial = 1, output_spatial = 1;
    for (int i = 2; i < x.dims; ++i) {
        filter_spatial *= w.dim[i];
        output_spatial *= y.dim[i];
    }
    const int64_t n = x.dim[0], c = x.dim[1], k = w.dim[0];
    record.a_type = record.b_type = record.c_type = cuda_type_of(x.type);
    record.compute_type = convolution_compute_type(x.type, math);
    record.m = n * output_spatial;
    record.n = k / groups;
    record.k = c / groups * filter_spatial;
    record.batch = groups;
    record.flops = cudnn_flops::convolution_flops(n, c, k, groups, filter_spatial, output_spatial);
}

// Element-wise and normalisation ops: m = elements of `shape`, FLOPs from `flops(elements)`.
template <typename Flops>
inline void describe_elementwise(raw::RawLibraryCall& record, cudnnTensorDescriptor_t shape, Flops&& flops) {
    Tensor t;
    if (!read_tensor(shape, &t)) return;
    record.a_type = record.c_type = cuda_type_of(t.type);
    record.compute_type = arithmetic_compute_type(t.type);
    record.m = t.elements();
    record.flops = flops(t.elements());
}

inline void describe_workspace(raw::RawLibraryCall& record, void* workspace, size_t bytes) {
    record.workspace = reinterpret_cast<uint64_t>(workspace);
    record.workspace_bytes = workspace != nullptr ? bytes : 0;
}

inline int64_t pooling_window(cudnnPoolingDescriptor_t pooling, int* mode) {
    auto get = real_get_pooling.get();
    cudnnPoolingMode_t pooling_mode{};
    cudnnNanPropagation_t nan{};
    int dims = 0, window[kMaxDims] = {}, pad[kMaxDims], stride[kMaxDims];
    if (get == nullptr ||
        get(pooling, kMaxDims, &pooling_mode, &nan, &dims, window, pad, stride) != CUDNN_STATUS_SUCCESS) {
        return -1;
    }
    *mode = pooling_mode;
    int64_t size = 1;
    for (int i = 0; i < dims && i < kMaxDims; ++i) size *= window[i];
    return size;
}

inline int activation_mode(cudnnActivationDescriptor_t activation) {
    auto get = real_get_activation.get();
    cudnnActivationMode_t mode{};
    cudnnNanPropagation_t nan{};
    double coef = 0;
    if (get == nullptr || get(activation, &mode, &nan, &coef) != CUDNN_STATUS_SUCCESS) return -1;
    return mode;
}

}  // namespace tbdprof::preload

// In a hook: `call` runs the real cuDNN function with the hook's ARGS (a parenthesized list); the
// hook returns CUDNN_STATUS_NOT_INITIALIZED when that function cannot be found.
#define TBD_CUDNN_CALL(symbol, ARGS)                           \
    static LibraryFunction<decltype(&::symbol)> real{#symbol}; \
    auto fn = real.get();                                      \
    if (fn == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;    \
    const auto call = [&] { return fn ARGS; };
