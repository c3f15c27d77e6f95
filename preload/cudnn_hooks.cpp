// cuDNN operations as library calls. After the real call succeeds the hook reads the descriptors back
// with cuDNN's own getters (they are opaque) and records the operation, its shape, data and compute
// types, FLOPs (counted as simgpu/cudnn/dnn_flops.h documents, the simulator's own rules), the
// operands in the library_calls role columns (a, b read; c written; workspace), the workspace passed
// and the handle's stream, and each operand's byte extent (a_bytes, b_bytes, c_bytes: from the
// descriptor's dimensions, strides and data type; filters are packed), which sizes the tensors a
// caching allocator hands out (the implicit-GEMM shape m, n, k does not). Roles: convolution forward x, w -> y; backward data dy, w -> dx; backward
// filter x, dy -> dw; batch norm x, scale -> y (backward dy, x -> dx); element-wise ops input -> output.
// The compute type follows the math type: FP32 data under CUDNN_FMA_MATH (or a pre-Ampere device, or
// NVIDIA_TF32_OVERRIDE=0) is CUBLAS_COMPUTE_32F, otherwise CUBLAS_COMPUTE_32F_FAST_TF32, so the
// analyzer's precision split needs no cuDNN knowledge.
#include <cudnn.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "../simgpu/cudnn/dnn_flops.h"
#include "library_call.h"
#include "operand_extent.h"

