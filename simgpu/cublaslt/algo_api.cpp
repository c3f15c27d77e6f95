// The algo queries of cuBLASLt: the ids of the algos for a type combination (one per combination the
// kernel catalog runs: the simulated library has one kernel family per precision), their
// initialization, capabilities and configuration attributes, and cublasLtMatmulAlgoCheck. An algo's
// configuration is stored and returned; the kernel a matmul runs is still the catalog's choice.
#include <cublasLt.h>

#include <cstring>

#include "algo.h"
#include "gemm_types.h"
#include "handle.h"
#include "matmul_problem.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using tbdsim::cublaslt::AlgoConfig;

// The one algo id of a type combination, if the catalog runs it.
bool supported_types(cublasComputeType_t compute_type, cudaDataType_t a_type, cudaDataType_t b_type,
                     cudaDataType_t c_type, cudaDataType_t d_type) {
    TbdsimPrecision precision = TBDSIM_PRECISION_FP32;
    tbdsim::blas::ScalarType scalar = tbdsim::blas::ScalarType::Float;
    return c_type == d_type &&
           tbdsim::blas::classify_gemm_types(a_type, b_type, d_type, compute_type, TBDSIM_PRECISION_FP32, &precision,
                                             &scalar) == CUBLAS_STATUS_SUCCESS;
}

