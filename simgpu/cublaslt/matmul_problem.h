// A cublasLtMatmul problem as the descriptors describe it, checked the way cuBLASLt checks it: the
// shapes (op(A) m x k, op(B) k x n, C and D m x n), batching, types and epilogue. Shared by the
// heuristic and the matmul itself, so both refuse the same problems with the same status.
#pragma once

#include <cublasLt.h>
#include <simgpu/private_api.h>

#include <cstdint>

#include "descriptors.h"
#include "gemm_types.h"
#include "kernel_catalog.h"

namespace tbdsim::cublaslt {

struct MatmulProblem {
    int64_t m = 0, n = 0, k = 0, batch = 1;
    const MatmulDescState* desc = nullptr;
    const MatrixLayoutState* a = nullptr;
    const MatrixLayoutState* b = nullptr;
    const MatrixLayoutState* c = nullptr;
    const MatrixLayoutState* d = nullptr;
    TbdsimPrecision precision = TBDSIM_PRECISION_FP32;
    blas::ScalarType scalar_type = blas::ScalarType::Float;
    blas::Epilogue epilogue = blas::Epilogue::None;
};

// Whether an epilogue reads or writes the bias vector, and the aux matrix (matmul_problem.cpp's table).
bool epilogue_has_bias(blas::Epilogue epilogue);
bool epilogue_has_aux(blas::Epilogue epilogue);

// SUCCESS and `out` filled, or the status cublasLtMatmul returns for these descriptors:
// INVALID_VALUE for missing descriptors, bad transposes, mismatched shapes or batch counts, leading
// dimensions below the row count and a bias epilogue without a bias, an aux epilogue without its matrix; NOT_SUPPORTED for what we do not
// model (orders other than column-major, pointer-array or planar batches, type combinations, vector
// pointer modes).
cublasStatus_t describe_problem(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, MatmulProblem* out);

}  // namespace tbdsim::cublaslt
