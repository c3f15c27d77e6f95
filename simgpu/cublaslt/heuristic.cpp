// cublasLtMatmulAlgoGetHeuristic: one algo per problem, using as much workspace as the preference
// allows up to kAlgoWorkspaceBytes. Real cuBLASLt ranks many candidates; a profiler only needs a
// valid algo whose workspace lies within the preference.
#include <cublasLt.h>

#include <algorithm>

#include "algo.h"
#include "handle.h"
#include "matmul_problem.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t preference,
    int requested_count, cublasLtMatmulHeuristicResult_t results[], int* returned_count) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (requested_count <= 0 || results == nullptr || returned_count == nullptr || preference == nullptr) {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    *returned_count = 0;
    tbdsim::cublaslt::MatmulProblem problem;
    if (const cublasStatus_t status = tbdsim::cublaslt::describe_problem(desc, a, b, c, d, &problem);
        status != CUBLAS_STATUS_SUCCESS) {
        return status;
    }
    const uint64_t workspace_bytes =
        std::min(tbdsim::cublaslt::state_of(preference)->max_workspace_bytes, tbdsim::cublaslt::kAlgoWorkspaceBytes);
    results[0] = cublasLtMatmulHeuristicResult_t{};
    results[0].algo = tbdsim::cublaslt::make_algo(workspace_bytes);
    results[0].workspaceSize = workspace_bytes;
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;  // not modelled: the simulated device has no occupancy model per kernel
    *returned_count = 1;
    return CUBLAS_STATUS_SUCCESS;
}
