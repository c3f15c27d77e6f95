// Tensor-transform descriptors (cudnn_ops_v9.h): a destination format with padding before and after
// each dimension, applied by cudnnTransformTensorEx and cudnnTransformFilter (y = alpha * transform(x)
// + beta * y), and cudnnInitTransformDest to describe the destination. Folding (fold factors other
// than 1) is not modelled: CUDNN_STATUS_NOT_SUPPORTED. One kernel per call, as cudnnTransformTensor
// (FLOPs per destination element, dnn_flops.h), timed as a roofline.
#include <array>
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cudnnTensorTransformStruct {
    uint32_t dims = 0;
    cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
    std::array<int32_t, kMaxDims> pad_before{}, pad_after{};
    std::array<uint32_t, kMaxDims> fold{};
    cudnnFoldingDirection_t direction = CUDNN_TRANSFORM_FOLD;
    bool set = false;
};

namespace {

// The destination dims of `src` under `t`; false when the ranks differ.
bool destination_dims(const cudnnTensorTransformStruct& t, int src_dims, const int* src, int* out) {
    if (static_cast<int>(t.dims) != src_dims) return false;
    for (int i = 0; i < src_dims; ++i) out[i] = src[i] + t.pad_before[i] + t.pad_after[i];
    return true;
}

cudnnStatus_t run_transform(cudnnHandle_t handle, const cudnnTensorTransformStruct* t, int dims, const int* src,
                            const int* dest, cudnnDataType_t type, const void* x, const void* alpha, const void* beta,
                            void* y) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (t == nullptr || !t->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform: descriptor not set");
    if (x == nullptr || y == nullptr || alpha == nullptr || beta == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "transform: null pointer argument");
    }
    int want[kMaxDims] = {};
    if (!destination_dims(*t, dims, src, want)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform: rank differs");
    int64_t src_elements = 1, dest_elements = 1;
    for (int i = 0; i < dims; ++i) {
        if (dest[i] != want[i]) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform: destination dims");
        src_elements *= src[i];
        dest_elements *= dest[i];
    }
    cudnnTensorStruct out;  // the destination's elements, for the launch shape
    out.type = type;
    out.dims = 1;
    out.dim[0] = static_cast<int>(dest_elements);
    out.set = true;
    const double bytes = static_cast<double>(dnn::element_bytes(type));
    const bool reads_y = dnn::read_scalar(beta, type) != 0;
    dnn::Elementwise work;
    work.kernel = dnn::kTransformTensor;
    work.out = &out;
    work.flops = dnn::transform_tensor_flops(dest_elements);
    work.bytes = bytes * static_cast<double>(src_elements + dest_elements * (reads_y ? 2 : 1));
    work.params = {x, nullptr, y,       nullptr, 0, 0, dnn::read_scalar(alpha, type), dnn::read_scalar(beta, type),
                   0, 0,       nullptr, {}};
    return dnn::run_elementwise(handle, work);
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateTensorTransformDescriptor(cudnnTensorTransformDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnTensorTransformStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyTensorTransformDescriptor(cudnnTensorTransformDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

// Pads and folds may be NULL (none).
TBD_EXPORT cudnnStatus_t cudnnSetTensorTransformDescriptor(cudnnTensorTransformDescriptor_t d, const uint32_t dims,
                                                           const cudnnTensorFormat_t format, const int32_t pad_before[],
                                                           const int32_t pad_after[], const uint32_t fold[],
                                                           const cudnnFoldingDirection_t direction) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (dims < 3 || dims > kMaxDims || (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform: 3 to 8 dims, NCHW or NHWC");
    }
    cudnnTensorTransformStruct t;
    t.dims = dims;
    t.format = format;
    t.direction = direction;
    for (uint32_t i = 0; i < dims; ++i) {
        t.pad_before[i] = pad_before != nullptr ? pad_before[i] : 0;
        t.pad_after[i] = pad_after != nullptr ? pad_after[i] : 0;
        t.fold[i] = fold != nullptr ? fold[i] : 1;
        if (t.pad_before[i] < 0 || t.pad_after[i] < 0) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform: padding");
        if (t.fold[i] > 1) return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "transform: folding is not modelled");
    }
    t.set = true;
    *d = t;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetTensorTransformDescriptor(cudnnTensorTransformDescriptor_t d, uint32_t requested,
                                                           cudnnTensorFormat_t* format, int32_t pad_before[],
                                                           int32_t pad_after[], uint32_t fold[],
                                                           cudnnFoldingDirection_t* direction) {
    if (d == nullptr || !d->set || format == nullptr || direction == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *format = d->format;
    *direction = d->direction;
    for (uint32_t i = 0; i < requested && i < d->dims; ++i) {
        if (pad_before != nullptr) pad_before[i] = d->pad_before[i];
        if (pad_after != nullptr) pad_after[i] = d->pad_after[i];
        if (fold != nullptr) fold[i] = d->fold[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

// The destination: the source's dims with the padding, in the descriptor's format, packed.
TBD_EXPORT cudnnStatus_t cudnnInitTransformDest(const cudnnTensorTransformDescriptor_t d,
                                                const cudnnTensorDescriptor_t src, cudnnTensorDescriptor_t dest,
                                                size_t* dest_bytes) {
    if (d == nullptr || !d->set || src == nullptr || !src->set || dest == nullptr) return CUDNN_STATUS_BAD_PARAM;
    int dims[kMaxDims] = {};
    if (!destination_dims(*d, src->dims, src->dim.data(), dims)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform: rank differs");
    }
    if (const cudnnStatus_t s = cudnnSetTensorNdDescriptorEx(dest, d->format, src->type, src->dims, dims);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    if (dest_bytes != nullptr) *dest_bytes = static_cast<size_t>(dnn::tensor_bytes(*dest));
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnTransformTensorEx(cudnnHandle_t handle, const cudnnTensorTransformDescriptor_t d,
                                                const void* alpha, const cudnnTensorDescriptor_t src_desc,
                                                const void* src, const void* beta,
                                                const cudnnTensorDescriptor_t dest_desc, void* dest) {
    if (src_desc == nullptr || dest_desc == nullptr || !src_desc->set || !dest_desc->set ||
        src_desc->dims != dest_desc->dims || src_desc->type != dest_desc->type) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform: source and destination descriptors");
    }
    return run_transform(handle, d, src_desc->dims, src_desc->dim.data(), dest_desc->dim.data(), src_desc->type, src,
                         alpha, beta, dest);
}

TBD_EXPORT cudnnStatus_t cudnnTransformFilter(cudnnHandle_t handle, const cudnnTensorTransformDescriptor_t d,
                                              const void* alpha, const cudnnFilterDescriptor_t src_desc,
                                              const void* src, const void* beta,
                                              const cudnnFilterDescriptor_t dest_desc, void* dest) {
    if (src_desc == nullptr || dest_desc == nullptr || !src_desc->set || !dest_desc->set ||
        src_desc->dims != dest_desc->dims || src_desc->type != dest_desc->type) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform: source and destination filter descriptors");
    }
    return run_transform(handle, d, src_desc->dims, src_desc->dim.data(), dest_desc->dim.data(), src_desc->type, src,
                         alpha, beta, dest);
}