namespace tbdprof::preload {
namespace {

namespace dnn = tbdsim::dnn;

LibraryFunction<decltype(&cudnnGetStream)> real_get_stream{"cudnnGetStream"};
LibraryFunction<decltype(&cudnnGetTensorNdDescriptor)> real_get_tensor{"cudnnGetTensorNdDescriptor"};
LibraryFunction<decltype(&cudnnGetFilterNdDescriptor)> real_get_filter{"cudnnGetFilterNdDescriptor"};
LibraryFunction<decltype(&cudnnGetConvolutionMathType)> real_get_math{"cudnnGetConvolutionMathType"};
LibraryFunction<decltype(&cudnnGetConvolutionGroupCount)> real_get_groups{"cudnnGetConvolutionGroupCount"};
LibraryFunction<decltype(&cudnnGetPoolingNdDescriptor)> real_get_pooling{"cudnnGetPoolingNdDescriptor"};
LibraryFunction<decltype(&cudnnGetActivationDescriptor)> real_get_activation{"cudnnGetActivationDescriptor"};

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

bool read_tensor(cudnnTensorDescriptor_t descriptor, Tensor* out) {
    auto get = real_get_tensor.get();
    out->strided = true;
    return get != nullptr && descriptor != nullptr &&
           get(descriptor, kMaxDims, &out->type, &out->dims, out->dim, out->stride) == CUDNN_STATUS_SUCCESS &&
           out->dims > 0 && out->dims <= kMaxDims;
}

bool read_filter(cudnnFilterDescriptor_t descriptor, Tensor* out) {
    auto get = real_get_filter.get();
    cudnnTensorFormat_t format{};
    return get != nullptr && descriptor != nullptr &&
           get(descriptor, kMaxDims, &out->type, &format, &out->dims, out->dim) == CUDNN_STATUS_SUCCESS &&
           out->dims > 0 && out->dims <= kMaxDims;
}

int64_t element_bytes(cudnnDataType_t type) {
    switch (type) {
        case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: return 4;
        case CUDNN_DATA_DOUBLE: return 8;
        case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
        case CUDNN_DATA_INT8: return 1;
        default: return 0;
    }
}

// The bytes the tensor spans from its pointer (0 unknown): from its strides, or packed for filters.
uint64_t extent_bytes(const Tensor& t) {
    int64_t dim[kMaxDims], stride[kMaxDims];
    int64_t packed = 1;
    for (int i = t.dims - 1; i >= 0; --i) {
        dim[i] = t.dim[i];
        stride[i] = t.strided ? t.stride[i] : packed;
        packed *= t.dim[i];
    }
    return strided_extent_bytes(t.dims, dim, stride, element_bytes(t.type));
}

uint64_t tensor_bytes(cudnnTensorDescriptor_t descriptor) {
    Tensor t;
    return read_tensor(descriptor, &t) ? extent_bytes(t) : 0;
}

uint64_t filter_bytes(cudnnFilterDescriptor_t descriptor) {
    Tensor t;
    return read_filter(descriptor, &t) ? extent_bytes(t) : 0;
}

// The operands' extents, in the roles `common` recorded (a, b read; c written); null descriptors give 0.
void describe_extents(raw::RawLibraryCall& record, uint64_t a, uint64_t b, uint64_t c) {
    record.a_bytes = record.a != 0 ? a : 0;
    record.b_bytes = record.b != 0 ? b : 0;
    record.c_bytes = record.c != 0 ? c : 0;
}

// cudaDataType_t values (library_types.h) of cuDNN data types, as the library_calls columns hold them.
uint8_t cuda_type_of(cudnnDataType_t type) {
    switch (type) {
        case CUDNN_DATA_FLOAT:
            return CUDA_R_32F;
        case CUDNN_DATA_DOUBLE:
            return CUDA_R_64F;
        case CUDNN_DATA_HALF:
            return CUDA_R_16F;
        case CUDNN_DATA_BFLOAT16:
            return CUDA_R_16BF;
        case CUDNN_DATA_INT8:
            return CUDA_R_8I;
        case CUDNN_DATA_INT32:
            return CUDA_R_32I;
        default:
            return 0xff;
    }
}

// Compute capability major of the current device (once per process; 9 when it cannot be read).
int device_major() {
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
uint8_t convolution_compute_type(cudnnDataType_t type, cudnnMathType_t math) {
    if (type == CUDNN_DATA_DOUBLE) return CUBLAS_COMPUTE_64F;
    if (type != CUDNN_DATA_FLOAT) return CUBLAS_COMPUTE_32F;  // half/bf16 data with FP32 accumulation
    const char* override_tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
    if (override_tf32 != nullptr && std::strcmp(override_tf32, "0") == 0) return CUBLAS_COMPUTE_32F;
    if (math == CUDNN_FMA_MATH || device_major() < 8) return CUBLAS_COMPUTE_32F;
    return CUBLAS_COMPUTE_32F_FAST_TF32;
}

uint8_t arithmetic_compute_type(cudnnDataType_t type) {
    return type == CUDNN_DATA_DOUBLE ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
}

void common(ThreadState& ts, raw::RawLibraryCall& record, const char* name, raw::LibraryOp op, cudnnHandle_t handle,
            const void* a, const void* b, void* c) {
    record.name_string = collector::intern_string(ts, name);
    record.op = op;
    cudaStream_t stream = nullptr;
    if (auto get_stream = real_get_stream.get(); get_stream != nullptr && handle != nullptr)
        get_stream(handle, &stream);
    record.stream = reinterpret_cast<uint64_t>(stream);
    record.a = reinterpret_cast<uint64_t>(a);
    record.b = reinterpret_cast<uint64_t>(b);
    record.c = reinterpret_cast<uint64_t>(c);
    record.batch = 1;
}

// A convolution pass: x [N, C, ...], w [K, C/g, ...], y [N, K, ...] (for backward data x is dx, y is dy).
void describe_convolution(raw::RawLibraryCall& record, cudnnTensorDescriptor_t x_desc, cudnnFilterDescriptor_t w_desc,
                          cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y_desc) {
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
    record.flops = dnn::convolution_flops(n, c, k, groups, filter_spatial, output_spatial);
}

// Element-wise and normalisation ops: m = elements of `shape`, FLOPs from `flops(elements)`.
template <typename Flops>
void describe_elementwise(raw::RawLibraryCall& record, cudnnTensorDescriptor_t shape, Flops&& flops) {
    Tensor t;
    if (!read_tensor(shape, &t)) return;
    record.a_type = record.c_type = cuda_type_of(t.type);
    record.compute_type = arithmetic_compute_type(t.type);
    record.m = t.elements();
    record.flops = flops(t.elements());
}

void describe_workspace(raw::RawLibraryCall& record, void* workspace, size_t bytes) {
    record.workspace = reinterpret_cast<uint64_t>(workspace);
    record.workspace_bytes = workspace != nullptr ? bytes : 0;
}

}  // namespace
}  // namespace tbdprof::preload

using namespace tbdprof::preload;
using tbdprof::raw::LibraryOp;
using tbdprof::raw::RawLibraryCall;

#define TBD_CUDNN_REAL(symbol)                                 \
    static LibraryFunction<decltype(&::symbol)> real{#symbol}; \
    auto fn = real.get();                                      \
    if (fn == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;

extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                                             const cudnnTensorDescriptor_t x_desc, const void* x,
                                                             const cudnnFilterDescriptor_t w_desc, const void* w,
                                                             const cudnnConvolutionDescriptor_t conv,
                                                             cudnnConvolutionFwdAlgo_t algo, void* workspace,
                                                             size_t workspace_bytes, const void* beta,
                                                             const cudnnTensorDescriptor_t y_desc, void* y) {
    TBD_CUDNN_REAL(cudnnConvolutionForward)
    const auto call = [&] {
        return fn(handle, alpha, x_desc, x, w_desc, w, conv, algo, workspace, workspace_bytes, beta, y_desc, y);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnConvolutionForward", LibraryOp::ConvolutionForward, handle, x, w, y);
        describe_extents(record, tensor_bytes(x_desc), filter_bytes(w_desc), tensor_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_convolution(record, x_desc, w_desc, conv, y_desc);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                                                  const cudnnFilterDescriptor_t w_desc, const void* w,
                                                                  const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                                  const cudnnConvolutionDescriptor_t conv,
                                                                  cudnnConvolutionBwdDataAlgo_t algo, void* workspace,
                                                                  size_t workspace_bytes, const void* beta,
                                                                  const cudnnTensorDescriptor_t dx_desc, void* dx) {
    TBD_CUDNN_REAL(cudnnConvolutionBackwardData)
    const auto call = [&] {
        return fn(handle, alpha, w_desc, w, dy_desc, dy, conv, algo, workspace, workspace_bytes, beta, dx_desc, dx);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnConvolutionBackwardData", LibraryOp::ConvolutionBackwardData, handle, dy, w, dx);
        describe_extents(record, tensor_bytes(dy_desc), filter_bytes(w_desc), tensor_bytes(dx_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_convolution(record, dx_desc, w_desc, conv, dy_desc);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnTensorDescriptor_t dy_desc, const void* dy, const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionBwdFilterAlgo_t algo, void* workspace, size_t workspace_bytes, const void* beta,
    const cudnnFilterDescriptor_t dw_desc, void* dw) {
    TBD_CUDNN_REAL(cudnnConvolutionBackwardFilter)
    const auto call = [&] {
        return fn(handle, alpha, x_desc, x, dy_desc, dy, conv, algo, workspace, workspace_bytes, beta, dw_desc, dw);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnConvolutionBackwardFilter", LibraryOp::ConvolutionBackwardFilter, handle, x, dy, dw);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(dy_desc), filter_bytes(dw_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_convolution(record, x_desc, dw_desc, conv, dy_desc);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void* alpha,
                                                                  const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                                  const void* beta,
                                                                  const cudnnTensorDescriptor_t db_desc, void* db) {
    TBD_CUDNN_REAL(cudnnConvolutionBackwardBias)
    const auto call = [&] { return fn(handle, alpha, dy_desc, dy, beta, db_desc, db); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnConvolutionBackwardBias", LibraryOp::ConvolutionBackwardBias, handle, dy, nullptr, db);
        describe_extents(record, tensor_bytes(dy_desc), 0, tensor_bytes(db_desc));
        describe_elementwise(record, dy_desc, [](int64_t e) { return tbdsim::dnn::bias_gradient_flops(e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t y_desc, void* y,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, double factor, void* running_mean,
    void* running_variance, double epsilon, void* save_mean, void* save_inv_variance) {
    TBD_CUDNN_REAL(cudnnBatchNormalizationForwardTraining)
    const auto call = [&] {
        return fn(handle, mode, alpha, beta, x_desc, x, y_desc, y, params_desc, scale, bias, factor, running_mean,
                  running_variance, epsilon, save_mean, save_inv_variance);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnBatchNormalizationForwardTraining", LibraryOp::BatchNormForwardTraining, handle, x,
               scale, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        describe_elementwise(record, x_desc, [](int64_t e) {
            return tbdsim::dnn::batch_norm_flops(tbdsim::dnn::BatchNormPass::Training, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t y_desc, void* y,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, const void* mean,
    const void* variance, double epsilon) {
    TBD_CUDNN_REAL(cudnnBatchNormalizationForwardInference)
    const auto call = [&] {
        return fn(handle, mode, alpha, beta, x_desc, x, y_desc, y, params_desc, scale, bias, mean, variance, epsilon);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnBatchNormalizationForwardInference", LibraryOp::BatchNormForwardInference, handle, x,
               scale, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        describe_elementwise(record, x_desc, [](int64_t e) {
            return tbdsim::dnn::batch_norm_flops(tbdsim::dnn::BatchNormPass::Inference, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha_data, const void* beta_data,
    const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnTensorDescriptor_t dy_desc, const void* dy, const cudnnTensorDescriptor_t dx_desc, void* dx,
    const cudnnTensorDescriptor_t params_desc, const void* scale, void* dscale, void* dbias, double epsilon,
    const void* saved_mean, const void* saved_inv_variance) {
    TBD_CUDNN_REAL(cudnnBatchNormalizationBackward)
    const auto call = [&] {
        return fn(handle, mode, alpha_data, beta_data, alpha_param, beta_param, x_desc, x, dy_desc, dy, dx_desc, dx,
                  params_desc, scale, dscale, dbias, epsilon, saved_mean, saved_inv_variance);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnBatchNormalizationBackward", LibraryOp::BatchNormBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        describe_elementwise(record, x_desc, [](int64_t e) {
            return tbdsim::dnn::batch_norm_flops(tbdsim::dnn::BatchNormPass::Backward, e);
        });
    });
}

namespace {

int64_t pooling_window(cudnnPoolingDescriptor_t pooling, int* mode) {
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

int activation_mode(cudnnActivationDescriptor_t activation) {
    auto get = real_get_activation.get();
    cudnnActivationMode_t mode{};
    cudnnNanPropagation_t nan{};
    double coef = 0;
    if (get == nullptr || get(activation, &mode, &nan, &coef) != CUDNN_STATUS_SUCCESS) return -1;
    return mode;
}

}  // namespace

extern "C" TBD_VISIBLE cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t pooling,
                                                         const void* alpha, const cudnnTensorDescriptor_t x_desc,
                                                         const void* x, const void* beta,
                                                         const cudnnTensorDescriptor_t y_desc, void* y) {
    TBD_CUDNN_REAL(cudnnPoolingForward)
    const auto call = [&] { return fn(handle, pooling, alpha, x_desc, x, beta, y_desc, y); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnPoolingForward", LibraryOp::PoolingForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        int mode = 0;
        const int64_t window = pooling_window(pooling, &mode);
        describe_elementwise(record, y_desc,
                             [&](int64_t e) { return window < 0 ? 0.0 : tbdsim::dnn::pooling_flops(mode, window, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t pooling,
                                                          const void* alpha, const cudnnTensorDescriptor_t y_desc,
                                                          const void* y, const cudnnTensorDescriptor_t dy_desc,
                                                          const void* dy, const cudnnTensorDescriptor_t x_desc,
                                                          const void* x, const void* beta,
                                                          const cudnnTensorDescriptor_t dx_desc, void* dx) {
    TBD_CUDNN_REAL(cudnnPoolingBackward)
    const auto call = [&] { return fn(handle, pooling, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnPoolingBackward", LibraryOp::PoolingBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        int mode = 0;
        const int64_t window = pooling_window(pooling, &mode);
        describe_elementwise(record, dy_desc,
                             [&](int64_t e) { return window < 0 ? 0.0 : tbdsim::dnn::pooling_flops(mode, window, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle,
                                                            cudnnActivationDescriptor_t activation, const void* alpha,
                                                            const cudnnTensorDescriptor_t x_desc, const void* x,
                                                            const void* beta, const cudnnTensorDescriptor_t y_desc,
                                                            void* y) {
    TBD_CUDNN_REAL(cudnnActivationForward)
    const auto call = [&] { return fn(handle, activation, alpha, x_desc, x, beta, y_desc, y); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnActivationForward", LibraryOp::ActivationForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        const int mode = activation_mode(activation);
        describe_elementwise(record, y_desc,
                             [&](int64_t e) { return mode < 0 ? 0.0 : tbdsim::dnn::activation_flops(mode, false, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnActivationBackward(cudnnHandle_t handle,
                                                             cudnnActivationDescriptor_t activation, const void* alpha,
                                                             const cudnnTensorDescriptor_t y_desc, const void* y,
                                                             const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                             const cudnnTensorDescriptor_t x_desc, const void* x,
                                                             const void* beta, const cudnnTensorDescriptor_t dx_desc,
                                                             void* dx) {
    TBD_CUDNN_REAL(cudnnActivationBackward)
    const auto call = [&] {
        return fn(handle, activation, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnActivationBackward", LibraryOp::ActivationBackward, handle, dy, y, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(y_desc), tensor_bytes(dx_desc));
        const int mode = activation_mode(activation);
        describe_elementwise(record, dx_desc,
                             [&](int64_t e) { return mode < 0 ? 0.0 : tbdsim::dnn::activation_flops(mode, true, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                                         cudnnSoftmaxMode_t mode, const void* alpha,
                                                         const cudnnTensorDescriptor_t x_desc, const void* x,
                                                         const void* beta, const cudnnTensorDescriptor_t y_desc,
                                                         void* y) {
    TBD_CUDNN_REAL(cudnnSoftmaxForward)
    const auto call = [&] { return fn(handle, algo, mode, alpha, x_desc, x, beta, y_desc, y); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnSoftmaxForward", LibraryOp::SoftmaxForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        describe_elementwise(record, y_desc, [](int64_t e) { return tbdsim::dnn::softmax_flops(e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                                          cudnnSoftmaxMode_t mode, const void* alpha,
                                                          const cudnnTensorDescriptor_t y_desc, const void* y,
                                                          const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                          const void* beta, const cudnnTensorDescriptor_t dx_desc,
                                                          void* dx) {
    TBD_CUDNN_REAL(cudnnSoftmaxBackward)
    const auto call = [&] { return fn(handle, algo, mode, alpha, y_desc, y, dy_desc, dy, beta, dx_desc, dx); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnSoftmaxBackward", LibraryOp::SoftmaxBackward, handle, dy, y, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(y_desc), tensor_bytes(dx_desc));
        describe_elementwise(record, dx_desc, [](int64_t e) { return tbdsim::dnn::softmax_flops(e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha,
                                                    const cudnnTensorDescriptor_t a_desc, const void* a,
                                                    const void* beta, const cudnnTensorDescriptor_t c_desc, void* c) {
    TBD_CUDNN_REAL(cudnnAddTensor)
    const auto call = [&] { return fn(handle, alpha, a_desc, a, beta, c_desc, c); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnAddTensor", LibraryOp::AddTensor, handle, a, nullptr, c);
        describe_extents(record, tensor_bytes(a_desc), 0, tensor_bytes(c_desc));
        describe_elementwise(record, c_desc, [](int64_t e) { return tbdsim::dnn::add_tensor_flops(e); });
    });
}

// The fused convolution: a forward convolution (x, w -> y) whose FLOPs add the epilogue's, counted
// as the simulator does (dnn_flops.h). z and the bias are read too but have no role column.
extern "C" TBD_VISIBLE cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void* alpha1, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnFilterDescriptor_t w_desc, const void* w, const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionFwdAlgo_t algo, void* workspace, size_t workspace_bytes, const void* alpha2,
    const cudnnTensorDescriptor_t z_desc, const void* z, const cudnnTensorDescriptor_t bias_desc, const void* bias,
    const cudnnActivationDescriptor_t activation, const cudnnTensorDescriptor_t y_desc, void* y) {
    TBD_CUDNN_REAL(cudnnConvolutionBiasActivationForward)
    const auto call = [&] {
        return fn(handle, alpha1, x_desc, x, w_desc, w, conv, algo, workspace, workspace_bytes, alpha2, z_desc, z,
                  bias_desc, bias, activation, y_desc, y);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnConvolutionBiasActivationForward", LibraryOp::ConvolutionForward, handle, x, w, y);
        describe_extents(record, tensor_bytes(x_desc), filter_bytes(w_desc), tensor_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_convolution(record, x_desc, w_desc, conv, y_desc);
        Tensor out;
        const int mode = activation_mode(activation);
        if (record.flops > 0 && mode >= 0 && read_tensor(y_desc, &out))
            record.flops = tbdsim::dnn::convolution_bias_activation_flops(record.flops, mode, out.elements());
    });
}

namespace {

int op_tensor_op(cudnnOpTensorDescriptor_t op_desc) {
    static LibraryFunction<decltype(&cudnnGetOpTensorDescriptor)> get{"cudnnGetOpTensorDescriptor"};
    cudnnOpTensorOp_t op{};
    cudnnDataType_t type{};
    cudnnNanPropagation_t nan{};
    auto fn = get.get();
    return fn != nullptr && fn(op_desc, &op, &type, &nan) == CUDNN_STATUS_SUCCESS ? op : -1;
}

int reduce_tensor_op(cudnnReduceTensorDescriptor_t reduce_desc) {
    static LibraryFunction<decltype(&cudnnGetReduceTensorDescriptor)> get{"cudnnGetReduceTensorDescriptor"};
    cudnnReduceTensorOp_t op{};
    cudnnDataType_t type{};
    cudnnNanPropagation_t nan{};
    cudnnReduceTensorIndices_t indices{};
    cudnnIndicesType_t indices_type{};
    auto fn = get.get();
    return fn != nullptr && fn(reduce_desc, &op, &type, &nan, &indices, &indices_type) == CUDNN_STATUS_SUCCESS ? op
                                                                                                               : -1;
}

// The batch norm Ex calls' fused activation mode, -1 when none (CUDNN_BATCHNORM_OPS_BN) or unknown.
int batch_norm_activation(cudnnBatchNormOps_t ops, cudnnActivationDescriptor_t activation) {
    return ops == CUDNN_BATCHNORM_OPS_BN ? -1 : activation_mode(activation);
}

}  // namespace

extern "C" TBD_VISIBLE cudnnStatus_t cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t op_desc,
                                                   const void* alpha1, const cudnnTensorDescriptor_t a_desc,
                                                   const void* a, const void* alpha2,
                                                   const cudnnTensorDescriptor_t b_desc, const void* b,
                                                   const void* beta, const cudnnTensorDescriptor_t c_desc, void* c) {
    TBD_CUDNN_REAL(cudnnOpTensor)
    const auto call = [&] { return fn(handle, op_desc, alpha1, a_desc, a, alpha2, b_desc, b, beta, c_desc, c); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        const int op = op_tensor_op(op_desc);
        const bool binary = op != CUDNN_OP_TENSOR_SQRT && op != CUDNN_OP_TENSOR_NOT;
        common(ts, record, "cudnnOpTensor", LibraryOp::OpTensor, handle, a, binary ? b : nullptr, c);
        describe_extents(record, tensor_bytes(a_desc), binary ? tensor_bytes(b_desc) : 0, tensor_bytes(c_desc));
        describe_elementwise(record, c_desc,
                             [&](int64_t e) { return op < 0 ? 0.0 : tbdsim::dnn::op_tensor_flops(op, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnReduceTensor(cudnnHandle_t handle,
                                                       const cudnnReduceTensorDescriptor_t reduce_desc, void* indices,
                                                       size_t indices_bytes, void* workspace, size_t workspace_bytes,
                                                       const void* alpha, const cudnnTensorDescriptor_t a_desc,
                                                       const void* a, const void* beta,
                                                       const cudnnTensorDescriptor_t c_desc, void* c) {
    TBD_CUDNN_REAL(cudnnReduceTensor)
    const auto call = [&] {
        return fn(handle, reduce_desc, indices, indices_bytes, workspace, workspace_bytes, alpha, a_desc, a, beta,
                  c_desc, c);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnReduceTensor", LibraryOp::ReduceTensor, handle, a, nullptr, c);
        describe_extents(record, tensor_bytes(a_desc), 0, tensor_bytes(c_desc));
        describe_workspace(record, workspace, workspace_bytes);
        Tensor input;
        const int op = reduce_tensor_op(reduce_desc);
        const bool known = op >= 0 && read_tensor(a_desc, &input);
        describe_elementwise(record, c_desc, [&](int64_t e) {
            return known ? tbdsim::dnn::reduce_tensor_flops(op, input.elements(), e) : 0.0;
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnDropoutForward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropout,
                                                         const cudnnTensorDescriptor_t x_desc, const void* x,
                                                         const cudnnTensorDescriptor_t y_desc, void* y, void* reserve,
                                                         size_t reserve_bytes) {
    TBD_CUDNN_REAL(cudnnDropoutForward)
    const auto call = [&] { return fn(handle, dropout, x_desc, x, y_desc, y, reserve, reserve_bytes); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnDropoutForward", LibraryOp::DropoutForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        describe_elementwise(record, y_desc, [](int64_t e) { return tbdsim::dnn::dropout_flops(false, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnDropoutBackward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropout,
                                                          const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                          const cudnnTensorDescriptor_t dx_desc, void* dx,
                                                          void* reserve, size_t reserve_bytes) {
    TBD_CUDNN_REAL(cudnnDropoutBackward)
    const auto call = [&] { return fn(handle, dropout, dy_desc, dy, dx_desc, dx, reserve, reserve_bytes); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnDropoutBackward", LibraryOp::DropoutBackward, handle, dy, nullptr, dx);
        describe_extents(record, tensor_bytes(dy_desc), 0, tensor_bytes(dx_desc));
        describe_elementwise(record, dx_desc, [](int64_t e) { return tbdsim::dnn::dropout_flops(true, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t z_desc, const void* z,
    const cudnnTensorDescriptor_t y_desc, void* y, const cudnnTensorDescriptor_t params_desc, const void* scale,
    const void* bias, double factor, void* running_mean, void* running_variance, double epsilon, void* save_mean,
    void* save_inv_variance, cudnnActivationDescriptor_t activation, void* workspace, size_t workspace_bytes,
    void* reserve, size_t reserve_bytes) {
    TBD_CUDNN_REAL(cudnnBatchNormalizationForwardTrainingEx)
    const auto call = [&] {
        return fn(handle, mode, ops, alpha, beta, x_desc, x, z_desc, z, y_desc, y, params_desc, scale, bias, factor,
                  running_mean, running_variance, epsilon, save_mean, save_inv_variance, activation, workspace,
                  workspace_bytes, reserve, reserve_bytes);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnBatchNormalizationForwardTrainingEx", LibraryOp::BatchNormForwardTraining, handle, x,
               scale, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        const int act = batch_norm_activation(ops, activation);
        const bool add = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return tbdsim::dnn::batch_norm_ex_flops(tbdsim::dnn::BatchNormPass::Training, add, act, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void* alpha_data,
    const void* beta_data, const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t x_desc,
    const void* x, const cudnnTensorDescriptor_t y_desc, const void* y, const cudnnTensorDescriptor_t dy_desc,
    const void* dy, const cudnnTensorDescriptor_t dz_desc, void* dz, const cudnnTensorDescriptor_t dx_desc, void* dx,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, void* dscale, void* dbias,
    double epsilon, const void* saved_mean, const void* saved_inv_variance, cudnnActivationDescriptor_t activation,
    void* workspace, size_t workspace_bytes, void* reserve, size_t reserve_bytes) {
    TBD_CUDNN_REAL(cudnnBatchNormalizationBackwardEx)
    const auto call = [&] {
        return fn(handle, mode, ops, alpha_data, beta_data, alpha_param, beta_param, x_desc, x, y_desc, y, dy_desc, dy,
                  dz_desc, dz, dx_desc, dx, params_desc, scale, bias, dscale, dbias, epsilon, saved_mean,
                  saved_inv_variance, activation, workspace, workspace_bytes, reserve, reserve_bytes);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnBatchNormalizationBackwardEx", LibraryOp::BatchNormBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        describe_workspace(record, workspace, workspace_bytes);
        const int act = batch_norm_activation(ops, activation);
        const bool add = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return tbdsim::dnn::batch_norm_ex_flops(tbdsim::dnn::BatchNormPass::Backward, add, act, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnTransformTensor(cudnnHandle_t handle, const void* alpha,
                                                          const cudnnTensorDescriptor_t x_desc, const void* x,
                                                          const void* beta, const cudnnTensorDescriptor_t y_desc,
                                                          void* y) {
    TBD_CUDNN_REAL(cudnnTransformTensor)
    const auto call = [&] { return fn(handle, alpha, x_desc, x, beta, y_desc, y); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnTransformTensor", LibraryOp::TransformTensor, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        describe_elementwise(record, y_desc, [](int64_t e) { return tbdsim::dnn::transform_tensor_flops(e); });
    });
}

namespace {

LibraryFunction<decltype(&cudnnGetRNNDataDescriptor)> real_get_rnn_data{"cudnnGetRNNDataDescriptor"};

// The bytes an RNN data tensor spans: max_length x batch vectors in every layout (0 unknown).
uint64_t rnn_data_bytes(cudnnRNNDataDescriptor_t desc) {
    auto get = real_get_rnn_data.get();
    cudnnDataType_t type{};
    cudnnRNNDataLayout_t layout{};
    int max_length = 0, batch = 0, vector = 0;
    if (get == nullptr ||
        get(desc, &type, &layout, &max_length, &batch, &vector, 0, nullptr, nullptr) != CUDNN_STATUS_SUCCESS) {
        return 0;
    }
    return static_cast<uint64_t>(max_length) * static_cast<uint64_t>(batch) * static_cast<uint64_t>(vector) *
           static_cast<uint64_t>(element_bytes(type));
}

// An RNN call's shape from its descriptors (read back with cuDNN's getters) and its FLOPs as the
// simulator counts them; left at 0 when a descriptor cannot be read.
void describe_rnn(RawLibraryCall& record, cudnnRNNDescriptor_t rnn, cudnnRNNDataDescriptor_t x_desc,
                  tbdsim::dnn::RnnPass pass) {
    static LibraryFunction<decltype(&cudnnGetRNNDescriptor_v8)> get_rnn{"cudnnGetRNNDescriptor_v8"};
    auto rnn_fn = get_rnn.get();
    auto data_fn = real_get_rnn_data.get();
    cudnnRNNMode_t cell{};
    cudnnRNNBiasMode_t bias{};
    cudnnDirectionMode_t direction{};
    cudnnDataType_t type{}, data_type{};
    cudnnMathType_t math{};
    int32_t input = 0, hidden = 0, layers = 0;
    cudnnRNNDataLayout_t layout{};
    int max_length = 0, batch = 0, vector = 0;
    if (rnn_fn == nullptr || data_fn == nullptr ||
        rnn_fn(rnn, nullptr, &cell, &bias, &direction, nullptr, &type, nullptr, &math, &input, &hidden, nullptr,
               &layers, nullptr, nullptr) != CUDNN_STATUS_SUCCESS ||
        data_fn(x_desc, &data_type, &layout, &max_length, &batch, &vector, 0, nullptr, nullptr) !=
            CUDNN_STATUS_SUCCESS ||
        batch <= 0) {
        return;
    }
    std::vector<int> lengths(static_cast<size_t>(batch));
    if (data_fn(x_desc, &data_type, &layout, &max_length, &batch, &vector, batch, lengths.data(), nullptr) !=
        CUDNN_STATUS_SUCCESS) {
        return;
    }
    tbdsim::dnn::RnnShape shape{cell, bias, layers, direction == CUDNN_BIDIRECTIONAL ? 2 : 1, input, hidden, 0};
    for (const int length : lengths) shape.steps += length;
    record.a_type = record.b_type = record.c_type = cuda_type_of(type);
    record.compute_type = convolution_compute_type(type, math);
    record.m = shape.steps;
    record.n = hidden;
    record.k = input;
    record.batch = layers * shape.directions;
    record.flops = tbdsim::dnn::rnn_flops(pass, shape);
}

}  // namespace

extern "C" TBD_VISIBLE cudnnStatus_t cudnnRNNForward(cudnnHandle_t handle, cudnnRNNDescriptor_t rnn,
                                                     cudnnForwardMode_t mode, const int32_t dev_lengths[],
                                                     cudnnRNNDataDescriptor_t x_desc, const void* x,
                                                     cudnnRNNDataDescriptor_t y_desc, void* y,
                                                     cudnnTensorDescriptor_t h_desc, const void* hx, void* hy,
                                                     cudnnTensorDescriptor_t c_desc, const void* cx, void* cy,
                                                     size_t weight_bytes, const void* weights, size_t workspace_bytes,
                                                     void* workspace, size_t reserve_bytes, void* reserve) {
    TBD_CUDNN_REAL(cudnnRNNForward)
    const auto call = [&] {
        return fn(handle, rnn, mode, dev_lengths, x_desc, x, y_desc, y, h_desc, hx, hy, c_desc, cx, cy, weight_bytes,
                  weights, workspace_bytes, workspace, reserve_bytes, reserve);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        // x and the weight space in, y out.
        common(ts, record, "cudnnRNNForward", LibraryOp::RnnForward, handle, x, weights, y);
        describe_extents(record, rnn_data_bytes(x_desc), weight_bytes, rnn_data_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_rnn(record, rnn, x_desc, tbdsim::dnn::RnnPass::Forward);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnRNNBackwardData_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnn, const int32_t dev_lengths[], cudnnRNNDataDescriptor_t y_desc,
    const void* y, const void* dy, cudnnRNNDataDescriptor_t x_desc, void* dx, cudnnTensorDescriptor_t h_desc,
    const void* hx, const void* dhy, void* dhx, cudnnTensorDescriptor_t c_desc, const void* cx, const void* dcy,
    void* dcx, size_t weight_bytes, const void* weights, size_t workspace_bytes, void* workspace, size_t reserve_bytes,
    void* reserve) {
    TBD_CUDNN_REAL(cudnnRNNBackwardData_v8)
    const auto call = [&] {
        return fn(handle, rnn, dev_lengths, y_desc, y, dy, x_desc, dx, h_desc, hx, dhy, dhx, c_desc, cx, dcy, dcx,
                  weight_bytes, weights, workspace_bytes, workspace, reserve_bytes, reserve);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        // dy and the weight space in, dx out.
        common(ts, record, "cudnnRNNBackwardData_v8", LibraryOp::RnnBackwardData, handle, dy, weights, dx);
        describe_extents(record, rnn_data_bytes(y_desc), weight_bytes, rnn_data_bytes(x_desc));
        describe_workspace(record, workspace, workspace_bytes);
        describe_rnn(record, rnn, x_desc, tbdsim::dnn::RnnPass::BackwardData);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnRNNBackwardWeights_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnn, cudnnWgradMode_t add, const int32_t dev_lengths[],
    cudnnRNNDataDescriptor_t x_desc, const void* x, cudnnTensorDescriptor_t h_desc, const void* hx,
    cudnnRNNDataDescriptor_t y_desc, const void* y, size_t weight_bytes, void* dweights, size_t workspace_bytes,
    void* workspace, size_t reserve_bytes, void* reserve) {
    TBD_CUDNN_REAL(cudnnRNNBackwardWeights_v8)
    const auto call = [&] {
        return fn(handle, rnn, add, dev_lengths, x_desc, x, h_desc, hx, y_desc, y, weight_bytes, dweights,
                  workspace_bytes, workspace, reserve_bytes, reserve);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        // x and y in, the weight gradients out.
        common(ts, record, "cudnnRNNBackwardWeights_v8", LibraryOp::RnnBackwardWeights, handle, x, y, dweights);
        describe_extents(record, rnn_data_bytes(x_desc), rnn_data_bytes(y_desc), weight_bytes);
        describe_workspace(record, workspace, workspace_bytes);
        describe_rnn(record, rnn, x_desc, tbdsim::dnn::RnnPass::BackwardWeights);
    });
}

namespace {

// The LRN descriptor's window (lrnN), -1 when it cannot be read.
int64_t lrn_window(cudnnLRNDescriptor_t lrn) {
    static LibraryFunction<decltype(&cudnnGetLRNDescriptor)> get{"cudnnGetLRNDescriptor"};
    unsigned n = 0;
    auto fn = get.get();
    return fn != nullptr && fn(lrn, &n, nullptr, nullptr, nullptr) == CUDNN_STATUS_SUCCESS ? n : -1;
}

}  // namespace

extern "C" TBD_VISIBLE cudnnStatus_t cudnnLRNCrossChannelForward(cudnnHandle_t handle, cudnnLRNDescriptor_t lrn,
                                                                 cudnnLRNMode_t mode, const void* alpha,
                                                                 const cudnnTensorDescriptor_t x_desc, const void* x,
                                                                 const void* beta, const cudnnTensorDescriptor_t y_desc,
                                                                 void* y) {
    TBD_CUDNN_REAL(cudnnLRNCrossChannelForward)
    const auto call = [&] { return fn(handle, lrn, mode, alpha, x_desc, x, beta, y_desc, y); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnLRNCrossChannelForward", LibraryOp::LrnForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        const int64_t n = lrn_window(lrn);
        describe_elementwise(record, y_desc,
                             [&](int64_t e) { return n < 0 ? 0.0 : tbdsim::dnn::lrn_flops(false, n, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t lrn,
                                                                  cudnnLRNMode_t mode, const void* alpha,
                                                                  const cudnnTensorDescriptor_t y_desc, const void* y,
                                                                  const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                                  const cudnnTensorDescriptor_t x_desc, const void* x,
                                                                  const void* beta,
                                                                  const cudnnTensorDescriptor_t dx_desc, void* dx) {
    TBD_CUDNN_REAL(cudnnLRNCrossChannelBackward)
    const auto call = [&] {
        return fn(handle, lrn, mode, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnLRNCrossChannelBackward", LibraryOp::LrnBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        const int64_t n = lrn_window(lrn);
        describe_elementwise(record, dx_desc,
                             [&](int64_t e) { return n < 0 ? 0.0 : tbdsim::dnn::lrn_flops(true, n, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnDivisiveNormalizationForward(cudnnHandle_t handle, cudnnLRNDescriptor_t lrn,
                                                                       cudnnDivNormMode_t mode, const void* alpha,
                                                                       const cudnnTensorDescriptor_t x_desc,
                                                                       const void* x, const void* means, void* temp,
                                                                       void* temp2, const void* beta,
                                                                       const cudnnTensorDescriptor_t y_desc, void* y) {
    TBD_CUDNN_REAL(cudnnDivisiveNormalizationForward)
    const auto call = [&] { return fn(handle, lrn, mode, alpha, x_desc, x, means, temp, temp2, beta, y_desc, y); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnDivisiveNormalizationForward", LibraryOp::DivisiveNormForward, handle, x, means, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(x_desc), tensor_bytes(y_desc));
        const int64_t n = lrn_window(lrn);
        describe_elementwise(record, y_desc, [&](int64_t e) {
            return n < 0 ? 0.0 : tbdsim::dnn::divisive_normalization_flops(false, n, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnDivisiveNormalizationBackward(
    cudnnHandle_t handle, cudnnLRNDescriptor_t lrn, cudnnDivNormMode_t mode, const void* alpha,
    const cudnnTensorDescriptor_t x_desc, const void* x, const void* means, const void* dy, void* temp, void* temp2,
    const void* beta, const cudnnTensorDescriptor_t dx_desc, void* dx, void* dmeans) {
    TBD_CUDNN_REAL(cudnnDivisiveNormalizationBackward)
    const auto call = [&] {
        return fn(handle, lrn, mode, alpha, x_desc, x, means, dy, temp, temp2, beta, dx_desc, dx, dmeans);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnDivisiveNormalizationBackward", LibraryOp::DivisiveNormBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        const int64_t n = lrn_window(lrn);
        describe_elementwise(record, dx_desc, [&](int64_t e) {
            return n < 0 ? 0.0 : tbdsim::dnn::divisive_normalization_flops(true, n, e);
        });
    });
}

namespace {

// The CTC descriptor's normalization mode and maximum label length; false when unreadable.
bool ctc_settings(cudnnCTCLossDescriptor_t ctc, bool* softmax, int* max_label_length) {
    static LibraryFunction<decltype(&cudnnGetCTCLossDescriptor_v9)> get{"cudnnGetCTCLossDescriptor_v9"};
    cudnnDataType_t type{};
    cudnnLossNormalizationMode_t normalization{};
    cudnnCTCGradMode_t grad_mode{};
    auto fn = get.get();
    if (fn == nullptr || fn(ctc, &type, &normalization, &grad_mode, max_label_length) != CUDNN_STATUS_SUCCESS)
        return false;
    *softmax = normalization == CUDNN_LOSS_NORMALIZATION_SOFTMAX;
    return true;
}

}  // namespace

extern "C" TBD_VISIBLE cudnnStatus_t cudnnCTCLoss(cudnnHandle_t handle, const cudnnTensorDescriptor_t probs_desc,
                                                  const void* probs, const int labels[], const int label_lengths[],
                                                  const int input_lengths[], void* costs,
                                                  const cudnnTensorDescriptor_t gradients_desc, void* gradients,
                                                  cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctc,
                                                  void* workspace, size_t workspace_bytes) {
    TBD_CUDNN_REAL(cudnnCTCLoss)
    const auto call = [&] {
        return fn(handle, probs_desc, probs, labels, label_lengths, input_lengths, costs, gradients_desc, gradients,
                  algo, ctc, workspace, workspace_bytes);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnCTCLoss", LibraryOp::CtcLoss, handle, probs, nullptr, gradients);
        describe_extents(record, tensor_bytes(probs_desc), 0, gradients != nullptr ? tensor_bytes(gradients_desc) : 0);
        describe_workspace(record, workspace, workspace_bytes);
        Tensor p;
        bool softmax = true;
        int max_label_length = 0;
        if (!read_tensor(probs_desc, &p) || p.dims != 3 || !ctc_settings(ctc, &softmax, &max_label_length)) return;
        int64_t label_steps = 0;  // the lengths are in host memory (this API's contract)
        for (int n = 0; n < p.dim[1]; ++n)
            label_steps += static_cast<int64_t>(input_lengths[n]) * (2 * label_lengths[n] + 1);
        describe_elementwise(record, probs_desc, [&](int64_t e) {
            return tbdsim::dnn::ctc_loss_flops(softmax, gradients != nullptr, e, label_steps);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnCTCLoss_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo,
                                                     cudnnCTCLossDescriptor_t ctc,
                                                     const cudnnTensorDescriptor_t probs_desc, const void* probs,
                                                     const int labels[], const int label_lengths[],
                                                     const int input_lengths[], void* costs,
                                                     const cudnnTensorDescriptor_t gradients_desc, void* gradients,
                                                     size_t workspace_bytes, void* workspace) {
    TBD_CUDNN_REAL(cudnnCTCLoss_v8)
    const auto call = [&] {
        return fn(handle, algo, ctc, probs_desc, probs, labels, label_lengths, input_lengths, costs, gradients_desc,
                  gradients, workspace_bytes, workspace);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnCTCLoss_v8", LibraryOp::CtcLoss, handle, probs, nullptr, gradients);
        describe_extents(record, tensor_bytes(probs_desc), 0, gradients != nullptr ? tensor_bytes(gradients_desc) : 0);
        describe_workspace(record, workspace, workspace_bytes);
        Tensor p;
        bool softmax = true;
        int max_label_length = 0;
        if (!read_tensor(probs_desc, &p) || p.dims != 3 || !ctc_settings(ctc, &softmax, &max_label_length)) return;
        // Lengths in device memory are not read here: every sample counted at T steps and the longest label.
        const int64_t label_steps = static_cast<int64_t>(p.dim[0]) * p.dim[1] * (2 * int64_t{max_label_length} + 1);
        describe_elementwise(record, probs_desc, [&](int64_t e) {
            return tbdsim::dnn::ctc_loss_flops(softmax, gradients != nullptr, e, label_steps);
        });
    });
}

// The normalization API: batch norm passes under other names (the same ops and FLOP rules).
extern "C" TBD_VISIBLE cudnnStatus_t cudnnNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t params_desc,
    const void* scale, const void* bias, double factor, const cudnnTensorDescriptor_t mean_var_desc, void* running_mean,
    void* running_variance, double epsilon, void* save_mean, void* save_inv_variance,
    cudnnActivationDescriptor_t activation, const cudnnTensorDescriptor_t z_desc, const void* z,
    const cudnnTensorDescriptor_t y_desc, void* y, void* workspace, size_t workspace_bytes, void* reserve,
    size_t reserve_bytes, int groups) {
    TBD_CUDNN_REAL(cudnnNormalizationForwardTraining)
    const auto call = [&] {
        return fn(handle, mode, ops, algo, alpha, beta, x_desc, x, params_desc, scale, bias, factor, mean_var_desc,
                  running_mean, running_variance, epsilon, save_mean, save_inv_variance, activation, z_desc, z, y_desc,
                  y, workspace, workspace_bytes, reserve, reserve_bytes, groups);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnNormalizationForwardTraining", LibraryOp::BatchNormForwardTraining, handle, x, scale,
               y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        const int act = ops == CUDNN_NORM_OPS_NORM ? -1 : activation_mode(activation);
        const bool add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return tbdsim::dnn::batch_norm_ex_flops(tbdsim::dnn::BatchNormPass::Training, add, act, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnNormalizationForwardInference(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t params_desc,
    const void* scale, const void* bias, const cudnnTensorDescriptor_t mean_var_desc, const void* mean,
    const void* variance, const cudnnTensorDescriptor_t z_desc, const void* z, cudnnActivationDescriptor_t activation,
    const cudnnTensorDescriptor_t y_desc, void* y, double epsilon, int groups) {
    TBD_CUDNN_REAL(cudnnNormalizationForwardInference)
    const auto call = [&] {
        return fn(handle, mode, ops, algo, alpha, beta, x_desc, x, params_desc, scale, bias, mean_var_desc, mean,
                  variance, z_desc, z, activation, y_desc, y, epsilon, groups);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnNormalizationForwardInference", LibraryOp::BatchNormForwardInference, handle, x, scale,
               y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        const int act = ops == CUDNN_NORM_OPS_NORM ? -1 : activation_mode(activation);
        const bool add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return tbdsim::dnn::batch_norm_ex_flops(tbdsim::dnn::BatchNormPass::Inference, add, act, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnNormalizationBackward(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo, const void* alpha_data,
    const void* beta_data, const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t x_desc,
    const void* x, const cudnnTensorDescriptor_t y_desc, const void* y, const cudnnTensorDescriptor_t dy_desc,
    const void* dy, const cudnnTensorDescriptor_t dz_desc, void* dz, const cudnnTensorDescriptor_t dx_desc, void* dx,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, void* dscale, void* dbias,
    double epsilon, const cudnnTensorDescriptor_t mean_var_desc, const void* saved_mean, const void* saved_inv_variance,
    cudnnActivationDescriptor_t activation, void* workspace, size_t workspace_bytes, void* reserve,
    size_t reserve_bytes, int groups) {
    TBD_CUDNN_REAL(cudnnNormalizationBackward)
    const auto call = [&] {
        return fn(handle, mode, ops, algo, alpha_data, beta_data, alpha_param, beta_param, x_desc, x, y_desc, y,
                  dy_desc, dy, dz_desc, dz, dx_desc, dx, params_desc, scale, bias, dscale, dbias, epsilon,
                  mean_var_desc, saved_mean, saved_inv_variance, activation, workspace, workspace_bytes, reserve,
                  reserve_bytes, groups);
    };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnNormalizationBackward", LibraryOp::BatchNormBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        describe_workspace(record, workspace, workspace_bytes);
        const int act = ops == CUDNN_NORM_OPS_NORM ? -1 : activation_mode(activation);
        const bool add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return tbdsim::dnn::batch_norm_ex_flops(tbdsim::dnn::BatchNormPass::Backward, add, act, e);
        });
    });
}

// Transforms with a tensor-transform descriptor: transform_tensor calls, FLOPs per destination element.
extern "C" TBD_VISIBLE cudnnStatus_t cudnnTransformTensorEx(cudnnHandle_t handle,
                                                            const cudnnTensorTransformDescriptor_t transform,
                                                            const void* alpha, const cudnnTensorDescriptor_t src_desc,
                                                            const void* src, const void* beta,
                                                            const cudnnTensorDescriptor_t dest_desc, void* dest) {
    TBD_CUDNN_REAL(cudnnTransformTensorEx)
    const auto call = [&] { return fn(handle, transform, alpha, src_desc, src, beta, dest_desc, dest); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnTransformTensorEx", LibraryOp::TransformTensor, handle, src, nullptr, dest);
        describe_extents(record, tensor_bytes(src_desc), 0, tensor_bytes(dest_desc));
        describe_elementwise(record, dest_desc, [](int64_t e) { return tbdsim::dnn::transform_tensor_flops(e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnTransformFilter(cudnnHandle_t handle,
                                                          const cudnnTensorTransformDescriptor_t transform,
                                                          const void* alpha, const cudnnFilterDescriptor_t src_desc,
                                                          const void* src, const void* beta,
                                                          const cudnnFilterDescriptor_t dest_desc, void* dest) {
    TBD_CUDNN_REAL(cudnnTransformFilter)
    const auto call = [&] { return fn(handle, transform, alpha, src_desc, src, beta, dest_desc, dest); };
    return record_library_call(call, [&](ThreadState& ts, RawLibraryCall& record) {
        common(ts, record, "cudnnTransformFilter", LibraryOp::TransformTensor, handle, src, nullptr, dest);
        describe_extents(record, filter_bytes(src_desc), 0, filter_bytes(dest_desc));
        Tensor out;
        if (!read_filter(dest_desc, &out)) return;
        record.a_type = record.c_type = cuda_type_of(out.type);
        record.compute_type = arithmetic_compute_type(out.type);
        record.m = out.elements();
        record.flops = tbdsim::dnn::transform_tensor_flops(out.elements());
    });
}
