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

cudnnStatus_t run_pass(cudnnHandle_t handle, const BnEx& b, bool backward, const Buffers& buffers) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (buffers.workspace_bytes < workspace_size(*b.x) || buffers.workspace == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: workspace too small");
    }
    const size_t reserve = reserve_size(b);
    if (buffers.reserve_bytes < reserve || (reserve > 0 && buffers.reserve == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm Ex: reserve space too small");
    }
    const bool add = b.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    const int64_t elements = dnn::element_count(*b.x);
    const dnn::BatchNormPass pass = backward ? dnn::BatchNormPass::Backward : dnn::BatchNormPass::Training;
    dnn::Elementwise work;
    work.kernel = backward ? dnn::kBatchNormBackwardEx : dnn::kBatchNormTrainEx;
    work.out = b.y;
    work.flops = dnn::batch_norm_ex_flops(pass, add, fused_activation(b) ? b.activation->mode : -1, elements);
    // Forward reads x (and z), writes y; backward reads x and dy (and y, under an activation),
    // writes dx (and dz); the reserve space is written forward and read backward.
    const double tensor = dnn::tensor_bytes(*b.x);
    work.bytes = tensor * (backward ? 3 + (fused_activation(b) ? 1 : 0) : 2) + (add ? tensor : 0) +
                 static_cast<double>(reserve + 2 * workspace_size(*b.x));
    work.params = {buffers.in,
                   buffers.second,
                   buffers.out,
                   buffers.workspace,
                   buffers.workspace_bytes,
                   0,
                   dnn::read_scalar(buffers.alpha, b.x->type),
                   dnn::read_scalar(buffers.beta, b.x->type),
                   0,
                   0};
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
    return run_pass(handle, b, false, {x, scale, y, workspace, workspace_bytes, reserve, reserve_bytes, alpha, beta});
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
    return run_pass(handle, b, true,
                    {dy, x, dx, workspace, workspace_bytes, reserve, reserve_bytes, alpha_data, beta_data});
}
