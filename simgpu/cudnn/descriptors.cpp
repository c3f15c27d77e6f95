// Legacy descriptors: tensors, filters, convolutions, activations, pooling, and the shape arithmetic
// on them (output dims). Descriptors are plain host structs; nothing here touches the device.
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

template <typename T>
cudnnStatus_t create(T** out) {
    if (out == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *out = new (std::nothrow) T;
    return *out != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

template <typename T>
cudnnStatus_t destroy(T* descriptor) {
    delete descriptor;
    return CUDNN_STATUS_SUCCESS;
}

bool known_type(cudnnDataType_t type) {
    return dnn::element_bytes(type) != 0;
}

cudnnStatus_t set_tensor(cudnnTensorStruct* t, cudnnDataType_t type, int dims, const int* dim, const int* stride) {
    if (t == nullptr || dim == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!known_type(type)) return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE, "tensor: unsupported data type");
    if (dims < 3 || dims > kMaxDims) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "tensor: 3 to 8 dimensions");
    for (int i = 0; i < dims; ++i) {
        if (dim[i] <= 0 || (stride != nullptr && stride[i] <= 0)) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "tensor: dimensions and strides must be positive");
        }
    }
    t->type = type;
    t->dims = dims;
    for (int i = dims - 1, packed = 1; i >= 0; --i) {
        t->dim[i] = dim[i];
        t->stride[i] = stride != nullptr ? stride[i] : packed;
        packed *= dim[i];
    }
    t->set = true;
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
    return create(d);
}
TBD_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
    return destroy(d);
}
TBD_EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
    return create(d);
}
TBD_EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
    return destroy(d);
}
TBD_EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) {
    return create(d);
}
TBD_EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
    return destroy(d);
}
TBD_EXPORT cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* d) {
    return create(d);
}
TBD_EXPORT cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d) {
    return destroy(d);
}
TBD_EXPORT cudnnStatus_t cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t* d) {
    return create(d);
}
TBD_EXPORT cudnnStatus_t cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t d) {
    return destroy(d);
}

TBD_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t type, int dims,
                                                    const int dim[], const int stride[]) {
    if (stride == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    return set_tensor(d, type, dims, dim, stride);
}

TBD_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d, cudnnDataType_t type, int n, int c,
                                                      int h, int w, int ns, int cs, int hs, int ws) {
    const int dim[] = {n, c, h, w}, stride[] = {ns, cs, hs, ws};
    return set_tensor(d, type, 4, dim, stride);
}

TBD_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                                    cudnnDataType_t type, int n, int c, int h, int w) {
    if (format == CUDNN_TENSOR_NHWC) return cudnnSetTensor4dDescriptorEx(d, type, n, c, h, w, h * w * c, 1, w * c, c);
    if (format != CUDNN_TENSOR_NCHW) return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT, "tensor: NCHW or NHWC");
    const int dim[] = {n, c, h, w};
    return set_tensor(d, type, 4, dim, nullptr);
}

TBD_EXPORT cudnnStatus_t cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t d, cudnnDataType_t* type, int* n,
                                                    int* c, int* h, int* w, int* ns, int* cs, int* hs, int* ws) {
    if (d == nullptr || !d->set || d->dims != 4) return CUDNN_STATUS_BAD_PARAM;
    int* out[] = {n, c, h, w, ns, cs, hs, ws};
    for (int i = 0; i < 8; ++i) {
        if (out[i] != nullptr) *out[i] = i < 4 ? d->dim[i] : d->stride[i - 4];
    }
    if (type != nullptr) *type = d->type;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t d, size_t* size) {
    if (d == nullptr || size == nullptr || !d->set) return CUDNN_STATUS_BAD_PARAM;
    size_t last = 0;  // the farthest element's offset
    for (int i = 0; i < d->dims; ++i) last += static_cast<size_t>(d->dim[i] - 1) * d->stride[i];
    *size = (last + 1) * dnn::element_bytes(d->type);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                                    cudnnTensorFormat_t format, int dims, const int dim[]) {
    if (d == nullptr || dim == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!known_type(type)) return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE, "filter: unsupported data type");
    if (dims < 3 || dims > kMaxDims) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "filter: 3 to 8 dimensions");
    for (int i = 0; i < dims; ++i) {
        if (dim[i] <= 0) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "filter: dimensions must be positive");
        d->dim[i] = dim[i];
    }
    d->type = type;
    d->format = format;
    d->dims = dims;
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                                    cudnnTensorFormat_t format, int k, int c, int h, int w) {
    const int dim[] = {k, c, h, w};
    return cudnnSetFilterNdDescriptor(d, type, format, 4, dim);
}

