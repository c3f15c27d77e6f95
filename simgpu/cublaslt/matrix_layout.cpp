// cublasLtMatrixLayout*: type, order, shape, leading dimension and batching of one matrix. Only
// column-major, strided-batch, non-planar layouts can be multiplied (matmul_problem.cpp); the others
// can still be described and read back.
#include <cublasLt.h>

#include <cstddef>

#include "attributes.h"
#include "descriptors.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

using tbdsim::cublaslt::AttributeSlot;
using tbdsim::cublaslt::MatrixLayoutState;

namespace {

#define TBDSIM_SLOT(attribute, field) \
    AttributeSlot { attribute, offsetof(MatrixLayoutState, field), sizeof(MatrixLayoutState::field) }

constexpr AttributeSlot kSlots[] = {
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_TYPE, type),
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_ORDER, order),
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_ROWS, rows),
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_COLS, cols),
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_LD, ld),
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch_count),
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, strided_batch_offset),
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, plane_offset),
    TBDSIM_SLOT(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, batch_mode),
};

#undef TBDSIM_SLOT

}  // namespace

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t size,
                                                                        cudaDataType type, uint64_t rows,
                                                                        uint64_t cols, int64_t ld) {
    if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (size < sizeof(cublasLtMatrixLayoutOpaque_t)) return CUBLAS_STATUS_ALLOC_FAILED;
    auto* state = new (layout) MatrixLayoutState{};
    state->type = static_cast<uint32_t>(type);
    state->rows = rows;
    state->cols = cols;
    state->ld = ld;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                                                 uint64_t rows, uint64_t cols, int64_t ld) {
    return tbdsim::cublaslt::create_descriptor(layout, [&](cublasLtMatrixLayout_t storage) {
        return cublasLtMatrixLayoutInit_internal(storage, sizeof(*storage), type, rows, cols, ld);
    });
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
    delete layout;  // the state is trivially destructible
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                                       cublasLtMatrixLayoutAttribute_t attribute,
                                                                       const void* buf, size_t size) {
    return tbdsim::cublaslt::set_attribute(tbdsim::cublaslt::state_of(layout), kSlots, attribute, buf, size);
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout,
                                                                       cublasLtMatrixLayoutAttribute_t attribute,
                                                                       void* buf, size_t size, size_t* written) {
    return tbdsim::cublaslt::get_attribute(tbdsim::cublaslt::state_of(layout), kSlots, attribute, buf, size,
                                           written);
}
