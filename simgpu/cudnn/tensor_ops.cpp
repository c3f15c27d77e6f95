// Tensor arithmetic and reductions of the legacy API (cudnn_ops_v9.h): cudnnOpTensor with its
// descriptor, cudnnReduceTensor with its descriptor and its workspace and indices sizes. Each call
// is one kernel timed as a roofline (FLOPs as dnn_flops.h counts them, bytes each operand once).
// Shapes follow cuDNN's documentation: OpTensor's A matches C, B matches C or is 1 in a dimension;
// ReduceTensor's C is A or 1 in each dimension.
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cudnnOpTensorStruct {
    cudnnOpTensorOp_t op = CUDNN_OP_TENSOR_ADD;
    cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
    cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
    bool set = false;
};

struct cudnnReduceTensorStruct {
    cudnnReduceTensorOp_t op = CUDNN_REDUCE_TENSOR_ADD;
    cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
    cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
    cudnnReduceTensorIndices_t indices = CUDNN_REDUCE_TENSOR_NO_INDICES;
    cudnnIndicesType_t indices_type = CUDNN_32BIT_INDICES;
    bool set = false;
};

namespace {

// Each dimension of `t` equals `c`'s, or is 1 where `may_be_one`.
bool fits(const cudnnTensorStruct* t, const cudnnTensorStruct* c, bool may_be_one) {
    if (t == nullptr || c == nullptr || !t->set || !c->set || t->dims != c->dims) return false;
    for (int i = 0; i < t->dims; ++i) {
        if (t->dim[i] != c->dim[i] && !(may_be_one && t->dim[i] == 1)) return false;
    }
    return true;
}

bool known_compute_type(cudnnDataType_t type) {
    return type == CUDNN_DATA_FLOAT || type == CUDNN_DATA_DOUBLE || type == CUDNN_DATA_HALF ||
           type == CUDNN_DATA_BFLOAT16;
}

// Indices are written only by the ops that pick an element, when asked for.
bool has_indices(const cudnnReduceTensorStruct& r) {
    return r.indices == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES &&
           (r.op == CUDNN_REDUCE_TENSOR_MIN || r.op == CUDNN_REDUCE_TENSOR_MAX || r.op == CUDNN_REDUCE_TENSOR_AMAX);
}

// Checks the reduction's operands; the sizes it needs: indices (32-bit, one per element of C) and
// the workspace (FP32 partial results, one per element of C, when more than one element of A meets
// in each).
cudnnStatus_t reduction_sizes(const cudnnReduceTensorStruct* r, const cudnnTensorStruct* a, const cudnnTensorStruct* c,
                              size_t* indices_bytes, size_t* workspace_bytes) {
    if (r == nullptr || !r->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "reduce tensor: descriptor not set");
    if (!fits(c, a, true)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "reduce tensor: C must be A or 1 per dimension");
    if (a->type != c->type) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "reduce tensor: A and C data types differ");
    const auto outputs = static_cast<size_t>(dnn::element_count(*c));
    *indices_bytes = has_indices(*r) ? outputs * sizeof(unsigned) : 0;
    *workspace_bytes = dnn::element_count(*a) > dnn::element_count(*c) ? outputs * sizeof(float) : 0;
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateOpTensorDescriptor(cudnnOpTensorDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnOpTensorStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyOpTensorDescriptor(cudnnOpTensorDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetOpTensorDescriptor(cudnnOpTensorDescriptor_t d, cudnnOpTensorOp_t op,
                                                    cudnnDataType_t compute_type, cudnnNanPropagation_t nan) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (op < CUDNN_OP_TENSOR_ADD || op > CUDNN_OP_TENSOR_NOT || !known_compute_type(compute_type) ||
        (nan != CUDNN_NOT_PROPAGATE_NAN && nan != CUDNN_PROPAGATE_NAN)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "op tensor: unknown op, compute type or NaN option");
    }
    *d = {op, compute_type, nan, true};
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetOpTensorDescriptor(const cudnnOpTensorDescriptor_t d, cudnnOpTensorOp_t* op,
                                                    cudnnDataType_t* compute_type, cudnnNanPropagation_t* nan) {
    if (d == nullptr || op == nullptr || compute_type == nullptr || nan == nullptr) {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    *op = d->op;
    *compute_type = d->compute_type;
    *nan = d->nan;
    return CUDNN_STATUS_SUCCESS;
}

// C = op(alpha1 * A, alpha2 * B) + beta * C; B is not read by SQRT and NOT.
TBD_EXPORT cudnnStatus_t cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t op_desc,
                                       const void* alpha1, const cudnnTensorDescriptor_t a_desc, const void* a,
                                       const void* alpha2, const cudnnTensorDescriptor_t b_desc, const void* b,
                                       const void* beta, const cudnnTensorDescriptor_t c_desc, void* c) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (op_desc == nullptr || !op_desc->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "op tensor: descriptor not set");
    const bool binary = op_desc->op != CUDNN_OP_TENSOR_SQRT && op_desc->op != CUDNN_OP_TENSOR_NOT;
    if (alpha1 == nullptr || beta == nullptr || a == nullptr || c == nullptr ||
        (binary && (alpha2 == nullptr || b == nullptr))) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "op tensor: null pointer argument");
    }
    if (!fits(a_desc, c_desc, false) || (binary && !fits(b_desc, c_desc, true))) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "op tensor: A must match C, B match C or be 1 per dimension");
    }
    if (a_desc->type != c_desc->type || (binary && b_desc->type != c_desc->type)) {
        return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE, "op tensor: mixed data types");
    }
    const double reads_c = dnn::read_scalar(beta, c_desc->type) != 0 ? dnn::tensor_bytes(*c_desc) : 0;
    dnn::Elementwise work;
    work.kernel = dnn::kOpTensor;
    work.out = c_desc;
    work.flops = dnn::op_tensor_flops(op_desc->op, dnn::element_count(*c_desc));
    work.bytes =
        dnn::tensor_bytes(*a_desc) + (binary ? dnn::tensor_bytes(*b_desc) : 0) + reads_c + dnn::tensor_bytes(*c_desc);
    work.params = {a,
                   binary ? b : nullptr,
                   c,
                   nullptr,
                   0,
                   0,
                   dnn::read_scalar(alpha1, c_desc->type),
                   dnn::read_scalar(beta, c_desc->type),
                   0,
                   0,
                   nullptr,
                   {}};
    return dnn::run_elementwise(handle, work);
}

