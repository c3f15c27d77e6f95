// What the simulated cuBLASLt keeps in its descriptors. The real API hands out pointers to
// "semi-opaque" fixed-size structs (cublasLtMatmulDescOpaque_t ...) that callers may also allocate
// themselves and fill with the *Init functions, so each state is constructed inside that storage and
// must fit in it.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <new>

namespace tbdsim::cublaslt {

struct MatmulDescState {
    int32_t compute_type;  // cublasComputeType_t
    int32_t scale_type;    // cudaDataType
    int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
    int32_t transa = CUBLAS_OP_N;
    int32_t transb = CUBLAS_OP_N;
    int32_t transc = CUBLAS_OP_N;
    int32_t fill_mode = CUBLAS_FILL_MODE_FULL;
    uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    const void* bias_pointer = nullptr;
    int64_t bias_batch_stride = 0;
    void* epilogue_aux_pointer = nullptr;
    int64_t epilogue_aux_ld = 0;
    int64_t epilogue_aux_batch_stride = 0;
    int64_t alpha_vector_batch_stride = 0;
    int32_t sm_count_target = 0;
    int32_t bias_data_type = -1;          // -1: the type of D
    int32_t epilogue_aux_data_type = -1;
    int8_t fast_accum = 0;
    // FP8 scaling and amax pointers: stored and returned, not modelled.
    const void* a_scale_pointer = nullptr;
    const void* b_scale_pointer = nullptr;
    const void* c_scale_pointer = nullptr;
    const void* d_scale_pointer = nullptr;
    void* amax_d_pointer = nullptr;
};
static_assert(sizeof(MatmulDescState) <= sizeof(cublasLtMatmulDescOpaque_t));

struct MatrixLayoutState {
    uint32_t type;  // cudaDataType
    int32_t order = CUBLASLT_ORDER_COL;
    uint64_t rows;
    uint64_t cols;
    int64_t ld;
    int64_t strided_batch_offset = 0;  // elements
    int64_t plane_offset = 0;
    int32_t batch_count = 1;
    uint32_t batch_mode = CUBLASLT_BATCH_MODE_STRIDED;
};
static_assert(sizeof(MatrixLayoutState) <= sizeof(cublasLtMatrixLayoutOpaque_t));

struct PreferenceState {
    uint32_t search_mode = 0;
    uint32_t reduction_scheme_mask = 0xff;
    uint64_t max_workspace_bytes = 0;  // documented default: no workspace
    uint32_t min_alignment_a = 256, min_alignment_b = 256, min_alignment_c = 256, min_alignment_d = 256;
    float max_waves_count = 0.0f;
    uint64_t impl_mask = ~uint64_t{0};
};
static_assert(sizeof(PreferenceState) <= sizeof(cublasLtMatmulPreferenceOpaque_t));

// The state living in a descriptor constructed by our Create or Init (null stays null).
inline MatmulDescState* state_of(cublasLtMatmulDesc_t desc) {
    return desc != nullptr ? std::launder(reinterpret_cast<MatmulDescState*>(desc)) : nullptr;
}
inline MatrixLayoutState* state_of(cublasLtMatrixLayout_t layout) {
    return layout != nullptr ? std::launder(reinterpret_cast<MatrixLayoutState*>(layout)) : nullptr;
}
inline PreferenceState* state_of(cublasLtMatmulPreference_t preference) {
    return preference != nullptr ? std::launder(reinterpret_cast<PreferenceState*>(preference)) : nullptr;
}

}  // namespace tbdsim::cublaslt

namespace tbdsim::cublaslt {

// Create = fresh storage + Init, as the real library pairs them.
template <typename Opaque, typename Init>
cublasStatus_t create_descriptor(Opaque** out, Init&& init) {
    if (out == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *out = nullptr;
    auto* storage = new (std::nothrow) Opaque{};
    if (storage == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
    if (const cublasStatus_t status = init(storage); status != CUBLAS_STATUS_SUCCESS) {
        delete storage;
        return status;
    }
    *out = storage;
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace tbdsim::cublaslt