TBD_EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int spatial, const int pad[],
                                                         const int stride[], const int dilation[],
                                                         cudnnConvolutionMode_t mode, cudnnDataType_t compute_type) {
    if (d == nullptr || pad == nullptr || stride == nullptr || dilation == nullptr) {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    if (spatial < 1 || spatial > kMaxDims - 2) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "convolution: 1 to 6 dims");
    for (int i = 0; i < spatial; ++i) {
        if (pad[i] < 0 || stride[i] <= 0 || dilation[i] <= 0) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "convolution: bad padding, stride or dilation");
        }
        d->pad[i] = pad[i];
        d->stride[i] = stride[i];
        d->dilation[i] = dilation[i];
    }
    d->spatial = spatial;
    d->mode = mode;
    d->compute_type = compute_type;
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w, int u,
                                                         int v, int dilation_h, int dilation_w,
                                                         cudnnConvolutionMode_t mode, cudnnDataType_t compute_type) {
    const int pad[] = {pad_h, pad_w}, stride[] = {u, v}, dilation[] = {dilation_h, dilation_w};
    return cudnnSetConvolutionNdDescriptor(d, 2, pad, stride, dilation, mode, compute_type);
}

TBD_EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math) {
    if (d == nullptr || math < CUDNN_DEFAULT_MATH || math > CUDNN_FMA_MATH) return CUDNN_STATUS_BAD_PARAM;
    d->math = math;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t* math) {
    if (d == nullptr || math == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *math = d->math;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
    if (d == nullptr || groups < 1) return CUDNN_STATUS_BAD_PARAM;
    d->groups = groups;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int* groups) {
    if (d == nullptr || groups == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *groups = d->groups;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetConvolutionReorderType(cudnnConvolutionDescriptor_t d, cudnnReorderType_t reorder) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
    d->reorder = reorder;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t conv,
                                                               const cudnnTensorDescriptor_t x,
                                                               const cudnnFilterDescriptor_t w, int dims, int out[]) {
    if (conv == nullptr || x == nullptr || w == nullptr || out == nullptr) return CUDNN_STATUS_BAD_PARAM;
    int got = 0;
    int result[kMaxDims] = {};
    if (const cudnnStatus_t s = dnn::convolution_output(*conv, *x, *w, &got, result); s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    if (dims != got) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "convolution: nbDims does not match the input");
    for (int i = 0; i < dims; ++i) out[i] = result[i];
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t conv,
                                                               const cudnnTensorDescriptor_t x,
                                                               const cudnnFilterDescriptor_t w, int* n, int* c, int* h,
                                                               int* wd) {
    int out[4] = {};
    if (n == nullptr || c == nullptr || h == nullptr || wd == nullptr) return CUDNN_STATUS_BAD_PARAM;
    const cudnnStatus_t status = cudnnGetConvolutionNdForwardOutputDim(conv, x, w, 4, out);
    if (status != CUDNN_STATUS_SUCCESS) return status;
    *n = out[0];
    *c = out[1];
    *h = out[2];
    *wd = out[3];
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, cudnnActivationMode_t mode,
                                                      cudnnNanPropagation_t nan, double coef) {
    if (d == nullptr || mode < CUDNN_ACTIVATION_SIGMOID || mode > CUDNN_ACTIVATION_SWISH) return CUDNN_STATUS_BAD_PARAM;
    d->mode = mode;
    d->nan = nan;
    d->coef = coef;
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t d, cudnnPoolingMode_t mode,
                                                     cudnnNanPropagation_t nan, int dims, const int window[],
                                                     const int pad[], const int stride[]) {
    if (d == nullptr || window == nullptr || pad == nullptr || stride == nullptr) return CUDNN_STATUS_BAD_PARAM;
    if (dims < 1 || dims > kMaxDims - 2) return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < dims; ++i) {
        if (window[i] <= 0 || pad[i] < 0 || stride[i] <= 0) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "pooling: sizes");
        d->window[i] = window[i];
        d->pad[i] = pad[i];
        d->stride[i] = stride[i];
    }
    d->mode = mode;
    d->nan = nan;
    d->spatial = dims;
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t d, cudnnPoolingMode_t mode,
                                                     cudnnNanPropagation_t nan, int window_h, int window_w, int pad_h,
                                                     int pad_w, int stride_h, int stride_w) {
    const int window[] = {window_h, window_w}, pad[] = {pad_h, pad_w}, stride[] = {stride_h, stride_w};
    return cudnnSetPoolingNdDescriptor(d, mode, nan, 2, window, pad, stride);
}