// y = alpha * x + beta * y, x and y the same shape in (possibly) different layouts (strides).
TBD_EXPORT cudnnStatus_t cudnnTransformTensor(cudnnHandle_t handle, const void* alpha,
                                              const cudnnTensorDescriptor_t x_desc, const void* x, const void* beta,
                                              const cudnnTensorDescriptor_t y_desc, void* y) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (alpha == nullptr || beta == nullptr || x == nullptr || y == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "transform tensor: null pointer argument");
    }
    if (!dnn::same_dims(x_desc, y_desc)) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "transform tensor: x and y differ");
    const double reads_y = dnn::read_scalar(beta, y_desc->type) != 0 ? dnn::tensor_bytes(*y_desc) : 0;
    dnn::Elementwise work;
    work.kernel = dnn::kTransformTensor;
    work.out = y_desc;
    work.flops = dnn::transform_tensor_flops(dnn::element_count(*y_desc));
    work.bytes = dnn::tensor_bytes(*x_desc) + reads_y + dnn::tensor_bytes(*y_desc);
    work.params = {
        x, nullptr, y,       nullptr, 0, 0, dnn::read_scalar(alpha, y_desc->type), dnn::read_scalar(beta, y_desc->type),
        0, 0,       nullptr, {}};
    return dnn::run_elementwise(handle, work);
}

