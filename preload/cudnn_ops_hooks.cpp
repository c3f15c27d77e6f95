// cuDNN tensor ops (op, reduce, transform), dropout, batch norm Ex, the normalization API, LRN and
// divisive normalization as library calls (what is recorded and why: cudnn_hook_support.h).
#include "cudnn_hook_support.h"
#include "cudnn_operands.h"

using namespace tbdprof::preload;
using tbdprof::raw::LibraryOp;
using tbdprof::raw::RawLibraryCall;
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

// The dropout descriptor's random-number states: cuDNN draws the mask from them. Read: cuDNN's
// reference calls them an output of cudnnSetDropoutDescriptor (which fills them) and says nothing of
// forward writing them.
void record_dropout_states(ThreadState& thread, const RawLibraryCall& record, cudnnHandle_t handle,
                           cudnnDropoutDescriptor_t dropout) {
    static LibraryFunction<decltype(&cudnnGetDropoutDescriptor)> get{"cudnnGetDropoutDescriptor"};
    static LibraryFunction<decltype(&cudnnDropoutGetStatesSize)> get_size{"cudnnDropoutGetStatesSize"};
    auto fn = get.get();
    auto size_fn = get_size.get();
    float probability = 0;
    void* states = nullptr;
    unsigned long long seed = 0;
    size_t bytes = 0;
    if (fn == nullptr || fn(dropout, handle, &probability, &states, &seed) != CUDNN_STATUS_SUCCESS) return;
    if (size_fn == nullptr || size_fn(handle, &bytes) != CUDNN_STATUS_SUCCESS) bytes = 0;
    record_operand(thread, record, LibraryOperandRole::DropoutStates, states, bytes, OperandAccess::Read);
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
    TBD_CUDNN_CALL(cudnnOpTensor, (handle, op_desc, alpha1, a_desc, a, alpha2, b_desc, b, beta, c_desc, c))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        const int op = op_tensor_op(op_desc);
        const bool binary = op != CUDNN_OP_TENSOR_SQRT && op != CUDNN_OP_TENSOR_NOT;
        common(thread, record, "cudnnOpTensor", LibraryOp::OpTensor, handle, a, binary ? b : nullptr, c);
        describe_extents(record, tensor_bytes(a_desc), binary ? tensor_bytes(b_desc) : 0, tensor_bytes(c_desc));
        describe_elementwise(record, c_desc,
                             [&](int64_t e) { return op < 0 ? 0.0 : cudnn_flops::op_tensor_flops(op, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnReduceTensor(cudnnHandle_t handle,
                                                       const cudnnReduceTensorDescriptor_t reduce_desc, void* indices,
                                                       size_t indices_bytes, void* workspace, size_t workspace_bytes,
                                                       const void* alpha, const cudnnTensorDescriptor_t a_desc,
                                                       const void* a, const void* beta,
                                                       const cudnnTensorDescriptor_t c_desc, void* c) {
    TBD_CUDNN_CALL(cudnnReduceTensor, (handle, reduce_desc, indices, indices_bytes, workspace, workspace_bytes, alpha,
                                       a_desc, a, beta, c_desc, c))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnReduceTensor", LibraryOp::ReduceTensor, handle, a, nullptr, c);
        describe_extents(record, tensor_bytes(a_desc), 0, tensor_bytes(c_desc));
        describe_workspace(record, workspace, workspace_bytes);
        Tensor input;
        const int op = reduce_tensor_op(reduce_desc);
        const bool known = op >= 0 && read_tensor(a_desc, &input);
        describe_elementwise(record, c_desc, [&](int64_t e) {
            return known ? cudnn_flops::reduce_tensor_flops(op, input.elements(), e) : 0.0;
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnDropoutForward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropout,
                                                         const cudnnTensorDescriptor_t x_desc, const void* x,
                                                         const cudnnTensorDescriptor_t y_desc, void* y, void* reserve,
                                                         size_t reserve_bytes) {
    TBD_CUDNN_CALL(cudnnDropoutForward, (handle, dropout, x_desc, x, y_desc, y, reserve, reserve_bytes))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnDropoutForward", LibraryOp::DropoutForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::Write);  // the mask backward reads
        record_dropout_states(thread, record, handle, dropout);
        describe_elementwise(record, y_desc, [](int64_t e) { return cudnn_flops::dropout_flops(false, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnDropoutBackward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropout,
                                                          const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                          const cudnnTensorDescriptor_t dx_desc, void* dx,
                                                          void* reserve, size_t reserve_bytes) {
    TBD_CUDNN_CALL(cudnnDropoutBackward, (handle, dropout, dy_desc, dy, dx_desc, dx, reserve, reserve_bytes))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnDropoutBackward", LibraryOp::DropoutBackward, handle, dy, nullptr, dx);
        describe_extents(record, tensor_bytes(dy_desc), 0, tensor_bytes(dx_desc));
        record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::Read);
        describe_elementwise(record, dx_desc, [](int64_t e) { return cudnn_flops::dropout_flops(true, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t z_desc, const void* z,
    const cudnnTensorDescriptor_t y_desc, void* y, const cudnnTensorDescriptor_t params_desc, const void* scale,
    const void* bias, double factor, void* running_mean, void* running_variance, double epsilon, void* save_mean,
    void* save_inv_variance, cudnnActivationDescriptor_t activation, void* workspace, size_t workspace_bytes,
    void* reserve, size_t reserve_bytes) {
    TBD_CUDNN_CALL(cudnnBatchNormalizationForwardTrainingEx,
                   (handle, mode, ops, alpha, beta, x_desc, x, z_desc, z, y_desc, y, params_desc, scale, bias, factor,
                    running_mean, running_variance, epsilon, save_mean, save_inv_variance, activation, workspace,
                    workspace_bytes, reserve, reserve_bytes))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnBatchNormalizationForwardTrainingEx", LibraryOp::BatchNormForwardTraining, handle,
               x, scale, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        const uint64_t param_bytes = tensor_bytes(params_desc);
        record_norm_forward(thread, record, {param_bytes, param_bytes}, bias, running_mean, running_variance, save_mean,
                            save_inv_variance);
        if (ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION)
            record_operand(thread, record, LibraryOperandRole::Residual, z, tensor_bytes(z_desc), OperandAccess::Read);
        record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::Write);
        const int act = batch_norm_activation(ops, activation);
        const bool add = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return cudnn_flops::batch_norm_ex_flops(cudnn_flops::BatchNormPass::Training, add, act, e);
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
    TBD_CUDNN_CALL(cudnnBatchNormalizationBackwardEx,
                   (handle, mode, ops, alpha_data, beta_data, alpha_param, beta_param, x_desc, x, y_desc, y, dy_desc,
                    dy, dz_desc, dz, dx_desc, dx, params_desc, scale, bias, dscale, dbias, epsilon, saved_mean,
                    saved_inv_variance, activation, workspace, workspace_bytes, reserve, reserve_bytes))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnBatchNormalizationBackwardEx", LibraryOp::BatchNormBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        describe_workspace(record, workspace, workspace_bytes);
        const uint64_t param_bytes = tensor_bytes(params_desc);
        const bool fused = ops != CUDNN_BATCHNORM_OPS_BN;  // y and the shift are read only with an activation
        record_norm_backward(thread, record, {param_bytes, param_bytes}, scale, fused ? bias : nullptr, dscale, dbias,
                             saved_mean, saved_inv_variance);
        if (fused)
            record_operand(thread, record, LibraryOperandRole::Input, y, tensor_bytes(y_desc), OperandAccess::Read);
        if (ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION)
            record_operand(thread, record, LibraryOperandRole::Residual, dz, tensor_bytes(dz_desc),
                           OperandAccess::Write);
        record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::Read);
        const int act = batch_norm_activation(ops, activation);
        const bool add = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return cudnn_flops::batch_norm_ex_flops(cudnn_flops::BatchNormPass::Backward, add, act, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnTransformTensor(cudnnHandle_t handle, const void* alpha,
                                                          const cudnnTensorDescriptor_t x_desc, const void* x,
                                                          const void* beta, const cudnnTensorDescriptor_t y_desc,
                                                          void* y) {
    TBD_CUDNN_CALL(cudnnTransformTensor, (handle, alpha, x_desc, x, beta, y_desc, y))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnTransformTensor", LibraryOp::TransformTensor, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        describe_elementwise(record, y_desc, [](int64_t e) { return cudnn_flops::transform_tensor_flops(e); });
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
    TBD_CUDNN_CALL(cudnnLRNCrossChannelForward, (handle, lrn, mode, alpha, x_desc, x, beta, y_desc, y))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnLRNCrossChannelForward", LibraryOp::LrnForward, handle, x, nullptr, y);
        describe_extents(record, tensor_bytes(x_desc), 0, tensor_bytes(y_desc));
        const int64_t n = lrn_window(lrn);
        describe_elementwise(record, y_desc,
                             [&](int64_t e) { return n < 0 ? 0.0 : cudnn_flops::lrn_flops(false, n, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t lrn,
                                                                  cudnnLRNMode_t mode, const void* alpha,
                                                                  const cudnnTensorDescriptor_t y_desc, const void* y,
                                                                  const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                                  const cudnnTensorDescriptor_t x_desc, const void* x,
                                                                  const void* beta,
                                                                  const cudnnTensorDescriptor_t dx_desc, void* dx) {
    TBD_CUDNN_CALL(cudnnLRNCrossChannelBackward,
                   (handle, lrn, mode, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnLRNCrossChannelBackward", LibraryOp::LrnBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        const int64_t n = lrn_window(lrn);
        describe_elementwise(record, dx_desc,
                             [&](int64_t e) { return n < 0 ? 0.0 : cudnn_flops::lrn_flops(true, n, e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnDivisiveNormalizationForward(cudnnHandle_t handle, cudnnLRNDescriptor_t lrn,
                                                                       cudnnDivNormMode_t mode, const void* alpha,
                                                                       const cudnnTensorDescriptor_t x_desc,
                                                                       const void* x, const void* means, void* temp,
                                                                       void* temp2, const void* beta,
                                                                       const cudnnTensorDescriptor_t y_desc, void* y) {
    TBD_CUDNN_CALL(cudnnDivisiveNormalizationForward,
                   (handle, lrn, mode, alpha, x_desc, x, means, temp, temp2, beta, y_desc, y))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnDivisiveNormalizationForward", LibraryOp::DivisiveNormForward, handle, x, means,
               y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(x_desc), tensor_bytes(y_desc));
        const int64_t n = lrn_window(lrn);
        describe_elementwise(record, y_desc, [&](int64_t e) {
            return n < 0 ? 0.0 : cudnn_flops::divisive_normalization_flops(false, n, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnDivisiveNormalizationBackward(
    cudnnHandle_t handle, cudnnLRNDescriptor_t lrn, cudnnDivNormMode_t mode, const void* alpha,
    const cudnnTensorDescriptor_t x_desc, const void* x, const void* means, const void* dy, void* temp, void* temp2,
    const void* beta, const cudnnTensorDescriptor_t dx_desc, void* dx, void* dmeans) {
    TBD_CUDNN_CALL(cudnnDivisiveNormalizationBackward,
                   (handle, lrn, mode, alpha, x_desc, x, means, dy, temp, temp2, beta, dx_desc, dx, dmeans))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnDivisiveNormalizationBackward", LibraryOp::DivisiveNormBackward, handle, dy, x,
               dx);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        const int64_t n = lrn_window(lrn);
        describe_elementwise(record, dx_desc, [&](int64_t e) {
            return n < 0 ? 0.0 : cudnn_flops::divisive_normalization_flops(true, n, e);
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
    TBD_CUDNN_CALL(cudnnNormalizationForwardTraining,
                   (handle, mode, ops, algo, alpha, beta, x_desc, x, params_desc, scale, bias, factor, mean_var_desc,
                    running_mean, running_variance, epsilon, save_mean, save_inv_variance, activation, z_desc, z,
                    y_desc, y, workspace, workspace_bytes, reserve, reserve_bytes, groups))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnNormalizationForwardTraining", LibraryOp::BatchNormForwardTraining, handle, x,
               scale, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        record_norm_forward(thread, record, {tensor_bytes(params_desc), tensor_bytes(mean_var_desc)}, bias,
                            running_mean, running_variance, save_mean, save_inv_variance);
        if (ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION)
            record_operand(thread, record, LibraryOperandRole::Residual, z, tensor_bytes(z_desc), OperandAccess::Read);
        record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::Write);
        const int act = ops == CUDNN_NORM_OPS_NORM ? -1 : activation_mode(activation);
        const bool add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return cudnn_flops::batch_norm_ex_flops(cudnn_flops::BatchNormPass::Training, add, act, e);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnNormalizationForwardInference(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t x_desc, const void* x, const cudnnTensorDescriptor_t params_desc,
    const void* scale, const void* bias, const cudnnTensorDescriptor_t mean_var_desc, const void* mean,
    const void* variance, const cudnnTensorDescriptor_t z_desc, const void* z, cudnnActivationDescriptor_t activation,
    const cudnnTensorDescriptor_t y_desc, void* y, double epsilon, int groups) {
    TBD_CUDNN_CALL(cudnnNormalizationForwardInference,
                   (handle, mode, ops, algo, alpha, beta, x_desc, x, params_desc, scale, bias, mean_var_desc, mean,
                    variance, z_desc, z, activation, y_desc, y, epsilon, groups))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnNormalizationForwardInference", LibraryOp::BatchNormForwardInference, handle, x,
               scale, y);
        describe_extents(record, tensor_bytes(x_desc), tensor_bytes(params_desc), tensor_bytes(y_desc));
        record_norm_inference(thread, record, {tensor_bytes(params_desc), tensor_bytes(mean_var_desc)}, bias, mean,
                              variance);
        if (ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION)
            record_operand(thread, record, LibraryOperandRole::Residual, z, tensor_bytes(z_desc), OperandAccess::Read);
        const int act = ops == CUDNN_NORM_OPS_NORM ? -1 : activation_mode(activation);
        const bool add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return cudnn_flops::batch_norm_ex_flops(cudnn_flops::BatchNormPass::Inference, add, act, e);
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
    TBD_CUDNN_CALL(
        cudnnNormalizationBackward,
        (handle, mode, ops, algo, alpha_data, beta_data, alpha_param, beta_param, x_desc, x, y_desc, y, dy_desc, dy,
         dz_desc, dz, dx_desc, dx, params_desc, scale, bias, dscale, dbias, epsilon, mean_var_desc, saved_mean,
         saved_inv_variance, activation, workspace, workspace_bytes, reserve, reserve_bytes, groups))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnNormalizationBackward", LibraryOp::BatchNormBackward, handle, dy, x, dx);
        describe_extents(record, tensor_bytes(dy_desc), tensor_bytes(x_desc), tensor_bytes(dx_desc));
        describe_workspace(record, workspace, workspace_bytes);
        const bool fused = ops != CUDNN_NORM_OPS_NORM;  // y and the shift are read only with an activation
        record_norm_backward(thread, record, {tensor_bytes(params_desc), tensor_bytes(mean_var_desc)}, scale,
                             fused ? bias : nullptr, dscale, dbias, saved_mean, saved_inv_variance);
        if (fused)
            record_operand(thread, record, LibraryOperandRole::Input, y, tensor_bytes(y_desc), OperandAccess::Read);
        if (ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION)
            record_operand(thread, record, LibraryOperandRole::Residual, dz, tensor_bytes(dz_desc),
                           OperandAccess::Write);
        record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::Read);
        const int act = ops == CUDNN_NORM_OPS_NORM ? -1 : activation_mode(activation);
        const bool add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
        describe_elementwise(record, x_desc, [&](int64_t e) {
            return cudnn_flops::batch_norm_ex_flops(cudnn_flops::BatchNormPass::Backward, add, act, e);
        });
    });
}

// Transforms with a tensor-transform descriptor: transform_tensor calls, FLOPs per destination element.
extern "C" TBD_VISIBLE cudnnStatus_t cudnnTransformTensorEx(cudnnHandle_t handle,
                                                            const cudnnTensorTransformDescriptor_t transform,
                                                            const void* alpha, const cudnnTensorDescriptor_t src_desc,
                                                            const void* src, const void* beta,
                                                            const cudnnTensorDescriptor_t dest_desc, void* dest) {
    TBD_CUDNN_CALL(cudnnTransformTensorEx, (handle, transform, alpha, src_desc, src, beta, dest_desc, dest))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnTransformTensorEx", LibraryOp::TransformTensor, handle, src, nullptr, dest);
        describe_extents(record, tensor_bytes(src_desc), 0, tensor_bytes(dest_desc));
        describe_elementwise(record, dest_desc, [](int64_t e) { return cudnn_flops::transform_tensor_flops(e); });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnTransformFilter(cudnnHandle_t handle,
                                                          const cudnnTensorTransformDescriptor_t transform,
                                                          const void* alpha, const cudnnFilterDescriptor_t src_desc,
                                                          const void* src, const void* beta,
                                                          const cudnnFilterDescriptor_t dest_desc, void* dest) {
    TBD_CUDNN_CALL(cudnnTransformFilter, (handle, transform, alpha, src_desc, src, beta, dest_desc, dest))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnTransformFilter", LibraryOp::TransformTensor, handle, src, nullptr, dest);
        describe_extents(record, filter_bytes(src_desc), 0, filter_bytes(dest_desc));
        Tensor out;
        if (!read_filter(dest_desc, &out)) return;
        record.a_type = record.c_type = cuda_type_of(out.type);
        record.compute_type = arithmetic_compute_type(out.type);
        record.m = out.elements();
        record.flops = cudnn_flops::transform_tensor_flops(out.elements());
    });
}