TBD_EXPORT cudnnStatus_t cudnnGetPoolingNdForwardOutputDim(const cudnnPoolingDescriptor_t p,
                                                           const cudnnTensorDescriptor_t x, int dims, int out[]) {
    if (p == nullptr || x == nullptr || out == nullptr || !p->set || !x->set) return CUDNN_STATUS_BAD_PARAM;
    if (dims != x->dims || dims != p->spatial + 2) return CUDNN_STATUS_BAD_PARAM;
    out[0] = x->dim[0];
    out[1] = x->dim[1];
    for (int i = 0; i < p->spatial; ++i) {
        out[i + 2] = 1 + (x->dim[i + 2] + 2 * p->pad[i] - p->window[i]) / p->stride[i];
        if (out[i + 2] <= 0) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "pooling: window larger than the input");
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetPooling2dForwardOutputDim(const cudnnPoolingDescriptor_t p,
                                                           const cudnnTensorDescriptor_t x, int* n, int* c, int* h,
                                                           int* w) {
    int out[4] = {};
    if (n == nullptr || c == nullptr || h == nullptr || w == nullptr) return CUDNN_STATUS_BAD_PARAM;
    const cudnnStatus_t status = cudnnGetPoolingNdForwardOutputDim(p, x, 4, out);
    if (status != CUDNN_STATUS_SUCCESS) return status;
    *n = out[0];
    *c = out[1];
    *h = out[2];
    *w = out[3];
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derived, const cudnnTensorDescriptor_t x,
                                                       cudnnBatchNormMode_t mode) {
    if (derived == nullptr || x == nullptr || !x->set) return CUDNN_STATUS_BAD_PARAM;
    int dim[kMaxDims];
    dim[0] = 1;
    dim[1] = x->dim[1];
    for (int i = 2; i < x->dims; ++i) dim[i] = mode == CUDNN_BATCHNORM_PER_ACTIVATION ? x->dim[i] : 1;
    // Half and bfloat16 data keep their statistics in float.
    const cudnnDataType_t type = x->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    return set_tensor(derived, type, x->dims, dim, nullptr);
}

// ---- getters (frameworks and the collector's hooks read descriptors back with these)

TBD_EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d, int requested,
                                                    cudnnDataType_t* type, int* dims, int dim[], int stride[]) {
    if (d == nullptr || !d->set || type == nullptr || dims == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *type = d->type;
    *dims = d->dims;
    for (int i = 0; i < requested && i < d->dims; ++i) {
        if (dim != nullptr) dim[i] = d->dim[i];
        if (stride != nullptr) stride[i] = d->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d, int requested,
                                                    cudnnDataType_t* type, cudnnTensorFormat_t* format, int* dims,
                                                    int dim[]) {
    if (d == nullptr || !d->set || type == nullptr || format == nullptr || dims == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    *type = d->type;
    *format = d->format;
    *dims = d->dims;
    for (int i = 0; i < requested && i < d->dims; ++i) {
        if (dim != nullptr) dim[i] = d->dim[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t d, int requested,
                                                         int* length, int pad[], int stride[], int dilation[],
                                                         cudnnConvolutionMode_t* mode, cudnnDataType_t* compute_type) {
    if (d == nullptr || !d->set || length == nullptr || mode == nullptr || compute_type == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    *length = d->spatial;
    for (int i = 0; i < requested && i < d->spatial; ++i) {
        if (pad != nullptr) pad[i] = d->pad[i];
        if (stride != nullptr) stride[i] = d->stride[i];
        if (dilation != nullptr) dilation[i] = d->dilation[i];
    }
    *mode = d->mode;
    *compute_type = d->compute_type;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetPoolingNdDescriptor(const cudnnPoolingDescriptor_t d, int requested,
                                                     cudnnPoolingMode_t* mode, cudnnNanPropagation_t* nan, int* dims,
                                                     int window[], int pad[], int stride[]) {
    if (d == nullptr || !d->set || mode == nullptr || nan == nullptr || dims == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *mode = d->mode;
    *nan = d->nan;
    *dims = d->spatial;
    for (int i = 0; i < requested && i < d->spatial; ++i) {
        if (window != nullptr) window[i] = d->window[i];
        if (pad != nullptr) pad[i] = d->pad[i];
        if (stride != nullptr) stride[i] = d->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetActivationDescriptor(const cudnnActivationDescriptor_t d, cudnnActivationMode_t* mode,
                                                      cudnnNanPropagation_t* nan, double* coef) {
    if (d == nullptr || !d->set || mode == nullptr || nan == nullptr || coef == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *mode = d->mode;
    *nan = d->nan;
    *coef = d->coef;
    return CUDNN_STATUS_SUCCESS;
}