TBD_EXPORT cudnnStatus_t cudnnCreateReduceTensorDescriptor(cudnnReduceTensorDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnReduceTensorStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyReduceTensorDescriptor(cudnnReduceTensorDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetReduceTensorDescriptor(cudnnReduceTensorDescriptor_t d, cudnnReduceTensorOp_t op,
                                                        cudnnDataType_t compute_type, cudnnNanPropagation_t nan,
                                                        cudnnReduceTensorIndices_t indices,
                                                        cudnnIndicesType_t indices_type) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (op < CUDNN_REDUCE_TENSOR_ADD || op > CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS || !known_compute_type(compute_type) ||
        (nan != CUDNN_NOT_PROPAGATE_NAN && nan != CUDNN_PROPAGATE_NAN) ||
        (indices != CUDNN_REDUCE_TENSOR_NO_INDICES && indices != CUDNN_REDUCE_TENSOR_FLATTENED_INDICES)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "reduce tensor: unknown op, compute type, NaN or indices option");
    }
    // The header: only 32-bit indices are supported.
    if (indices == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES && indices_type != CUDNN_32BIT_INDICES) {
        return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "reduce tensor: only 32-bit indices");
    }
    *d = {op, compute_type, nan, indices, indices_type, true};
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetReduceTensorDescriptor(const cudnnReduceTensorDescriptor_t d,
                                                        cudnnReduceTensorOp_t* op, cudnnDataType_t* compute_type,
                                                        cudnnNanPropagation_t* nan, cudnnReduceTensorIndices_t* indices,
                                                        cudnnIndicesType_t* indices_type) {
    if (d == nullptr || op == nullptr || compute_type == nullptr || nan == nullptr || indices == nullptr ||
        indices_type == nullptr) {
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    }
    *op = d->op;
    *compute_type = d->compute_type;
    *nan = d->nan;
    *indices = d->indices;
    *indices_type = d->indices_type;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetReductionIndicesSize(cudnnHandle_t, const cudnnReduceTensorDescriptor_t r,
                                                      const cudnnTensorDescriptor_t a, const cudnnTensorDescriptor_t c,
                                                      size_t* size) {
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    size_t workspace = 0;
    return reduction_sizes(r, a, c, size, &workspace);
}

TBD_EXPORT cudnnStatus_t cudnnGetReductionWorkspaceSize(cudnnHandle_t, const cudnnReduceTensorDescriptor_t r,
                                                        const cudnnTensorDescriptor_t a,
                                                        const cudnnTensorDescriptor_t c, size_t* size) {
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    size_t indices = 0;
    return reduction_sizes(r, a, c, &indices, size);
}

// C = reduce(alpha * A) + beta * C over the dimensions where C is 1.
TBD_EXPORT cudnnStatus_t cudnnReduceTensor(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t r, void* indices,
                                           size_t indices_bytes, void* workspace, size_t workspace_bytes,
                                           const void* alpha, const cudnnTensorDescriptor_t a_desc, const void* a,
                                           const void* beta, const cudnnTensorDescriptor_t c_desc, void* c) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (alpha == nullptr || beta == nullptr || a == nullptr || c == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "reduce tensor: null pointer argument");
    }
    size_t needed_indices = 0, needed_workspace = 0;
    if (const cudnnStatus_t s = reduction_sizes(r, a_desc, c_desc, &needed_indices, &needed_workspace);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    if (indices_bytes < needed_indices || (needed_indices > 0 && indices == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "reduce tensor: indices space too small");
    }
    if (workspace_bytes < needed_workspace || (needed_workspace > 0 && workspace == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "reduce tensor: workspace too small");
    }
    const double reads_c = dnn::read_scalar(beta, c_desc->type) != 0 ? dnn::tensor_bytes(*c_desc) : 0;
    dnn::Elementwise work;
    work.kernel = dnn::kReduceTensor;
    work.out = c_desc;
    work.flops = dnn::reduce_tensor_flops(r->op, dnn::element_count(*a_desc), dnn::element_count(*c_desc));
    work.bytes = dnn::tensor_bytes(*a_desc) + reads_c + dnn::tensor_bytes(*c_desc) +
                 static_cast<double>(needed_indices + 2 * needed_workspace);
    work.params = {a,
                   indices,
                   c,
                   workspace,
                   workspace_bytes,
                   0,
                   dnn::read_scalar(alpha, c_desc->type),
                   dnn::read_scalar(beta, c_desc->type),
                   0,
                   0,
                   nullptr,
                   {}};
    return dnn::run_elementwise(handle, work);
}