// Copies `value` out as an attribute of its documented size (a size query when size is 0).
cublasStatus_t write_value(const void* value, size_t value_size, void* buf, size_t size, size_t* written) {
    if (size == 0) {
        if (written == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
        *written = value_size;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (buf == nullptr || size < value_size) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(buf, value, value_size);
    if (written != nullptr) *written = value_size;
    return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t write_scalar(T value, void* buf, size_t size, size_t* written) {
    if (size != 0 && size != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
    return write_value(&value, sizeof value, buf, size, written);
}

// Where each configuration attribute lives in AlgoConfig.
bool config_field(cublasLtMatmulAlgoConfigAttributes_t attribute, AlgoConfig& config, void** field, size_t* size) {
    switch (attribute) {
        case CUBLASLT_ALGO_CONFIG_ID:
            *field = &config.id, *size = sizeof config.id;
            return true;
        case CUBLASLT_ALGO_CONFIG_TILE_ID:
            *field = &config.tile, *size = sizeof config.tile;
            return true;
        case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
            *field = &config.splitk, *size = sizeof config.splitk;
            return true;
        case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME:
            *field = &config.reduction_scheme, *size = sizeof config.reduction_scheme;
            return true;
        case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
            *field = &config.cta_swizzling, *size = sizeof config.cta_swizzling;
            return true;
        case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION:
            *field = &config.custom_option, *size = sizeof config.custom_option;
            return true;
        case CUBLASLT_ALGO_CONFIG_STAGES_ID:
            *field = &config.stages, *size = sizeof config.stages;
            return true;
        case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
            *field = &config.inner_shape, *size = sizeof config.inner_shape;
            return true;
        case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID:
            *field = &config.cluster_shape, *size = sizeof config.cluster_shape;
            return true;
        default:
            return false;
    }
}

// Split-K algos sum partial products in the workspace; the others need none.
uint64_t workspace_for(const AlgoConfig& config) {
    return config.splitk > 1 ? tbdsim::cublaslt::kAlgoWorkspaceBytes : 0;
}

}  // namespace

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulAlgoGetIds(cublasLtHandle_t handle, cublasComputeType_t compute,
                                                               cudaDataType_t scale, cudaDataType_t a_type,
                                                               cudaDataType_t b_type, cudaDataType_t c_type,
                                                               cudaDataType_t d_type, int requested, int ids[],
                                                               int* returned) {
    (void)scale;
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (requested <= 0 || ids == nullptr || returned == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *returned = 0;
    if (supported_types(compute, a_type, b_type, c_type, d_type)) ids[(*returned)++] = 0;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t handle, cublasComputeType_t compute,
                                                             cudaDataType_t scale, cudaDataType_t a_type,
                                                             cudaDataType_t b_type, cudaDataType_t c_type,
                                                             cudaDataType_t d_type, int algo_id,
                                                             cublasLtMatmulAlgo_t* algo) {
    (void)scale;
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (algo == nullptr || algo_id != 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (!supported_types(compute, a_type, b_type, c_type, d_type)) return CUBLAS_STATUS_NOT_SUPPORTED;
    *algo = tbdsim::cublaslt::make_algo(0);
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                                              const cublasLtMatmulAlgo_t* algo,
                                                              cublasLtMatmulHeuristicResult_t* result) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (algo == nullptr || result == nullptr || !tbdsim::cublaslt::algo_workspace_bytes(*algo))
        return CUBLAS_STATUS_INVALID_VALUE;
    tbdsim::cublaslt::MatmulProblem problem;
    if (const cublasStatus_t status = tbdsim::cublaslt::describe_problem(desc, a, b, c, d, &problem);
        status != CUBLAS_STATUS_SUCCESS)
        return status;
    *result = cublasLtMatmulHeuristicResult_t{};
    result->algo = *algo;
    result->workspaceSize = *tbdsim::cublaslt::algo_workspace_bytes(*algo);
    result->state = CUBLAS_STATUS_SUCCESS;
    result->wavesCount = 1.0f;  // not modelled, as in the heuristic
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                                        cublasLtMatmulAlgoCapAttributes_t attribute,
                                                                        void* buf, size_t size, size_t* written) {
    if (algo == nullptr || !tbdsim::cublaslt::algo_workspace_bytes(*algo)) return CUBLAS_STATUS_INVALID_VALUE;
    static const uint32_t kTiles[] = {CUBLASLT_MATMUL_TILE_128x128};
    static const uint32_t kStages[] = {CUBLASLT_MATMUL_STAGES_32x3};
    // Every epilogue of cublasLtEpilogue_t is a bit or a union of bits below 1024.
    constexpr uint32_t kEpilogueMask = 0x3ff;
    switch (attribute) {
        case CUBLASLT_ALGO_CAP_SPLITK_SUPPORT:
            return write_scalar<int32_t>(1, buf, size, written);
        case CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK:
            return write_scalar<uint32_t>(CUBLASLT_REDUCTION_SCHEME_MASK, buf, size, written);
        case CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT:
            return write_scalar<uint32_t>(1, buf, size, written);
        case CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT:
        case CUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT:
            return write_scalar<int32_t>(1, buf, size, written);
        case CUBLASLT_ALGO_CAP_UPLO_SUPPORT:
        case CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX:
        case CUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER:
        case CUBLASLT_ALGO_CAP_LD_NEGATIVE:
        case CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT:
        case CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT:
            return write_scalar<int32_t>(0, buf, size, written);
        case CUBLASLT_ALGO_CAP_TILE_IDS:
            return write_value(kTiles, sizeof kTiles, buf, size, written);
        case CUBLASLT_ALGO_CAP_STAGES_IDS:
            return write_value(kStages, sizeof kStages, buf, size, written);
        case CUBLASLT_ALGO_CAP_POINTER_MODE_MASK:
            return write_scalar<uint32_t>(CUBLASLT_POINTER_MODE_MASK_HOST | CUBLASLT_POINTER_MODE_MASK_DEVICE, buf,
                                          size, written);
        case CUBLASLT_ALGO_CAP_EPILOGUE_MASK:
            return write_scalar<uint32_t>(kEpilogueMask, buf, size, written);
        case CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS:
            return write_scalar<uint64_t>(0, buf, size, written);
        case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES:
        case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES:
        case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES:
        case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES:
            return write_scalar<uint32_t>(4, buf, size, written);
        default:
            return CUBLAS_STATUS_INVALID_VALUE;
    }
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(
    cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attribute, const void* buf, size_t size) {
    if (algo == nullptr || buf == nullptr || !tbdsim::cublaslt::algo_workspace_bytes(*algo))
        return CUBLAS_STATUS_INVALID_VALUE;
    AlgoConfig config = tbdsim::cublaslt::algo_config(*algo);
    void* field = nullptr;
    size_t field_size = 0;
    if (!config_field(attribute, config, &field, &field_size) || size != field_size) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(field, buf, size);
    if (config.splitk == 0) return CUBLAS_STATUS_INVALID_VALUE;
    *algo = tbdsim::cublaslt::make_algo(workspace_for(config), config);
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t
cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attribute,
                                     void* buf, size_t size, size_t* written) {
    if (algo == nullptr || !tbdsim::cublaslt::algo_workspace_bytes(*algo)) return CUBLAS_STATUS_INVALID_VALUE;
    AlgoConfig config = tbdsim::cublaslt::algo_config(*algo);
    void* field = nullptr;
    size_t field_size = 0;
    if (!config_field(attribute, config, &field, &field_size)) return CUBLAS_STATUS_INVALID_VALUE;
    if (size != 0 && size != field_size) return CUBLAS_STATUS_INVALID_VALUE;
    return write_value(field, field_size, buf, size, written);
}
