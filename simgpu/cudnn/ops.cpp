// Element-wise and normalisation operations: activation, pooling, batch norm, softmax and tensor
// arithmetic, forward and backward. Each is one kernel; its FLOPs follow the counting rules in
// docs/simgpu-cudnn.md (comparisons are not FLOPs, so ReLU and max pooling count none). The
// collector's cuDNN hooks count with the same rules (dnn_flops.h).
#include "dnn_flops.h"
#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

bool usable(const cudnnTensorStruct* t) {
    return t != nullptr && t->set;
}

bool same_shape(const cudnnTensorStruct* a, const cudnnTensorStruct* b) {
    if (!usable(a) || !usable(b) || a->dims != b->dims) return false;
    for (int i = 0; i < a->dims; ++i) {
        if (a->dim[i] != b->dim[i]) return false;
    }
    return true;
}

TbdsimPrecision arithmetic_of(cudnnDataType_t type) {
    return type == CUDNN_DATA_DOUBLE ? TBDSIM_PRECISION_FP64 : TBDSIM_PRECISION_FP32;
}

// One kernel over `elements` output elements, `flops` in total.
cudnnStatus_t elementwise(cudnnHandle_t handle, int kernel, const cudnnTensorStruct* out_desc, const void* in,
                          const void* second, void* out, const void* alpha, const void* beta, double flops,
                          unsigned grid_x = 0, unsigned threads = 256) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (!usable(out_desc) || out == nullptr) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "null tensor or descriptor");
    const int64_t elements = dnn::element_count(*out_desc);
    dnn::Launch launch;
    launch.kernel = kernel;
    launch.threads = threads;
    launch.grid_x = grid_x != 0 ? grid_x : dnn::blocks_for(elements, threads);
    launch.flops = flops;
    launch.precision = arithmetic_of(out_desc->type);
    launch.params = {in,
                     second,
                     out,
                     nullptr,
                     0,
                     elements,
                     dnn::read_scalar(alpha, out_desc->type),
                     dnn::read_scalar(beta, out_desc->type),
                     0,
                     0,
                     nullptr,
                     {}};
    return dnn::run(handle, launch);
}

int64_t window_of(const cudnnPoolingStruct& p) {
    int64_t window = 1;
    for (int i = 0; i < p.spatial; ++i) window *= p.window[i];
    return window;
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t activation,
                                                const void* alpha, const cudnnTensorDescriptor_t x_desc, const void* x,
                                                const void* beta, const cudnnTensorDescriptor_t y_desc, void* y) {
    if (activation == nullptr || !activation->set || x == nullptr || alpha == nullptr || beta == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    if (!same_shape(x_desc, y_desc)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "activation: x and y differ");
    const double flops = dnn::activation_flops(activation->mode, false, dnn::element_count(*y_desc));
    return elementwise(handle, dnn::kActivationForward, y_desc, x, nullptr, y, alpha, beta, flops);
}

TBD_EXPORT cudnnStatus_t cudnnActivationBackward(cudnnHandle_t handle, cudnnActivationDescriptor_t activation,
                                                 const void* alpha, const cudnnTensorDescriptor_t y_desc, const void* y,
                                                 const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                 const cudnnTensorDescriptor_t x_desc, const void* x, const void* beta,
                                                 const cudnnTensorDescriptor_t dx_desc, void* dx) {
    if (activation == nullptr || !activation->set || y == nullptr || dy == nullptr || alpha == nullptr ||
        beta == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    (void)x;
    if (!same_shape(y_desc, dy_desc) || !same_shape(dy_desc, dx_desc) ||
        (x_desc != nullptr && !same_shape(x_desc, dx_desc))) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "activation backward: shapes differ");
    }
    const double flops = dnn::activation_flops(activation->mode, true, dnn::element_count(*dx_desc));
    return elementwise(handle, dnn::kActivationBackward, dx_desc, dy, y, dx, alpha, beta, flops);
}

