// cublasLtMatmulDesc*: the operation's compute and scale types, transposes, pointer mode and
// epilogue. Values are checked when a matmul uses them, as cuBLASLt does.
#include <cublasLt.h>

#include <cstddef>
#include <iterator>

#include "attributes.h"
#include "descriptors.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

using tbdsim::cublaslt::AttributeSlot;
using tbdsim::cublaslt::MatmulDescState;

namespace {

#define TBDSIM_SLOT(attribute, field) \
    AttributeSlot { attribute, offsetof(MatmulDescState, field), sizeof(MatmulDescState::field) }

constexpr AttributeSlot kSlots[] = {
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute_type),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale_type),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_POINTER_MODE, pointer_mode),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_TRANSA, transa),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_TRANSB, transb),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_TRANSC, transc),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_FILL_MODE, fill_mode),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias_pointer),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, bias_batch_stride),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, epilogue_aux_pointer),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, epilogue_aux_ld),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, epilogue_aux_batch_stride),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, alpha_vector_batch_stride),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, sm_count_target),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_data_type),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, epilogue_aux_data_type),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale_pointer),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale_pointer),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, c_scale_pointer),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, d_scale_pointer),
    TBDSIM_SLOT(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, amax_d_pointer),
};

#undef TBDSIM_SLOT

}  // namespace

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t size,
                                                                      cublasComputeType_t compute_type,
                                                                      cudaDataType_t scale_type) {
    if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (size < sizeof(cublasLtMatmulDescOpaque_t)) return CUBLAS_STATUS_ALLOC_FAILED;
    auto* state = new (desc) MatmulDescState{};
    state->compute_type = compute_type;
    state->scale_type = scale_type;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc,
                                                               cublasComputeType_t compute_type,
                                                               cudaDataType_t scale_type) {
    return tbdsim::cublaslt::create_descriptor(desc, [&](cublasLtMatmulDesc_t storage) {
        return cublasLtMatmulDescInit_internal(storage, sizeof(*storage), compute_type, scale_type);
    });
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
    delete desc;  // the state is trivially destructible
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                                     cublasLtMatmulDescAttributes_t attribute,
                                                                     const void* buf, size_t size) {
    return tbdsim::cublaslt::set_attribute(tbdsim::cublaslt::state_of(desc), kSlots, attribute, buf, size);
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                                                     cublasLtMatmulDescAttributes_t attribute,
                                                                     void* buf, size_t size, size_t* written) {
    return tbdsim::cublaslt::get_attribute(tbdsim::cublaslt::state_of(desc), kSlots, attribute, buf, size, written);
}
