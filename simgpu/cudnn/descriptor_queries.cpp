// The rest of the legacy API's descriptor and library queries that frameworks make at start-up:
// the 4d/2d getters, filter sizes, the N-d tensor setter by format, swish's beta, the reorder type,
// the sub-library version checks, the runtime-error query and the logging callback. Nothing here
// touches the device.
#include <mutex>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The logging callback (cudnnSetCallback). The simulator logs nothing through it: it is kept and
// given back, as a program that installs one expects.
struct Callback {
    unsigned mask = 0;
    void* user = nullptr;
    cudnnCallback_t function = nullptr;
};
std::mutex g_callback_mutex;
Callback g_callback;

}  // namespace

// NCHW: packed, the last dimension fastest. NHWC (channels last): the channels fastest, then the
// spatial dimensions from the last, then the batch.
TBD_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                                      cudnnDataType_t type, int dims, const int dim[]) {
    if (d == nullptr || dim == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (dims < 3 || dims > kMaxDims) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "tensor: 3 to 8 dimensions");
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC) {
        return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT, "tensor: NCHW or NHWC");
    }
    int stride[kMaxDims] = {};
    if (format == CUDNN_TENSOR_NCHW) {
        for (int i = dims - 1, packed = 1; i >= 0; --i) {
            stride[i] = packed;
            packed *= dim[i];
        }
    } else {
        stride[1] = 1;
        int packed = dim[1];
        for (int i = dims - 1; i >= 2; --i) {
            stride[i] = packed;
            packed *= dim[i];
        }
        stride[0] = packed;
    }
    return cudnnSetTensorNdDescriptor(d, type, dims, dim, stride);
}

TBD_EXPORT cudnnStatus_t cudnnGetFilter4dDescriptor(const cudnnFilterDescriptor_t d, cudnnDataType_t* type,
                                                    cudnnTensorFormat_t* format, int* k, int* c, int* h, int* w) {
    if (d == nullptr || !d->set || d->dims != 4) return CUDNN_STATUS_BAD_PARAM;
    if (type == nullptr || format == nullptr || k == nullptr || c == nullptr || h == nullptr || w == nullptr) {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    *type = d->type;
    *format = d->format;
    *k = d->dim[0];
    *c = d->dim[1];
    *h = d->dim[2];
    *w = d->dim[3];
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetFilterSizeInBytes(const cudnnFilterDescriptor_t d, size_t* size) {
    if (d == nullptr || size == nullptr || !d->set) return CUDNN_STATUS_BAD_PARAM;
    size_t elements = 1;
    for (int i = 0; i < d->dims; ++i) elements *= static_cast<size_t>(d->dim[i]);
    *size = elements * dnn::element_bytes(d->type);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetPooling2dDescriptor(const cudnnPoolingDescriptor_t d, cudnnPoolingMode_t* mode,
                                                     cudnnNanPropagation_t* nan, int* window_h, int* window_w,
                                                     int* pad_h, int* pad_w, int* stride_h, int* stride_w) {
    if (d == nullptr || !d->set || d->spatial != 2) return CUDNN_STATUS_BAD_PARAM;
    if (mode == nullptr || nan == nullptr || window_h == nullptr || window_w == nullptr || pad_h == nullptr ||
        pad_w == nullptr || stride_h == nullptr || stride_w == nullptr) {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    *mode = d->mode;
    *nan = d->nan;
    *window_h = d->window[0];
    *window_w = d->window[1];
    *pad_h = d->pad[0];
    *pad_w = d->pad[1];
    *stride_h = d->stride[0];
    *stride_w = d->stride[1];
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolution2dDescriptor(const cudnnConvolutionDescriptor_t d, int* pad_h, int* pad_w,
                                                         int* u, int* v, int* dilation_h, int* dilation_w,
                                                         cudnnConvolutionMode_t* mode, cudnnDataType_t* compute_type) {
    if (d == nullptr || !d->set || d->spatial != 2) return CUDNN_STATUS_BAD_PARAM;
    if (pad_h == nullptr || pad_w == nullptr || u == nullptr || v == nullptr || dilation_h == nullptr ||
        dilation_w == nullptr || mode == nullptr || compute_type == nullptr) {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    *pad_h = d->pad[0];
    *pad_w = d->pad[1];
    *u = d->stride[0];
    *v = d->stride[1];
    *dilation_h = d->dilation[0];
    *dilation_w = d->dilation[1];
    *mode = d->mode;
    *compute_type = d->compute_type;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionReorderType(cudnnConvolutionDescriptor_t d, cudnnReorderType_t* reorder) {
    if (d == nullptr || reorder == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *reorder = d->reorder;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t d, double beta) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
    d->swish_beta = beta;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t d, double* beta) {
    if (d == nullptr || beta == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *beta = d->swish_beta;
    return CUDNN_STATUS_SUCCESS;
}

// One library here, so the sub-libraries' versions always match.
TBD_EXPORT cudnnStatus_t cudnnGraphVersionCheck(void) {
    return CUDNN_STATUS_SUCCESS;
}
TBD_EXPORT cudnnStatus_t cudnnOpsVersionCheck(void) {
    return CUDNN_STATUS_SUCCESS;
}
TBD_EXPORT cudnnStatus_t cudnnCnnVersionCheck(void) {
    return CUDNN_STATUS_SUCCESS;
}
TBD_EXPORT cudnnStatus_t cudnnAdvVersionCheck(void) {
    return CUDNN_STATUS_SUCCESS;
}

// Kernels here compute nothing, so none reports a numerical error: the status is always SUCCESS.
TBD_EXPORT cudnnStatus_t cudnnQueryRuntimeError(cudnnHandle_t handle, cudnnStatus_t* status, cudnnErrQueryMode_t mode,
                                                cudnnRuntimeTag_t*) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (status == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (mode != CUDNN_ERRQUERY_RAWCODE && mode != CUDNN_ERRQUERY_NONBLOCKING && mode != CUDNN_ERRQUERY_BLOCKING) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    *status = CUDNN_STATUS_SUCCESS;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetCallback(unsigned mask, void* user, cudnnCallback_t function) {
    std::lock_guard lock(g_callback_mutex);
    g_callback = {mask, user, function};
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetCallback(unsigned* mask, void** user, cudnnCallback_t* function) {
    if (mask == nullptr || user == nullptr || function == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    std::lock_guard lock(g_callback_mutex);
    *mask = g_callback.mask;
    *user = g_callback.user;
    *function = g_callback.function;
    return CUDNN_STATUS_SUCCESS;
}
