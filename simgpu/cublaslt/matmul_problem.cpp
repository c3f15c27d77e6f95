#include "matmul_problem.h"

#include <algorithm>

namespace tbdsim::cublaslt {
namespace {

bool valid_operation(int32_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

// What we can multiply: plain column-major matrices, batched by stride.
bool modelled_layout(const MatrixLayoutState& layout) {
    return layout.order == CUBLASLT_ORDER_COL && layout.batch_mode == CUBLASLT_BATCH_MODE_STRIDED &&
           layout.plane_offset == 0;
}

bool valid_leading_dimension(const MatrixLayoutState& layout) {
    return layout.ld >= std::max<int64_t>(1, static_cast<int64_t>(layout.rows));
}

// The scale type (alpha, beta) each compute type takes, as the cuBLASLt documentation lists it.
bool scale_type_matches(int32_t compute_type, int32_t scale_type, blas::ScalarType* scalar_type) {
    switch (compute_type) {
        case CUBLAS_COMPUTE_16F:
        case CUBLAS_COMPUTE_16F_PEDANTIC:
            *scalar_type = blas::ScalarType::Half;
            return scale_type == CUDA_R_16F;
        case CUBLAS_COMPUTE_64F:
        case CUBLAS_COMPUTE_64F_PEDANTIC:
        case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
            *scalar_type = blas::ScalarType::Double;
            return scale_type == CUDA_R_64F;
        default:
            *scalar_type = blas::ScalarType::Float;
            return scale_type == CUDA_R_32F;
    }
}

struct EpilogueKind {
    uint32_t value;        // cublasLtEpilogue_t
    blas::Epilogue kernel;
    bool bias;             // reads (or, for the gradients, writes) the bias vector
    bool aux;              // writes (forward) or reads (backward) the aux matrix
};

constexpr EpilogueKind kEpilogues[] = {
    {CUBLASLT_EPILOGUE_DEFAULT, blas::Epilogue::None, false, false},
    {CUBLASLT_EPILOGUE_RELU, blas::Epilogue::Relu, false, false},
    {CUBLASLT_EPILOGUE_BIAS, blas::Epilogue::Bias, true, false},
    {CUBLASLT_EPILOGUE_RELU_BIAS, blas::Epilogue::ReluBias, true, false},
    {CUBLASLT_EPILOGUE_RELU_AUX, blas::Epilogue::ReluAux, false, true},
    {CUBLASLT_EPILOGUE_RELU_AUX_BIAS, blas::Epilogue::ReluAuxBias, true, true},
    {CUBLASLT_EPILOGUE_GELU, blas::Epilogue::Gelu, false, false},
    {CUBLASLT_EPILOGUE_GELU_AUX, blas::Epilogue::GeluAux, false, true},
    {CUBLASLT_EPILOGUE_GELU_BIAS, blas::Epilogue::GeluBias, true, false},
    {CUBLASLT_EPILOGUE_GELU_AUX_BIAS, blas::Epilogue::GeluAuxBias, true, true},
    {CUBLASLT_EPILOGUE_DRELU, blas::Epilogue::DRelu, false, true},
    {CUBLASLT_EPILOGUE_DRELU_BGRAD, blas::Epilogue::DReluBgrad, true, true},
    {CUBLASLT_EPILOGUE_DGELU, blas::Epilogue::DGelu, false, true},
    {CUBLASLT_EPILOGUE_DGELU_BGRAD, blas::Epilogue::DGeluBgrad, true, true},
    {CUBLASLT_EPILOGUE_BGRADA, blas::Epilogue::BgradA, true, false},
    {CUBLASLT_EPILOGUE_BGRADB, blas::Epilogue::BgradB, true, false},
};

// Every documented epilogue; those with a bias need its pointer, those with an aux matrix its
// pointer and a leading dimension of at least D's rows.
cublasStatus_t epilogue_of(const MatmulDescState& desc, uint64_t rows, blas::Epilogue* epilogue) {
    for (const EpilogueKind& kind : kEpilogues) {
        if (kind.value != desc.epilogue) continue;
        if (kind.bias && desc.bias_pointer == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
        if (kind.aux && (desc.epilogue_aux_pointer == nullptr || desc.epilogue_aux_ld < static_cast<int64_t>(rows)))
            return CUBLAS_STATUS_INVALID_VALUE;
        *epilogue = kind.kernel;
        return CUBLAS_STATUS_SUCCESS;
    }
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

}  // namespace

bool epilogue_has_bias(blas::Epilogue epilogue) {
    for (const EpilogueKind& kind : kEpilogues)
        if (kind.kernel == epilogue) return kind.bias;
    return false;
}

bool epilogue_has_aux(blas::Epilogue epilogue) {
    for (const EpilogueKind& kind : kEpilogues)
        if (kind.kernel == epilogue) return kind.aux;
    return false;
}

cublasStatus_t describe_problem(cublasLtMatmulDesc_t desc_handle, cublasLtMatrixLayout_t a_handle,
                                cublasLtMatrixLayout_t b_handle, cublasLtMatrixLayout_t c_handle,
                                cublasLtMatrixLayout_t d_handle, MatmulProblem* out) {
    const MatmulDescState* desc = state_of(desc_handle);
    const MatrixLayoutState* a = state_of(a_handle);
    const MatrixLayoutState* b = state_of(b_handle);
    const MatrixLayoutState* c = state_of(c_handle);
    const MatrixLayoutState* d = state_of(d_handle);
    if (desc == nullptr || a == nullptr || b == nullptr || c == nullptr || d == nullptr) {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (!valid_operation(desc->transa) || !valid_operation(desc->transb)) return CUBLAS_STATUS_INVALID_VALUE;
    if (desc->transc != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED;  // documented: only N
    for (const MatrixLayoutState* layout : {a, b, c, d}) {
        if (!modelled_layout(*layout)) return CUBLAS_STATUS_NOT_SUPPORTED;
    }

    // D is m x n; op(A) must be m x k, op(B) k x n and C like D.
    const bool transpose_a = desc->transa != CUBLAS_OP_N;
    const bool transpose_b = desc->transb != CUBLAS_OP_N;
    const uint64_t m = d->rows, n = d->cols;
    const uint64_t k = transpose_a ? a->rows : a->cols;
    const uint64_t a_rows = transpose_a ? a->cols : a->rows;
    const uint64_t b_rows = transpose_b ? b->cols : b->rows;
    const uint64_t b_cols = transpose_b ? b->rows : b->cols;
    if (a_rows != m || b_rows != k || b_cols != n || c->rows != m || c->cols != n) return CUBLAS_STATUS_INVALID_VALUE;
    for (const MatrixLayoutState* layout : {a, b, c, d}) {
        if (!valid_leading_dimension(*layout)) return CUBLAS_STATUS_INVALID_VALUE;
        if (layout->batch_count != d->batch_count) return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (d->batch_count < 1) return CUBLAS_STATUS_INVALID_VALUE;

    // Types: C and D alike; A, B and D must be a combination the compute type accepts.
    if (c->type != d->type) return CUBLAS_STATUS_NOT_SUPPORTED;
    MatmulProblem problem;
    if (const cublasStatus_t status = blas::classify_gemm_types(
            static_cast<cudaDataType>(a->type), static_cast<cudaDataType>(b->type), static_cast<cudaDataType>(d->type),
            static_cast<cublasComputeType_t>(desc->compute_type), TBDSIM_PRECISION_FP32, &problem.precision,
            &problem.scalar_type);
        status != CUBLAS_STATUS_SUCCESS) {
        return status;
    }
    if (!scale_type_matches(desc->compute_type, desc->scale_type, &problem.scalar_type)) {
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (desc->pointer_mode != CUBLASLT_POINTER_MODE_HOST && desc->pointer_mode != CUBLASLT_POINTER_MODE_DEVICE) {
        return CUBLAS_STATUS_NOT_SUPPORTED;  // per-row alpha vectors are not modelled
    }
    if (const cublasStatus_t status = epilogue_of(*desc, m, &problem.epilogue); status != CUBLAS_STATUS_SUCCESS) {
        return status;
    }

    problem.m = static_cast<int64_t>(m);
    problem.n = static_cast<int64_t>(n);
    problem.k = static_cast<int64_t>(k);
    problem.batch = d->batch_count;
    problem.desc = desc;
    problem.a = a;
    problem.b = b;
    problem.c = c;
    problem.d = d;
    *out = problem;
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace tbdsim::cublaslt
