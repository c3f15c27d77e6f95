// The fused-ops API (cudnn_cnn_v9.h): constant and variant parameter packs, plans, and their
// execution, one kernel per execution timed as a roofline (FLOPs: dnn_flops.h fused_ops_flops). The
// packs store what they are given (descriptors by value, placeholders, pointers, scalars) and read
// it back. Plans are made for the four operations cuDNN defines (the conv-with-BN-stats forward, the
// weight gradient, the BN statistics finalization for training and inference); the three the header
// reserves for future use are CUDNN_STATUS_NOT_SUPPORTED, as in cuDNN. The workspace is this
// simulator's model (docs/simgpu-cudnn.md): the weight gradient accumulates in FP32 (K x C x R x S x
// 4 bytes), the others need none.
#include <algorithm>
#include <array>
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kConstLabels = CUDNN_PARAM_BN_DBIAS_PLACEHOLDER + 1;
constexpr int kPointerLabels = CUDNN_PTR_BN_DBIAS + 1;

enum class Kind { Tensor, Filter, Convolution, Activation, BnMode, Placeholder };

Kind kind_of(int label) {
    switch (label) {
        case CUDNN_PARAM_WDESC:
        case CUDNN_PARAM_DWDESC:
            return Kind::Filter;
        case CUDNN_PARAM_CONV_DESC:
            return Kind::Convolution;
        case CUDNN_PARAM_ACTIVATION_DESC:
            return Kind::Activation;
        case CUDNN_PARAM_BN_MODE:
            return Kind::BnMode;
        case CUDNN_PARAM_XDESC:
        case CUDNN_PARAM_BN_EQSCALEBIAS_DESC:
        case CUDNN_PARAM_YDESC:
        case CUDNN_PARAM_DYDESC:
        case CUDNN_PARAM_YSTATS_DESC:
        case CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC:
        case CUDNN_PARAM_ZDESC:
        case CUDNN_PARAM_BN_Z_EQSCALEBIAS_DESC:
        case CUDNN_PARAM_ACTIVATION_BITMASK_DESC:
        case CUDNN_PARAM_DXDESC:
        case CUDNN_PARAM_DZDESC:
            return Kind::Tensor;
        default:
            return Kind::Placeholder;
    }
}

bool known_ops(cudnnFusedOps_t ops) {
    return ops >= CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS && ops <= CUDNN_FUSED_DACTIVATION_FORK_DBATCHNORM;
}

}  // namespace

struct cudnnFusedOpsConstParamStruct {
    cudnnFusedOps_t ops = CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS;
    std::array<bool, kConstLabels> present{};
    std::array<cudnnTensorStruct, kConstLabels> tensors{};
    std::array<cudnnFusedOpsPointerPlaceHolder_t, kConstLabels> placeholders{};
    cudnnFilterStruct w, dw;
    cudnnConvolutionStruct conv;
    cudnnActivationStruct activation;
    cudnnBatchNormMode_t bn_mode = CUDNN_BATCHNORM_SPATIAL;
};

struct cudnnFusedOpsVariantParamStruct {
    cudnnFusedOps_t ops = CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS;
    std::array<void*, kPointerLabels> pointers{};
    size_t workspace_bytes = 0;
    int64_t accumulation_count = 0;
    double exp_avg_factor = 0, epsilon = 0;
};

struct cudnnFusedOpsPlanStruct {
    cudnnFusedOps_t ops = CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS;
    cudnnFusedOpsConstParamStruct made;  // the constant pack as it was when the plan was made
    dnn::FusedOpsShape shape;
    size_t workspace_bytes = 0;
    bool ready = false;
};

