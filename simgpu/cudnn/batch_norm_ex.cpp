// Batch normalization through the Ex API (cudnn_ops_v9.h): training forward and backward with the
// optional fused add and activation (cudnnBatchNormOps_t), their workspace and reserve-space size
// queries. Sizes are this simulator's model (docs/simgpu-cudnn.md): the workspace holds FP32 partial
// sums, two per channel; the reserve space, with an activation, one bit per element of x (which
// elements the ReLU let through), rounded up to 16 bytes. The activation must be ReLU, the add's z
// shaped as y. Each pass is one kernel, timed as a roofline.
#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr size_t kReserveAlignment = 16;

struct BnEx {
    cudnnBatchNormMode_t mode;
    cudnnBatchNormOps_t ops;
    const cudnnTensorStruct* x;
    const cudnnTensorStruct* y;  // y (forward) or dx (backward)
    const cudnnTensorStruct* z;  // z (forward) or dz (backward): BN_ADD_ACTIVATION only
    const cudnnTensorStruct* params;
    const cudnnActivationStruct* activation;
};

bool fused_activation(const BnEx& b) {
    return b.ops != CUDNN_BATCHNORM_OPS_BN;
}

cudnnStatus_t check(const BnEx& b) {
    if (b.mode != CUDNN_BATCHNORM_SPATIAL && b.mode != CUDNN_BATCHNORM_PER_ACTIVATION &&
        b.mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: unknown mode");
    }
    if (b.ops != CUDNN_BATCHNORM_OPS_BN && b.ops != CUDNN_BATCHNORM_OPS_BN_ACTIVATION &&
        b.ops != CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: unknown bnOps");
    }
    if (!dnn::same_dims(b.x, b.y) || b.params == nullptr || !b.params->set || b.params->dims != b.x->dims ||
        b.params->dim[1] != b.x->dim[1]) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: tensor shapes");
    }
    if (b.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && !dnn::same_dims(b.z, b.y)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: z must be shaped as y");
    }
    if (fused_activation(b) &&
        (b.activation == nullptr || !b.activation->set || b.activation->mode != CUDNN_ACTIVATION_RELU)) {
        return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "batch norm Ex: the fused activation must be ReLU");
    }
    return CUDNN_STATUS_SUCCESS;
}

size_t workspace_size(const cudnnTensorStruct& x) {
    return static_cast<size_t>(x.dim[1]) * 2 * sizeof(float);
}

size_t reserve_size(const BnEx& b) {
    if (!fused_activation(b)) return 0;
    const auto bits = static_cast<size_t>(dnn::element_count(*b.x));
    const size_t bytes = (bits + 7) / 8;
    return (bytes + kReserveAlignment - 1) / kReserveAlignment * kReserveAlignment;
}

struct Buffers {
    const void* in;      // x (forward) or dy (backward)
    const void* second;  // scale
    void* out;           // y or dx
    void* workspace;
    size_t workspace_bytes;
    void* reserve;
    size_t reserve_bytes;
    const void* alpha;
    const void* beta;
};

