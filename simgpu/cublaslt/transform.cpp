// cublasLtMatrixTransform and its descriptor: C = alpha op(A) + beta op(B), where the layouts may
// differ in order (the routine's main use: changing a matrix's memory order) and batch. One kernel
// per call on the caller's stream, timed as a roofline of 3 FLOPs per element of C (two products, one
// sum) and the bytes of A, B (when beta is not zero) and C.
#include <cublasLt.h>

#include <algorithm>
#include <cstddef>
#include <new>
#include <string>

#include "attributes.h"
#include "descriptors.h"
#include "gemm_types.h"
#include "handle.h"
#include "routine_params.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using tbdsim::cublaslt::AttributeSlot;

struct TransformState {
    int32_t scale_type;
    int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
    int32_t transa = CUBLAS_OP_N;
    int32_t transb = CUBLAS_OP_N;
};
static_assert(sizeof(TransformState) <= sizeof(cublasLtMatrixTransformDescOpaque_t));

TransformState* state_of(cublasLtMatrixTransformDesc_t desc) {
    return desc != nullptr ? std::launder(reinterpret_cast<TransformState*>(desc)) : nullptr;
}

#define TBDSIM_SLOT(attribute, field)                                             \
    AttributeSlot {                                                               \
        attribute, offsetof(TransformState, field), sizeof(TransformState::field) \
    }
constexpr AttributeSlot kSlots[] = {
    TBDSIM_SLOT(CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, scale_type),
    TBDSIM_SLOT(CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, pointer_mode),
    TBDSIM_SLOT(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, transa),
    TBDSIM_SLOT(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, transb),
};
#undef TBDSIM_SLOT

// The kernel's type letter (kernels.cu), or 0 for a type the simulator does not model.
char type_letter(uint32_t type) {
    switch (type) {
        case CUDA_R_32F:
            return 's';
        case CUDA_R_64F:
            return 'd';
        case CUDA_C_32F:
            return 'c';
        case CUDA_C_64F:
            return 'z';
        case CUDA_R_16F:
            return 'h';
        case CUDA_R_16BF:
            return 't';
        case CUDA_R_8I:
            return 'i';
        default:
            return 0;
    }
}

size_t element_bytes(uint32_t type) {
    switch (type) {
        case CUDA_C_64F:
            return 16;
        case CUDA_R_64F:
        case CUDA_C_32F:
            return 8;
        case CUDA_R_16F:
        case CUDA_R_16BF:
            return 2;
        case CUDA_R_8I:
            return 1;
        default:
            return 4;
    }
}