TBD_EXPORT cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t pooling,
                                             const void* alpha, const cudnnTensorDescriptor_t x_desc, const void* x,
                                             const void* beta, const cudnnTensorDescriptor_t y_desc, void* y) {
    if (pooling == nullptr || !pooling->set || !usable(x_desc) || !usable(y_desc) || x == nullptr || alpha == nullptr ||
        beta == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    int out[kMaxDims] = {};
    if (cudnnGetPoolingNdForwardOutputDim(pooling, x_desc, x_desc->dims, out) != CUDNN_STATUS_SUCCESS) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    for (int i = 0; i < y_desc->dims; ++i) {
        if (y_desc->dim[i] != out[i]) return dnn::fail(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH, "pooling: y dims");
    }
    const double flops = dnn::pooling_flops(pooling->mode, window_of(*pooling), dnn::element_count(*y_desc));
    return elementwise(handle, dnn::kPoolingForward, y_desc, x, nullptr, y, alpha, beta, flops);
}

TBD_EXPORT cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t pooling,
                                              const void* alpha, const cudnnTensorDescriptor_t y_desc, const void* y,
                                              const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                              const cudnnTensorDescriptor_t x_desc, const void* x, const void* beta,
                                              const cudnnTensorDescriptor_t dx_desc, void* dx) {
    if (pooling == nullptr || !pooling->set || y == nullptr || dy == nullptr || x == nullptr || alpha == nullptr ||
        beta == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    if (!same_shape(y_desc, dy_desc) || !same_shape(x_desc, dx_desc)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "pooling backward: shapes differ");
    }
    const double flops = dnn::pooling_flops(pooling->mode, window_of(*pooling), dnn::element_count(*dy_desc));
    const int kernel = pooling->mode == CUDNN_POOLING_MAX || pooling->mode == CUDNN_POOLING_MAX_DETERMINISTIC
                           ? dnn::kPoolingBackwardMax
                           : dnn::kPoolingBackwardAvg;
    return elementwise(handle, kernel, dx_desc, dy, x, dx, alpha, beta, flops);
}

namespace {

cudnnStatus_t check_batch_norm(cudnnBatchNormMode_t mode, const cudnnTensorStruct* x, const cudnnTensorStruct* y,
                               const cudnnTensorStruct* params) {
    if (mode != CUDNN_BATCHNORM_SPATIAL && mode != CUDNN_BATCHNORM_PER_ACTIVATION &&
        mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    if (!same_shape(x, y) || !usable(params) || params->dims != x->dims || params->dim[1] != x->dim[1]) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm: tensor shapes");
    }
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t y_desc, void* y,
    const cudnnTensorDescriptor_t params_desc, const void* scale, const void* bias, double, void* running_mean,
    void* running_variance, double epsilon, void* save_mean, void* save_inv_variance) {
    if (const cudnnStatus_t s = check_batch_norm(mode, x_desc, y_desc, params_desc); s != CUDNN_STATUS_SUCCESS)
        return s;
    if (x == nullptr || scale == nullptr || bias == nullptr || alpha == nullptr || beta == nullptr ||
        epsilon < CUDNN_BN_MIN_EPSILON || (running_mean == nullptr) != (running_variance == nullptr) ||
        (save_mean == nullptr) != (save_inv_variance == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm: arguments");
    }
    const double flops = dnn::batch_norm_flops(dnn::BatchNormPass::Training, dnn::element_count(*x_desc));
    return elementwise(handle, dnn::kBatchNormTrain, y_desc, x, scale, y, alpha, beta, flops,
                       static_cast<unsigned>(x_desc->dim[1]), 512);
}

TBD_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
                                                                 const void* alpha, const void* beta,
                                                                 const cudnnTensorDescriptor_t x_desc, const void* x,
                                                                 const cudnnTensorDescriptor_t y_desc, void* y,
                                                                 const cudnnTensorDescriptor_t params_desc,
                                                                 const void* scale, const void* bias, const void* mean,
                                                                 const void* variance, double epsilon) {
    if (const cudnnStatus_t s = check_batch_norm(mode, x_desc, y_desc, params_desc); s != CUDNN_STATUS_SUCCESS)
        return s;
    if (x == nullptr || scale == nullptr || bias == nullptr || mean == nullptr || variance == nullptr ||
        alpha == nullptr || beta == nullptr || epsilon < CUDNN_BN_MIN_EPSILON) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm: arguments");
    }
    const double flops = dnn::batch_norm_flops(dnn::BatchNormPass::Inference, dnn::element_count(*x_desc));
    return elementwise(handle, dnn::kBatchNormInference, y_desc, x, scale, y, alpha, beta, flops);
}