// Training and backward passes need the workspace and (with an activation) the reserve space;
// inference needs neither.
cudnnStatus_t run_pass(cudnnHandle_t handle, const BnEx& b, dnn::BatchNormPass pass, const Buffers& buffers) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    const bool inference = pass == dnn::BatchNormPass::Inference, backward = pass == dnn::BatchNormPass::Backward;
    const size_t workspace = inference ? 0 : workspace_size(*b.x), reserve = inference ? 0 : reserve_size(b);
    if (buffers.workspace_bytes < workspace || (workspace > 0 && buffers.workspace == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: workspace too small");
    }
    if (buffers.reserve_bytes < reserve || (reserve > 0 && buffers.reserve == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: reserve space too small");
    }
    const bool add = b.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    const int64_t elements = dnn::element_count(*b.x);
    dnn::Elementwise work;
    work.kernel = backward ? dnn::kBatchNormBackwardEx : inference ? dnn::kBatchNormInference : dnn::kBatchNormTrainEx;
    work.out = b.y;
    work.flops = dnn::batch_norm_ex_flops(pass, add, fused_activation(b) ? b.activation->mode : -1, elements);
    // Forward reads x (and z), writes y; backward reads x and dy (and y, under an activation),
    // writes dx (and dz); the reserve space is written forward and read backward.
    const double tensor = dnn::tensor_bytes(*b.x);
    work.bytes = tensor * (backward ? 3 + (fused_activation(b) ? 1 : 0) : 2) + (add ? tensor : 0) +
                 static_cast<double>(reserve + 2 * workspace);
    work.params = {buffers.in,
                   buffers.second,
                   buffers.out,
                   buffers.workspace,
                   buffers.workspace_bytes,
                   0,
                   dnn::read_scalar(buffers.alpha, b.x->type),
                   dnn::read_scalar(buffers.beta, b.x->type),
                   0,
                   0,
                   buffers.reserve,
                   {}};
    work.grid_x = static_cast<unsigned>(b.x->dim[1]);
    work.threads = 512;
    return dnn::run_elementwise(handle, work);
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t z, const cudnnTensorDescriptor_t y, const cudnnTensorDescriptor_t params,
    const cudnnActivationDescriptor_t activation, size_t* size) {
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    const BnEx b{mode, ops, x, y, z, params, activation};
    if (const cudnnStatus_t s = check(b); s != CUDNN_STATUS_SUCCESS) return s;
    *size = workspace_size(*x);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t dy, const cudnnTensorDescriptor_t dz,
    const cudnnTensorDescriptor_t dx, const cudnnTensorDescriptor_t params,
    const cudnnActivationDescriptor_t activation, size_t* size) {
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    const BnEx b{mode, ops, x, dx, dz, params, activation};
    if (const cudnnStatus_t s = check(b); s != CUDNN_STATUS_SUCCESS) return s;
    if (!dnn::same_dims(dy, dx)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: dy and dx differ");
    *size = workspace_size(*x);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const cudnnActivationDescriptor_t activation,
    const cudnnTensorDescriptor_t x, size_t* size) {
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (x == nullptr || !x->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: x descriptor not set");
    cudnnTensorStruct params = *x;  // only its channel count is looked at here
    const BnEx b{mode,      ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION ? CUDNN_BATCHNORM_OPS_BN_ACTIVATION : ops,
                 x,         x,
                 x,         &params,
                 activation};
    if (const cudnnStatus_t s = check(b); s != CUDNN_STATUS_SUCCESS) return s;
    *size = reserve_size(b);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t z_desc, const void* z,
    const cudnnTensorDescriptor_t y_desc, void* y, const cudnnTensorDescriptor_t params_desc, const void* scale,
    const void* bias, double, void* running_mean, void* running_variance, double epsilon, void* save_mean,
    void* save_inv_variance, cudnnActivationDescriptor_t activation, void* workspace, size_t workspace_bytes,
    void* reserve, size_t reserve_bytes) {
    const BnEx b{mode, ops, x_desc, y_desc, z_desc, params_desc, activation};
    if (const cudnnStatus_t s = check(b); s != CUDNN_STATUS_SUCCESS) return s;
    if (x == nullptr || y == nullptr || scale == nullptr || bias == nullptr || alpha == nullptr || beta == nullptr ||
        (ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && z == nullptr) || epsilon < CUDNN_BN_MIN_EPSILON ||
        (running_mean == nullptr) != (running_variance == nullptr) ||
        (save_mean == nullptr) != (save_inv_variance == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: arguments");
    }
    return run_pass(handle, b, dnn::BatchNormPass::Training,
                    {x, scale, y, workspace, workspace_bytes, reserve, reserve_bytes, alpha, beta});
}

TBD_EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void* alpha_data,
    const void* beta_data, const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t x_desc,
    const void* x, const cudnnTensorDescriptor_t y_desc, const void* y, const cudnnTensorDescriptor_t dy_desc,
    const void* dy, const cudnnTensorDescriptor_t dz_desc, void* dz, const cudnnTensorDescriptor_t dx_desc, void* dx,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, void* dscale, void* dbias,
    double epsilon, const void*, const void*, cudnnActivationDescriptor_t activation, void* workspace,
    size_t workspace_bytes, void* reserve, size_t reserve_bytes) {
    const BnEx b{mode, ops, x_desc, dx_desc, dz_desc, params_desc, activation};
    if (const cudnnStatus_t s = check(b); s != CUDNN_STATUS_SUCCESS) return s;
    const bool activated = ops != CUDNN_BATCHNORM_OPS_BN;
    if (!dnn::same_dims(dy_desc, dx_desc) || x == nullptr || dy == nullptr || dx == nullptr || scale == nullptr ||
        dscale == nullptr || dbias == nullptr || alpha_data == nullptr || beta_data == nullptr ||
        alpha_param == nullptr || beta_param == nullptr || epsilon < CUDNN_BN_MIN_EPSILON ||
        (activated && (y == nullptr || !dnn::same_dims(y_desc, dx_desc) || bias == nullptr)) ||
        (ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION && dz == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex backward: arguments");
    }
    return run_pass(handle, b, dnn::BatchNormPass::Backward,
                    {dy, x, dx, workspace, workspace_bytes, reserve, reserve_bytes, alpha_data, beta_data});
}

// The normalization API (cudnnNorm*): batch norm Ex's model under other names. cudnnNormMode_t
// PER_ACTIVATION (0) and PER_CHANNEL (1) are batch norm's PER_ACTIVATION and SPATIAL, cudnnNormOps_t
// the same values as cudnnBatchNormOps_t; groupCnt must be 1 (the header: a placeholder).
namespace {

// For a mode check_norm accepted.
cudnnBatchNormMode_t batch_norm_mode(cudnnNormMode_t mode) {
    return mode == CUDNN_NORM_PER_CHANNEL ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_PER_ACTIVATION;
}

BnEx norm_ex(cudnnNormMode_t mode, cudnnNormOps_t ops, const cudnnTensorStruct* x, const cudnnTensorStruct* y,
             const cudnnTensorStruct* z, const cudnnTensorStruct* params, const cudnnActivationStruct* activation) {
    return {batch_norm_mode(mode), static_cast<cudnnBatchNormOps_t>(ops), x, y, z, params, activation};
}

cudnnStatus_t check_norm(cudnnNormMode_t mode, int groups) {
    if (mode != CUDNN_NORM_PER_CHANNEL && mode != CUDNN_NORM_PER_ACTIVATION) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "normalization: unknown mode");
    }
    return groups == 1 ? CUDNN_STATUS_SUCCESS
                       : dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "normalization: groupCnt must be 1");
}

}  // namespace

// Scale/bias and mean/variance descriptors: 1 x C x 1 x 1 per channel, 1 x C x H x W... per activation.
TBD_EXPORT cudnnStatus_t cudnnDeriveNormTensorDescriptor(cudnnTensorDescriptor_t scale_bias,
                                                         cudnnTensorDescriptor_t mean_var,
                                                         const cudnnTensorDescriptor_t x, cudnnNormMode_t mode,
                                                         int groups) {
    if (scale_bias == nullptr || mean_var == nullptr || x == nullptr || !x->set) return CUDNN_STATUS_BAD_PARAM;
    if (const cudnnStatus_t s = check_norm(mode, groups); s != CUDNN_STATUS_SUCCESS) return s;
    int dim[kMaxDims] = {};
    for (int i = 0; i < x->dims; ++i) dim[i] = i == 1 || (i > 1 && mode == CUDNN_NORM_PER_ACTIVATION) ? x->dim[i] : 1;
    const cudnnDataType_t type = x->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    int stride[kMaxDims] = {};
    for (int i = x->dims - 1, packed = 1; i >= 0; --i) {
        stride[i] = packed;
        packed *= dim[i];
    }
    if (const cudnnStatus_t s = cudnnSetTensorNdDescriptor(scale_bias, type, x->dims, dim, stride);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    return cudnnSetTensorNdDescriptor(mean_var, type, x->dims, dim, stride);
}

TBD_EXPORT cudnnStatus_t cudnnGetNormalizationForwardTrainingWorkspaceSize(
    cudnnHandle_t, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t z, const cudnnTensorDescriptor_t y, const cudnnTensorDescriptor_t params,
    const cudnnActivationDescriptor_t activation, const cudnnTensorDescriptor_t, size_t* size, int groups) {
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (const cudnnStatus_t s = check_norm(mode, groups); s != CUDNN_STATUS_SUCCESS) return s;
    if (const cudnnStatus_t s = check(norm_ex(mode, ops, x, y, z, params, activation)); s != CUDNN_STATUS_SUCCESS)
        return s;
    *size = workspace_size(*x);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetNormalizationBackwardWorkspaceSize(
    cudnnHandle_t, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t, const cudnnTensorDescriptor_t x,
    const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t dy, const cudnnTensorDescriptor_t dz,
    const cudnnTensorDescriptor_t dx, const cudnnTensorDescriptor_t params,
    const cudnnActivationDescriptor_t activation, const cudnnTensorDescriptor_t, size_t* size, int groups) {
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (const cudnnStatus_t s = check_norm(mode, groups); s != CUDNN_STATUS_SUCCESS) return s;
    if (const cudnnStatus_t s = check(norm_ex(mode, ops, x, dx, dz, params, activation)); s != CUDNN_STATUS_SUCCESS)
        return s;
    if (!dnn::same_dims(dy, dx)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "normalization: dy and dx differ");
    *size = workspace_size(*x);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetNormalizationTrainingReserveSpaceSize(cudnnHandle_t handle, cudnnNormMode_t mode,
                                                                       cudnnNormOps_t ops, cudnnNormAlgo_t,
                                                                       const cudnnActivationDescriptor_t activation,
                                                                       const cudnnTensorDescriptor_t x, size_t* size,
                                                                       int groups) {
    if (const cudnnStatus_t s = check_norm(mode, groups); s != CUDNN_STATUS_SUCCESS) return s;
    return cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
        handle, batch_norm_mode(mode), static_cast<cudnnBatchNormOps_t>(ops), activation, x, size);
}

TBD_EXPORT cudnnStatus_t cudnnNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t params_desc,
    const void* scale, const void* bias, double, const cudnnTensorDescriptor_t, void* running_mean,
    void* running_variance, double epsilon, void* save_mean, void* save_inv_variance,
    cudnnActivationDescriptor_t activation, const cudnnTensorDescriptor_t z_desc, const void* z,
    const cudnnTensorDescriptor_t y_desc, void* y, void* workspace, size_t workspace_bytes, void* reserve,
    size_t reserve_bytes, int groups) {
    if (const cudnnStatus_t s = check_norm(mode, groups); s != CUDNN_STATUS_SUCCESS) return s;
    const BnEx b = norm_ex(mode, ops, x_desc, y_desc, z_desc, params_desc, activation);
    if (const cudnnStatus_t s = check(b); s != CUDNN_STATUS_SUCCESS) return s;
    if (x == nullptr || y == nullptr || scale == nullptr || bias == nullptr || alpha == nullptr || beta == nullptr ||
        (ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION && z == nullptr) || epsilon < 0 ||
        (running_mean == nullptr) != (running_variance == nullptr) ||
        (save_mean == nullptr) != (save_inv_variance == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "normalization forward training: arguments");
    }
    return run_pass(handle, b, dnn::BatchNormPass::Training,
                    {x, scale, y, workspace, workspace_bytes, reserve, reserve_bytes, alpha, beta});
}

TBD_EXPORT cudnnStatus_t cudnnNormalizationForwardInference(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t params_desc,
    const void* scale, const void* bias, const cudnnTensorDescriptor_t, const void* mean, const void* variance,
    const cudnnTensorDescriptor_t z_desc, const void* z, cudnnActivationDescriptor_t activation,
    const cudnnTensorDescriptor_t y_desc, void* y, double epsilon, int groups) {
    if (const cudnnStatus_t s = check_norm(mode, groups); s != CUDNN_STATUS_SUCCESS) return s;
    const BnEx b = norm_ex(mode, ops, x_desc, y_desc, z_desc, params_desc, activation);
    if (const cudnnStatus_t s = check(b); s != CUDNN_STATUS_SUCCESS) return s;
    if (x == nullptr || y == nullptr || scale == nullptr || bias == nullptr || mean == nullptr || variance == nullptr ||
        alpha == nullptr || beta == nullptr || (ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION && z == nullptr) ||
        epsilon < 0) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "normalization forward inference: arguments");
    }
    return run_pass(handle, b, dnn::BatchNormPass::Inference, {x, scale, y, nullptr, 0, nullptr, 0, alpha, beta});
}