// op(X) must have C's shape.
bool shape_matches(const tbdsim::cublaslt::MatrixLayoutState& x, int32_t op,
                   const tbdsim::cublaslt::MatrixLayoutState& c) {
    const bool transposed = op != CUBLAS_OP_N;
    return (transposed ? x.cols : x.rows) == c.rows && (transposed ? x.rows : x.cols) == c.cols;
}

}  // namespace

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixTransformDescInit_internal(cublasLtMatrixTransformDesc_t desc,
                                                                               size_t size, cudaDataType scale_type) {
    if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (size < sizeof(cublasLtMatrixTransformDescOpaque_t)) return CUBLAS_STATUS_ALLOC_FAILED;
    new (desc) TransformState{scale_type};
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixTransformDescCreate(cublasLtMatrixTransformDesc_t* desc,
                                                                        cudaDataType scale_type) {
    return tbdsim::cublaslt::create_descriptor(desc, [&](cublasLtMatrixTransformDesc_t storage) {
        return cublasLtMatrixTransformDescInit_internal(storage, sizeof(*storage), scale_type);
    });
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixTransformDescDestroy(cublasLtMatrixTransformDesc_t desc) {
    delete desc;  // the state is trivially destructible
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixTransformDescSetAttribute(
    cublasLtMatrixTransformDesc_t desc, cublasLtMatrixTransformDescAttributes_t attribute, const void* buf,
    size_t size) {
    return tbdsim::cublaslt::set_attribute(state_of(desc), kSlots, attribute, buf, size);
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixTransformDescGetAttribute(
    cublasLtMatrixTransformDesc_t desc, cublasLtMatrixTransformDescAttributes_t attribute, void* buf, size_t size,
    size_t* written) {
    return tbdsim::cublaslt::get_attribute(state_of(desc), kSlots, attribute, buf, size, written);
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixTransform(cublasLtHandle_t handle,
                                                              cublasLtMatrixTransformDesc_t desc, const void* alpha,
                                                              const void* A, cublasLtMatrixLayout_t a_desc,
                                                              const void* beta, const void* B,
                                                              cublasLtMatrixLayout_t b_desc, void* C,
                                                              cublasLtMatrixLayout_t c_desc, cudaStream_t stream) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const TransformState* state = state_of(desc);
    const auto* a = tbdsim::cublaslt::state_of(a_desc);
    const auto* b = tbdsim::cublaslt::state_of(b_desc);
    const auto* c = tbdsim::cublaslt::state_of(c_desc);
    if (state == nullptr || c == nullptr || alpha == nullptr || beta == nullptr || C == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
    // B takes part unless beta is zero (only knowable for host scalars).
    const bool host_beta_zero = state->pointer_mode == CUBLASLT_POINTER_MODE_HOST &&
                                tbdsim::blas::read_host_scalar(
                                    beta, state->scale_type == CUDA_R_64F   ? tbdsim::blas::ScalarType::Double
                                          : state->scale_type == CUDA_R_16F ? tbdsim::blas::ScalarType::Half
                                                                            : tbdsim::blas::ScalarType::Float) == 0.0;
    const bool uses_b = !host_beta_zero;
    if (a == nullptr || !shape_matches(*a, state->transa, *c)) return CUBLAS_STATUS_INVALID_VALUE;
    if (uses_b && (b == nullptr || B == nullptr || !shape_matches(*b, state->transb, *c)))
        return CUBLAS_STATUS_INVALID_VALUE;
    const char letter = type_letter(c->type);
    if (letter == 0) return CUBLAS_STATUS_NOT_SUPPORTED;
    const double elements = static_cast<double>(c->rows) * static_cast<double>(c->cols) * std::max(1, c->batch_count);
    if (elements == 0) return CUBLAS_STATUS_SUCCESS;

    CUfunction function = nullptr;
    const std::string name = std::string("matrix_transform_kernel_") + letter;
    if (handle->driver->module_get_function(&function, handle->module, name.c_str()) != CUDA_SUCCESS)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    TbdsimRoutineParams params{};
    params.a = A, params.b = uses_b ? B : nullptr, params.c = C;
    params.alpha = state->pointer_mode == CUBLASLT_POINTER_MODE_DEVICE ? alpha : nullptr;
    params.beta = state->pointer_mode == CUBLASLT_POINTER_MODE_DEVICE ? beta : nullptr;
    params.m = static_cast<long long>(c->rows), params.n = static_cast<long long>(c->cols);
    params.lda = a->ld, params.ldb = uses_b ? b->ld : 0, params.ldc = c->ld;
    params.batch_count = c->batch_count, params.trans = state->transa;
    const double bytes = elements * (static_cast<double>(element_bytes(a->type)) +
                                     (uses_b ? static_cast<double>(element_bytes(b->type)) : 0.0) +
                                     static_cast<double>(element_bytes(c->type)));
    const TbdsimPrivateApi* api = handle->driver->private_api;
    if (api != nullptr && api->struct_size >= sizeof(TbdsimPrivateApi))
        api->annotate_next_launch_roofline(
            3 * elements, letter == 'd' || letter == 'z' ? TBDSIM_PRECISION_FP64 : TBDSIM_PRECISION_FP32, bytes);
    constexpr double kThreads = 256;
    const auto blocks = static_cast<unsigned>(std::clamp(elements / kThreads, 1.0, 65535.0));
    void* arguments[] = {&params};
    return handle->driver->launch_kernel(function, blocks, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(stream),
                                         arguments, nullptr) == CUDA_SUCCESS
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}
