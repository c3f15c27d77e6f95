// CTC loss (cudnn_adv_v9.h): the descriptor in all its versions (compute type, normalization mode,
// gradient mode, maximum label length), the workspace queries and the loss with its gradients, with
// labels in host memory (cudnnCTCLoss) or device memory (cudnnCTCLoss_v8). One kernel per call, timed
// as a roofline (FLOPs: dnn_flops.h). Sizes are this simulator's model (docs/simgpu-cudnn.md): the
// workspace holds the alpha and beta tables, 4 bytes per state (2 x label length + 1) per time step per
// sample; the host-label forms size it from the longest label given, the device-label forms from the
// descriptor's maxLabelLength (device memory is not read on the host, as on a GPU).
#include <algorithm>
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cudnnCTCLossStruct {
    cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
    cudnnLossNormalizationMode_t normalization = CUDNN_LOSS_NORMALIZATION_SOFTMAX;
    cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
    cudnnCTCGradMode_t grad_mode = CUDNN_CTC_ZERO_OOB_GRADIENTS;
    int max_label_length = 256;
    bool set = false;
};

namespace {

// Probs (and gradients, when given) are [T, N, A].
cudnnStatus_t check_probs(const cudnnTensorStruct* probs, const cudnnTensorStruct* gradients) {
    if (probs == nullptr || !probs->set || probs->dims != 3) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "CTC loss: probs must be a [T, N, A] tensor");
    }
    if (gradients != nullptr && !dnn::same_dims(probs, gradients)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "CTC loss: gradients must be shaped as probs");
    }
    return CUDNN_STATUS_SUCCESS;
}

size_t workspace_for(const cudnnTensorStruct& probs, int label_length) {
    const auto states = static_cast<size_t>(2 * label_length + 1);
    return 2 * states * static_cast<size_t>(probs.dim[0]) * static_cast<size_t>(probs.dim[1]) * sizeof(float);
}

int longest(const int* lengths, int count) {
    int most = 0;
    for (int i = 0; i < count; ++i) most = std::max(most, lengths[i]);
    return most;
}

struct CtcCall {
    const cudnnCTCLossStruct* desc;
    const cudnnTensorStruct* probs_desc;
    const void* probs;
    void* costs;
    const cudnnTensorStruct* gradients_desc;
    void* gradients;
    void* workspace;
    size_t workspace_bytes;
    size_t needed;
    int64_t label_steps;  // sum over samples of input length x (2 x label length + 1)
};

cudnnStatus_t run_ctc(cudnnHandle_t handle, const CtcCall& c) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (c.desc == nullptr || !c.desc->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "CTC loss: descriptor not set");
    if (const cudnnStatus_t s = check_probs(c.probs_desc, c.gradients != nullptr ? c.gradients_desc : nullptr);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    if (c.probs == nullptr || c.costs == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "CTC loss: null probs or costs");
    }
    if (c.workspace_bytes < c.needed || c.workspace == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "CTC loss: workspace smaller than the size query gives");
    }
    const bool softmax = c.desc->normalization == CUDNN_LOSS_NORMALIZATION_SOFTMAX;
    const double probs_bytes = dnn::tensor_bytes(*c.probs_desc);
    dnn::Elementwise work;
    work.kernel = dnn::kCtcLoss;
    work.out = c.probs_desc;
    work.flops = dnn::ctc_loss_flops(softmax, c.gradients != nullptr, dnn::element_count(*c.probs_desc), c.label_steps);
    work.bytes = probs_bytes * (c.gradients != nullptr ? 2 : 1) + 2.0 * static_cast<double>(c.needed);
    work.params = {
        c.probs, nullptr, c.gradients != nullptr ? c.gradients : c.costs, c.workspace, c.workspace_bytes, 0, 1, 0, 0, 0,
        nullptr, {}};
    return dnn::run_elementwise(handle, work);
}