TBD_EXPORT cudnnStatus_t cudnnNormalizationBackward(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t, const void* alpha_data,
    const void* beta_data, const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t x_desc,
    const void* x, const cudnnTensorDescriptor_t y_desc, const void* y, const cudnnTensorDescriptor_t dy_desc,
    const void* dy, const cudnnTensorDescriptor_t dz_desc, void* dz, const cudnnTensorDescriptor_t dx_desc, void* dx,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, void* dscale, void* dbias,
    double epsilon, const cudnnTensorDescriptor_t, const void*, const void*, cudnnActivationDescriptor_t activation,
    void* workspace, size_t workspace_bytes, void* reserve, size_t reserve_bytes, int groups) {
    if (const cudnnStatus_t s = check_norm(mode, groups); s != CUDNN_STATUS_SUCCESS) return s;
    const BnEx b = norm_ex(mode, ops, x_desc, dx_desc, dz_desc, params_desc, activation);
    if (const cudnnStatus_t s = check(b); s != CUDNN_STATUS_SUCCESS) return s;
    const bool activated = ops != CUDNN_NORM_OPS_NORM;
    if (!dnn::same_dims(dy_desc, dx_desc) || x == nullptr || dy == nullptr || dx == nullptr || scale == nullptr ||
        dscale == nullptr || dbias == nullptr || alpha_data == nullptr || beta_data == nullptr ||
        alpha_param == nullptr || beta_param == nullptr || epsilon < 0 ||
        (activated && (y == nullptr || !dnn::same_dims(y_desc, dx_desc) || bias == nullptr)) ||
        (ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION && dz == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "normalization backward: arguments");
    }
    return run_pass(handle, b, dnn::BatchNormPass::Backward,
                    {dy, x, dx, workspace, workspace_bytes, reserve, reserve_bytes, alpha_data, beta_data});
}
