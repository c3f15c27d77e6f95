// cublasLtMatmulPreference*: what the heuristic may choose. Only the workspace limit changes our
// answer (heuristic.cpp); the other preferences are stored and read back.
#include <cublasLt.h>

#include <cstddef>

#include "attributes.h"
#include "descriptors.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

using tbdsim::cublaslt::AttributeSlot;
using tbdsim::cublaslt::PreferenceState;

namespace {

#define TBDSIM_SLOT(attribute, field) \
    AttributeSlot { attribute, offsetof(PreferenceState, field), sizeof(PreferenceState::field) }

constexpr AttributeSlot kSlots[] = {
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_SEARCH_MODE, search_mode),
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, max_workspace_bytes),
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, reduction_scheme_mask),
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, min_alignment_a),
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, min_alignment_b),
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, min_alignment_c),
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, min_alignment_d),
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, max_waves_count),
    TBDSIM_SLOT(CUBLASLT_MATMUL_PREF_IMPL_MASK, impl_mask),
};

#undef TBDSIM_SLOT

}  // namespace

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t preference,
                                                                            size_t size) {
    if (preference == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (size < sizeof(cublasLtMatmulPreferenceOpaque_t)) return CUBLAS_STATUS_ALLOC_FAILED;
    new (preference) PreferenceState{};
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* preference) {
    return tbdsim::cublaslt::create_descriptor(preference, [](cublasLtMatmulPreference_t storage) {
        return cublasLtMatmulPreferenceInit_internal(storage, sizeof(*storage));
    });
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) {
    delete preference;  // the state is trivially destructible
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t preference, cublasLtMatmulPreferenceAttributes_t attribute, const void* buf,
    size_t size) {
    return tbdsim::cublaslt::set_attribute(tbdsim::cublaslt::state_of(preference), kSlots, attribute, buf, size);
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulPreferenceGetAttribute(
    cublasLtMatmulPreference_t preference, cublasLtMatmulPreferenceAttributes_t attribute, void* buf, size_t size,
    size_t* written) {
    return tbdsim::cublaslt::get_attribute(tbdsim::cublaslt::state_of(preference), kSlots, attribute, buf, size,
                                           written);
}