cudnnStatus_t set_ctc(cudnnCTCLossDescriptor_t d, cudnnDataType_t type, cudnnLossNormalizationMode_t normalization,
                      cudnnNanPropagation_t nan, cudnnCTCGradMode_t grad_mode, int max_label_length) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (type != CUDNN_DATA_FLOAT ||
        (normalization != CUDNN_LOSS_NORMALIZATION_NONE && normalization != CUDNN_LOSS_NORMALIZATION_SOFTMAX) ||
        max_label_length <= 0) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "CTC loss: FP32 compute, a known normalization, a positive length");
    }
    *d = {type, normalization, nan, grad_mode, max_label_length, true};
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateCTCLossDescriptor(cudnnCTCLossDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnCTCLossStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyCTCLossDescriptor(cudnnCTCLossDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetCTCLossDescriptor(cudnnCTCLossDescriptor_t d, cudnnDataType_t type) {
    return set_ctc(d, type, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_NOT_PROPAGATE_NAN, CUDNN_CTC_ZERO_OOB_GRADIENTS,
                   256);
}

TBD_EXPORT cudnnStatus_t cudnnSetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t d, cudnnDataType_t type,
                                                     cudnnLossNormalizationMode_t normalization,
                                                     cudnnNanPropagation_t nan) {
    return set_ctc(d, type, normalization, nan, CUDNN_CTC_ZERO_OOB_GRADIENTS, 256);
}

TBD_EXPORT cudnnStatus_t cudnnSetCTCLossDescriptor_v8(cudnnCTCLossDescriptor_t d, cudnnDataType_t type,
                                                      cudnnLossNormalizationMode_t normalization,
                                                      cudnnNanPropagation_t nan, int max_label_length) {
    return set_ctc(d, type, normalization, nan, CUDNN_CTC_ZERO_OOB_GRADIENTS, max_label_length);
}

TBD_EXPORT cudnnStatus_t cudnnSetCTCLossDescriptor_v9(cudnnCTCLossDescriptor_t d, cudnnDataType_t type,
                                                      cudnnLossNormalizationMode_t normalization,
                                                      cudnnCTCGradMode_t grad_mode, int max_label_length) {
    return set_ctc(d, type, normalization, CUDNN_NOT_PROPAGATE_NAN, grad_mode, max_label_length);
}

TBD_EXPORT cudnnStatus_t cudnnGetCTCLossDescriptor(cudnnCTCLossDescriptor_t d, cudnnDataType_t* type) {
    if (d == nullptr || !d->set || type == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *type = d->compute_type;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t d, cudnnDataType_t* type,
                                                     cudnnLossNormalizationMode_t* normalization,
                                                     cudnnNanPropagation_t* nan) {
    if (d == nullptr || !d->set || type == nullptr || normalization == nullptr || nan == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    *type = d->compute_type;
    *normalization = d->normalization;
    *nan = d->nan;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetCTCLossDescriptor_v8(cudnnCTCLossDescriptor_t d, cudnnDataType_t* type,
                                                      cudnnLossNormalizationMode_t* normalization,
                                                      cudnnNanPropagation_t* nan, int* max_label_length) {
    if (max_label_length == nullptr) return CUDNN_STATUS_BAD_PARAM;
    const cudnnStatus_t s = cudnnGetCTCLossDescriptorEx(d, type, normalization, nan);
    if (s == CUDNN_STATUS_SUCCESS) *max_label_length = d->max_label_length;
    return s;
}

TBD_EXPORT cudnnStatus_t cudnnGetCTCLossDescriptor_v9(cudnnCTCLossDescriptor_t d, cudnnDataType_t* type,
                                                      cudnnLossNormalizationMode_t* normalization,
                                                      cudnnCTCGradMode_t* grad_mode, int* max_label_length) {
    if (d == nullptr || !d->set || type == nullptr || normalization == nullptr || grad_mode == nullptr ||
        max_label_length == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    *type = d->compute_type;
    *normalization = d->normalization;
    *grad_mode = d->grad_mode;
    *max_label_length = d->max_label_length;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t probs,
                                                      const cudnnTensorDescriptor_t gradients, const int*,
                                                      const int* label_lengths, const int*, cudnnCTCLossAlgo_t,
                                                      cudnnCTCLossDescriptor_t d, size_t* size) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || !d->set || size == nullptr || label_lengths == nullptr) return CUDNN_STATUS_BAD_PARAM;
    if (const cudnnStatus_t s = check_probs(probs, gradients); s != CUDNN_STATUS_SUCCESS) return s;
    *size = workspace_for(*probs, longest(label_lengths, probs->dim[1]));
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t,
                                                         cudnnCTCLossDescriptor_t d,
                                                         const cudnnTensorDescriptor_t probs,
                                                         const cudnnTensorDescriptor_t gradients, size_t* size) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || !d->set || size == nullptr) return CUDNN_STATUS_BAD_PARAM;
    if (const cudnnStatus_t s = check_probs(probs, gradients); s != CUDNN_STATUS_SUCCESS) return s;
    *size = workspace_for(*probs, d->max_label_length);
    return CUDNN_STATUS_SUCCESS;
}

// Labels, their lengths and the input lengths in host memory.
TBD_EXPORT cudnnStatus_t cudnnCTCLoss(cudnnHandle_t handle, const cudnnTensorDescriptor_t probs_desc, const void* probs,
                                      const int labels[], const int label_lengths[], const int input_lengths[],
                                      void* costs, const cudnnTensorDescriptor_t gradients_desc, void* gradients,
                                      cudnnCTCLossAlgo_t, cudnnCTCLossDescriptor_t d, void* workspace,
                                      size_t workspace_bytes) {
    if (labels == nullptr || label_lengths == nullptr || input_lengths == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "CTC loss: null label or length arrays");
    }
    if (const cudnnStatus_t s = check_probs(probs_desc, nullptr); s != CUDNN_STATUS_SUCCESS) return s;
    int64_t label_steps = 0;
    for (int n = 0; n < probs_desc->dim[1]; ++n) {
        if (input_lengths[n] < 0 || input_lengths[n] > probs_desc->dim[0] || label_lengths[n] < 0) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "CTC loss: input lengths must be in [0, T]");
        }
        label_steps += static_cast<int64_t>(input_lengths[n]) * (2 * label_lengths[n] + 1);
    }
    const size_t needed = workspace_for(*probs_desc, longest(label_lengths, probs_desc->dim[1]));
    return run_ctc(handle, {d, probs_desc, probs, costs, gradients_desc, gradients, workspace, workspace_bytes, needed,
                            label_steps});
}

// Labels and lengths in device memory: counted as every sample running T steps with the descriptor's
// maxLabelLength.
TBD_EXPORT cudnnStatus_t cudnnCTCLoss_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t, cudnnCTCLossDescriptor_t d,
                                         const cudnnTensorDescriptor_t probs_desc, const void* probs, const int[],
                                         const int[], const int[], void* costs,
                                         const cudnnTensorDescriptor_t gradients_desc, void* gradients,
                                         size_t workspace_bytes, void* workspace) {
    if (d == nullptr || !d->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "CTC loss: descriptor not set");
    if (const cudnnStatus_t s = check_probs(probs_desc, nullptr); s != CUDNN_STATUS_SUCCESS) return s;
    const int64_t label_steps = static_cast<int64_t>(probs_desc->dim[0]) * probs_desc->dim[1] *
                                (2 * static_cast<int64_t>(d->max_label_length) + 1);
    const size_t needed = workspace_for(*probs_desc, d->max_label_length);
    return run_ctc(handle, {d, probs_desc, probs, costs, gradients_desc, gradients, workspace, workspace_bytes, needed,
                            label_steps});
}