TBD_EXPORT cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha_data, const void* beta_data,
    const void* alpha_param, const void* beta_param, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnTensorDescriptor_t dy_desc, const void* dy, const cudnnTensorDescriptor_t dx_desc, void* dx,
    const cudnnTensorDescriptor_t params_desc, const void* scale, void* dscale, void* dbias, double epsilon,
    const void*, const void*) {
    if (const cudnnStatus_t s = check_batch_norm(mode, x_desc, dx_desc, params_desc); s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    if (!same_shape(dy_desc, dx_desc) || x == nullptr || dy == nullptr || scale == nullptr || dscale == nullptr ||
        dbias == nullptr || alpha_data == nullptr || beta_data == nullptr || alpha_param == nullptr ||
        beta_param == nullptr || epsilon < CUDNN_BN_MIN_EPSILON) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "batch norm backward: arguments");
    }
    const double flops = dnn::batch_norm_flops(dnn::BatchNormPass::Backward, dnn::element_count(*x_desc));
    return elementwise(handle, dnn::kBatchNormBackward, dx_desc, dy, x, dx, alpha_data, beta_data, flops,
                       static_cast<unsigned>(x_desc->dim[1]), 512);
}

TBD_EXPORT cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                             cudnnSoftmaxMode_t mode, const void* alpha,
                                             const cudnnTensorDescriptor_t x_desc, const void* x, const void* beta,
                                             const cudnnTensorDescriptor_t y_desc, void* y) {
    if (algo > CUDNN_SOFTMAX_LOG || mode > CUDNN_SOFTMAX_MODE_CHANNEL || x == nullptr || alpha == nullptr ||
        beta == nullptr || !same_shape(x_desc, y_desc)) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    const double flops = dnn::softmax_flops(dnn::element_count(*y_desc));
    return elementwise(handle, dnn::kSoftmaxForward, y_desc, x, nullptr, y, alpha, beta, flops);
}

TBD_EXPORT cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                              cudnnSoftmaxMode_t mode, const void* alpha,
                                              const cudnnTensorDescriptor_t y_desc, const void* y,
                                              const cudnnTensorDescriptor_t dy_desc, const void* dy, const void* beta,
                                              const cudnnTensorDescriptor_t dx_desc, void* dx) {
    if (algo > CUDNN_SOFTMAX_LOG || mode > CUDNN_SOFTMAX_MODE_CHANNEL || y == nullptr || dy == nullptr ||
        alpha == nullptr || beta == nullptr || !same_shape(y_desc, dy_desc) || !same_shape(dy_desc, dx_desc)) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    const double flops = dnn::softmax_flops(dnn::element_count(*dx_desc));
    return elementwise(handle, dnn::kSoftmaxBackward, dx_desc, dy, y, dx, alpha, beta, flops);
}

// C = alpha * A + beta * C, A broadcast over dims where it is 1.
TBD_EXPORT cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t a_desc,
                                        const void* a, const void* beta, const cudnnTensorDescriptor_t c_desc,
                                        void* c) {
    if (!usable(a_desc) || !usable(c_desc) || a == nullptr || alpha == nullptr || beta == nullptr ||
        a_desc->dims != c_desc->dims) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    for (int i = 0; i < a_desc->dims; ++i) {
        if (a_desc->dim[i] != 1 && a_desc->dim[i] != c_desc->dim[i]) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "add tensor: A does not broadcast to C");
        }
    }
    const double flops = dnn::add_tensor_flops(dnn::element_count(*c_desc));
    return elementwise(handle, dnn::kAddTensor, c_desc, a, nullptr, c, alpha, beta, flops);
}

TBD_EXPORT cudnnStatus_t cudnnSetTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t y_desc, void* y,
                                        const void* value) {
    if (value == nullptr) return CUDNN_STATUS_BAD_PARAM;
    return elementwise(handle, dnn::kSetTensor, y_desc, nullptr, nullptr, y, value, nullptr, 0);
}

TBD_EXPORT cudnnStatus_t cudnnScaleTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t y_desc, void* y,
                                          const void* alpha) {
    if (alpha == nullptr || !usable(y_desc)) return CUDNN_STATUS_BAD_PARAM;
    return elementwise(handle, dnn::kScaleTensor, y_desc, nullptr, nullptr, y, alpha, nullptr,
                       static_cast<double>(dnn::element_count(*y_desc)));
}