TBD_EXPORT cudnnStatus_t cudnnCreateFusedOpsConstParamPack(cudnnFusedOpsConstParamPack_t* pack, cudnnFusedOps_t ops) {
    if (pack == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!known_ops(ops)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: unknown operation");
    *pack = new (std::nothrow) cudnnFusedOpsConstParamStruct;
    if (*pack == nullptr) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    (*pack)->ops = ops;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyFusedOpsConstParamPack(cudnnFusedOpsConstParamPack_t pack) {
    delete pack;
    return CUDNN_STATUS_SUCCESS;
}

// Descriptors are copied (null clears the label); BN mode and placeholders are read from `param`.
TBD_EXPORT cudnnStatus_t cudnnSetFusedOpsConstParamPackAttribute(cudnnFusedOpsConstParamPack_t pack,
                                                                 cudnnFusedOpsConstParamLabel_t label,
                                                                 const void* param) {
    if (pack == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (label < 0 || label >= kConstLabels) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: unknown label");
    const Kind kind = kind_of(label);
    if (param == nullptr) {
        if (kind == Kind::BnMode || kind == Kind::Placeholder) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "fused ops: BN mode or placeholder without value");
        }
        pack->present[label] = false;
        return CUDNN_STATUS_SUCCESS;
    }
    switch (kind) {
        case Kind::Tensor:
            pack->tensors[label] = *static_cast<const cudnnTensorStruct*>(param);
            break;
        case Kind::Filter:
            (label == CUDNN_PARAM_WDESC ? pack->w : pack->dw) = *static_cast<const cudnnFilterStruct*>(param);
            break;
        case Kind::Convolution:
            pack->conv = *static_cast<const cudnnConvolutionStruct*>(param);
            break;
        case Kind::Activation:
            pack->activation = *static_cast<const cudnnActivationStruct*>(param);
            break;
        case Kind::BnMode:
            pack->bn_mode = *static_cast<const cudnnBatchNormMode_t*>(param);
            break;
        case Kind::Placeholder: {
            const auto p = *static_cast<const cudnnFusedOpsPointerPlaceHolder_t*>(param);
            if (p < CUDNN_PTR_NULL || p > CUDNN_PTR_16B_ALIGNED) {
                return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: unknown pointer placeholder");
            }
            pack->placeholders[label] = p;
            break;
        }
    }
    pack->present[label] = true;
    return CUDNN_STATUS_SUCCESS;
}

// Descriptors are copied into the caller's (created) descriptor; *isNULL says whether the label is
// unset (a placeholder never set reads as CUDNN_PTR_NULL).
TBD_EXPORT cudnnStatus_t cudnnGetFusedOpsConstParamPackAttribute(const cudnnFusedOpsConstParamPack_t pack,
                                                                 cudnnFusedOpsConstParamLabel_t label, void* param,
                                                                 int* is_null) {
    if (pack == nullptr || param == nullptr || is_null == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (label < 0 || label >= kConstLabels) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: unknown label");
    *is_null = pack->present[label] ? 0 : 1;
    switch (kind_of(label)) {
        case Kind::Tensor:
            if (pack->present[label]) *static_cast<cudnnTensorStruct*>(param) = pack->tensors[label];
            break;
        case Kind::Filter:
            if (pack->present[label]) {
                *static_cast<cudnnFilterStruct*>(param) = label == CUDNN_PARAM_WDESC ? pack->w : pack->dw;
            }
            break;
        case Kind::Convolution:
            if (pack->present[label]) *static_cast<cudnnConvolutionStruct*>(param) = pack->conv;
            break;
        case Kind::Activation:
            if (pack->present[label]) *static_cast<cudnnActivationStruct*>(param) = pack->activation;
            break;
        case Kind::BnMode:
            *static_cast<cudnnBatchNormMode_t*>(param) = pack->bn_mode;
            break;
        case Kind::Placeholder:
            *static_cast<cudnnFusedOpsPointerPlaceHolder_t*>(param) = pack->placeholders[label];
            break;
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnCreateFusedOpsVariantParamPack(cudnnFusedOpsVariantParamPack_t* pack,
                                                             cudnnFusedOps_t ops) {
    if (pack == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!known_ops(ops)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: unknown operation");
    *pack = new (std::nothrow) cudnnFusedOpsVariantParamStruct;
    if (*pack == nullptr) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    (*pack)->ops = ops;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyFusedOpsVariantParamPack(cudnnFusedOpsVariantParamPack_t pack) {
    delete pack;
    return CUDNN_STATUS_SUCCESS;
}

// Pointer labels take the device pointer itself (null allowed); scalar labels point at a host value.
TBD_EXPORT cudnnStatus_t cudnnSetFusedOpsVariantParamPackAttribute(cudnnFusedOpsVariantParamPack_t pack,
                                                                   cudnnFusedOpsVariantParamLabel_t label, void* ptr) {
    if (pack == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (label >= 0 && label < kPointerLabels) {
        pack->pointers[label] = ptr;
        return CUDNN_STATUS_SUCCESS;
    }
    if (ptr == nullptr) return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "fused ops: scalar without value");
    switch (label) {
        case CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES:
            pack->workspace_bytes = *static_cast<size_t*>(ptr);
            break;
        case CUDNN_SCALAR_INT64_T_BN_ACCUMULATION_COUNT:
            pack->accumulation_count = *static_cast<int64_t*>(ptr);
            break;
        case CUDNN_SCALAR_DOUBLE_BN_EXP_AVG_FACTOR:
            pack->exp_avg_factor = *static_cast<double*>(ptr);
            break;
        case CUDNN_SCALAR_DOUBLE_BN_EPSILON:
            pack->epsilon = *static_cast<double*>(ptr);
            break;
        default:
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: unknown variant label");
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetFusedOpsVariantParamPackAttribute(const cudnnFusedOpsVariantParamPack_t pack,
                                                                   cudnnFusedOpsVariantParamLabel_t label, void* ptr) {
    if (pack == nullptr || ptr == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (label >= 0 && label < kPointerLabels) {
        *static_cast<void**>(ptr) = pack->pointers[label];
        return CUDNN_STATUS_SUCCESS;
    }
    switch (label) {
        case CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES:
            *static_cast<size_t*>(ptr) = pack->workspace_bytes;
            break;
        case CUDNN_SCALAR_INT64_T_BN_ACCUMULATION_COUNT:
            *static_cast<int64_t*>(ptr) = pack->accumulation_count;
            break;
        case CUDNN_SCALAR_DOUBLE_BN_EXP_AVG_FACTOR:
            *static_cast<double*>(ptr) = pack->exp_avg_factor;
            break;
        case CUDNN_SCALAR_DOUBLE_BN_EPSILON:
            *static_cast<double*>(ptr) = pack->epsilon;
            break;
        default:
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: unknown variant label");
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnCreateFusedOpsPlan(cudnnFusedOpsPlan_t* plan, cudnnFusedOps_t ops) {
    if (plan == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!known_ops(ops)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: unknown operation");
    *plan = new (std::nothrow) cudnnFusedOpsPlanStruct;
    if (*plan == nullptr) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    (*plan)->ops = ops;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyFusedOpsPlan(cudnnFusedOpsPlan_t plan) {
    delete plan;
    return CUDNN_STATUS_SUCCESS;
}

namespace {

bool has_placeholder(const cudnnFusedOpsConstParamStruct& p, int label) {
    return p.present[label] && p.placeholders[label] != CUDNN_PTR_NULL;
}

// The two convolution operations: x, conv, w (or dw) and y (or dy) set and consistent.
cudnnStatus_t plan_convolution(const cudnnFusedOpsConstParamStruct& p, dnn::FusedOpsShape* shape, size_t* workspace) {
    const bool wgrad = p.ops == CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD;
    const int w_label = wgrad ? CUDNN_PARAM_DWDESC : CUDNN_PARAM_WDESC;
    const int y_label = wgrad ? CUDNN_PARAM_DYDESC : CUDNN_PARAM_YDESC;
    if (!p.present[CUDNN_PARAM_XDESC] || !p.present[CUDNN_PARAM_CONV_DESC] || !p.present[w_label] ||
        !p.present[y_label]) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: x, convolution, filter and output descriptors needed");
    }
    dnn::ConvShape conv;
    const cudnnFilterStruct& w = wgrad ? p.dw : p.w;
    const cudnnTensorStruct& x = p.tensors[CUDNN_PARAM_XDESC];
    if (const cudnnStatus_t s = dnn::convolution_shape(&p.conv, &x, &w, &p.tensors[y_label], &conv);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    shape->convolution = conv.flops();
    shape->input_elements = dnn::element_count(x);
    shape->output_elements = dnn::element_count(p.tensors[y_label]);
    shape->scale_bias = has_placeholder(p, CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER);
    shape->activation_mode = p.present[CUDNN_PARAM_ACTIVATION_DESC] ? p.activation.mode : CUDNN_ACTIVATION_IDENTITY;
    shape->statistics = !wgrad && has_placeholder(p, CUDNN_PARAM_YSUM_PLACEHOLDER);
    shape->bytes = dnn::tensor_bytes(x) + dnn::tensor_bytes(p.tensors[y_label]);
    int64_t filter = 1;
    for (int i = 0; i < w.dims; ++i) filter *= w.dim[i];
    shape->bytes += static_cast<double>(filter) * static_cast<double>(dnn::element_bytes(w.type));
    *workspace = wgrad ? static_cast<size_t>(filter) * sizeof(float) : 0;
    return CUDNN_STATUS_SUCCESS;
}

// BN finalization: per channel of the scale/bias/mean/var descriptor.
cudnnStatus_t plan_finalize(const cudnnFusedOpsConstParamStruct& p, dnn::FusedOpsShape* shape) {
    if (!p.present[CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC]) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: BN scale/bias/mean/var descriptor needed");
    }
    const cudnnTensorStruct& c = p.tensors[CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC];
    shape->channels = dnn::element_count(c);
    shape->bytes = 8.0 * dnn::tensor_bytes(c);  // up to 4 read and 4 written per channel
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnMakeFusedOpsPlan(cudnnHandle_t handle, cudnnFusedOpsPlan_t plan,
                                               const cudnnFusedOpsConstParamPack_t pack, size_t* workspace_bytes) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (plan == nullptr || pack == nullptr || workspace_bytes == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (plan->ops != pack->ops) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: plan and pack of other ops");
    dnn::FusedOpsShape shape;
    shape.ops = pack->ops;
    size_t workspace = 0;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    switch (pack->ops) {
        case CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS:
        case CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD:
            s = plan_convolution(*pack, &shape, &workspace);
            break;
        case CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING:
        case CUDNN_FUSED_BN_FINALIZE_STATISTICS_INFERENCE:
            s = plan_finalize(*pack, &shape);
            break;
        default:
            return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "fused ops: operation reserved for future use");
    }
    if (s != CUDNN_STATUS_SUCCESS) return s;
    plan->made = *pack;
    plan->shape = shape;
    plan->workspace_bytes = workspace;
    plan->ready = true;
    *workspace_bytes = workspace;
    return CUDNN_STATUS_SUCCESS;
}

namespace {

// The variant labels each placeholder label stands for (constant label -> variant label).
constexpr std::array<std::pair<int, int>, 23> kPlaceholderPointers = {{
    {CUDNN_PARAM_XDATA_PLACEHOLDER, CUDNN_PTR_XDATA},
    {CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER, CUDNN_PTR_BN_EQSCALE},
    {CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER, CUDNN_PTR_BN_EQBIAS},
    {CUDNN_PARAM_WDATA_PLACEHOLDER, CUDNN_PTR_WDATA},
    {CUDNN_PARAM_DWDATA_PLACEHOLDER, CUDNN_PTR_DWDATA},
    {CUDNN_PARAM_YDATA_PLACEHOLDER, CUDNN_PTR_YDATA},
    {CUDNN_PARAM_DYDATA_PLACEHOLDER, CUDNN_PTR_DYDATA},
    {CUDNN_PARAM_YSUM_PLACEHOLDER, CUDNN_PTR_YSUM},
    {CUDNN_PARAM_YSQSUM_PLACEHOLDER, CUDNN_PTR_YSQSUM},
    {CUDNN_PARAM_BN_SCALE_PLACEHOLDER, CUDNN_PTR_BN_SCALE},
    {CUDNN_PARAM_BN_BIAS_PLACEHOLDER, CUDNN_PTR_BN_BIAS},
    {CUDNN_PARAM_BN_SAVED_MEAN_PLACEHOLDER, CUDNN_PTR_BN_SAVED_MEAN},
    {CUDNN_PARAM_BN_SAVED_INVSTD_PLACEHOLDER, CUDNN_PTR_BN_SAVED_INVSTD},
    {CUDNN_PARAM_BN_RUNNING_MEAN_PLACEHOLDER, CUDNN_PTR_BN_RUNNING_MEAN},
    {CUDNN_PARAM_BN_RUNNING_VAR_PLACEHOLDER, CUDNN_PTR_BN_RUNNING_VAR},
    {CUDNN_PARAM_ZDATA_PLACEHOLDER, CUDNN_PTR_ZDATA},
    {CUDNN_PARAM_BN_Z_EQSCALE_PLACEHOLDER, CUDNN_PTR_BN_Z_EQSCALE},
    {CUDNN_PARAM_BN_Z_EQBIAS_PLACEHOLDER, CUDNN_PTR_BN_Z_EQBIAS},
    {CUDNN_PARAM_ACTIVATION_BITMASK_PLACEHOLDER, CUDNN_PTR_ACTIVATION_BITMASK},
    {CUDNN_PARAM_DXDATA_PLACEHOLDER, CUDNN_PTR_DXDATA},
    {CUDNN_PARAM_DZDATA_PLACEHOLDER, CUDNN_PTR_DZDATA},
    {CUDNN_PARAM_BN_DSCALE_PLACEHOLDER, CUDNN_PTR_BN_DSCALE},
    {CUDNN_PARAM_BN_DBIAS_PLACEHOLDER, CUDNN_PTR_BN_DBIAS},
}};

// Every placeholder the plan was made with (not CUDNN_PTR_NULL) needs its pointer in the variant pack.
cudnnStatus_t check_pointers(const cudnnFusedOpsPlanStruct& plan, const cudnnFusedOpsVariantParamStruct& vars) {
    for (const auto& [placeholder, pointer] : kPlaceholderPointers) {
        if (has_placeholder(plan.made, placeholder) && vars.pointers[pointer] == nullptr) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: a placeholder's pointer is missing from the pack");
        }
    }
    if (plan.workspace_bytes > 0 &&
        (vars.workspace_bytes < plan.workspace_bytes || vars.pointers[CUDNN_PTR_WORKSPACE] == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: workspace smaller than cudnnMakeFusedOpsPlan gave");
    }
    return CUDNN_STATUS_SUCCESS;
}

int kernel_of(cudnnFusedOps_t ops) {
    switch (ops) {
        case CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS:
            return dnn::kFusedConvBnStats;
        case CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD:
            return dnn::kFusedWgrad;
        default:
            return dnn::kFusedBnFinalize;
    }
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnFusedOpsExecute(cudnnHandle_t handle, const cudnnFusedOpsPlan_t plan,
                                              cudnnFusedOpsVariantParamPack_t vars) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (plan == nullptr || vars == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!plan->ready) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: plan not made");
    if (vars->ops != plan->ops) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "fused ops: variant pack of other ops");
    if (const cudnnStatus_t s = check_pointers(*plan, *vars); s != CUDNN_STATUS_SUCCESS) return s;
    const dnn::FusedOpsShape& shape = plan->shape;
    const cudnnFusedOpsConstParamStruct& made = plan->made;
    const bool convolution = plan->ops <= CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD;
    dnn::Launch launch;
    launch.kernel = kernel_of(plan->ops);
    launch.grid_x = dnn::blocks_for(convolution ? shape.output_elements : shape.channels, 256);
    launch.flops = dnn::fused_ops_flops(shape);
    launch.bytes = shape.bytes + 2.0 * static_cast<double>(plan->workspace_bytes);
    launch.precision = convolution
                           ? dnn::convolution_precision(handle, made.tensors[CUDNN_PARAM_XDESC].type, made.conv.math)
                           : TBDSIM_PRECISION_FP32;
    const int out = plan->ops == CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD          ? CUDNN_PTR_DWDATA
                    : plan->ops == CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS ? CUDNN_PTR_YDATA
                                                                                  : CUDNN_PTR_BN_EQSCALE;
    launch.params = {vars->pointers[CUDNN_PTR_XDATA],
                     vars->pointers[CUDNN_PTR_WDATA],
                     vars->pointers[out],
                     vars->pointers[CUDNN_PTR_WORKSPACE],
                     vars->workspace_bytes,
                     shape.output_elements,
                     1,
                     0,
                     0,
                     0,
                     nullptr,
                     {}};
    return dnn::run(handle, launch);
}
