// cublasLtMatmul: D = epilogue(alpha * op(A) * op(B) + beta * C), launched on the caller's stream
// with the caller's workspace through the shared GEMM launcher, so the driver's ground truth gets
// one kernel (per 65535 batch entries) annotated with 2*m*n*k*batch FLOPs and the bytes it moves.
// Every documented epilogue has its fused kernel variant; it adds no FLOPs (cuBLAS's count has none
// for it either), only the bytes of its bias vector and aux matrix.
#include <cublasLt.h>

#include "algo.h"
#include "handle.h"
#include "kernel_launch.h"
#include "matmul_problem.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using tbdsim::cublaslt::MatmulProblem;

// The workspace checks: a tagged algo needs its workspace; a size without a buffer is an error.
cublasStatus_t check_workspace(const cublasLtMatmulAlgo_t* algo, const void* workspace, size_t workspace_bytes) {
    if (workspace == nullptr && workspace_bytes != 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (algo != nullptr) {
        const auto needed = tbdsim::cublaslt::algo_workspace_bytes(*algo);
        if (needed && *needed > workspace_bytes) return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

// What an epilogue moves per batch entry: the bias vector (D's rows; B's columns for BGRADB), and
// the aux matrix (a bit per element for the ReLU masks, elements of the aux type otherwise).
double epilogue_bytes(const MatmulProblem& problem) {
    using tbdsim::blas::Epilogue;
    const auto m = static_cast<double>(problem.m), n = static_cast<double>(problem.n);
    const auto type_bytes = [&](int32_t type) {
        return static_cast<double>(tbdsim::blas::element_bytes_of(
            static_cast<cudaDataType>(type >= 0 ? type : static_cast<int32_t>(problem.d->type))));
    };
    double bytes = 0;
    if (tbdsim::cublaslt::epilogue_has_bias(problem.epilogue))
        bytes += (problem.epilogue == Epilogue::BgradB ? n : m) * type_bytes(problem.desc->bias_data_type);
    if (tbdsim::cublaslt::epilogue_has_aux(problem.epilogue)) {
        const bool relu_mask = problem.epilogue == Epilogue::ReluAux || problem.epilogue == Epilogue::ReluAuxBias ||
                               problem.epilogue == Epilogue::DRelu || problem.epilogue == Epilogue::DReluBgrad;
        bytes += relu_mask ? m * n / 8 : m * n * type_bytes(problem.desc->epilogue_aux_data_type);
    }
    return bytes;
}

tbdsim::blas::GemmLaunch describe_launch(const MatmulProblem& problem, const void* alpha, const void* beta) {
    tbdsim::blas::GemmLaunch launch;
    TbdsimGemmParams& params = launch.params;
    params.m = problem.m;
    params.n = problem.n;
    params.k = problem.k;
    params.lda = problem.a->ld;
    params.ldb = problem.b->ld;
    params.ldc = problem.c->ld;
    params.ldd = problem.d->ld;
    params.stride_a = problem.a->strided_batch_offset;
    params.stride_b = problem.b->strided_batch_offset;
    params.stride_c = problem.c->strided_batch_offset;
    params.stride_d = problem.d->strided_batch_offset;
    params.transa = problem.desc->transa;
    params.transb = problem.desc->transb;
    params.pointer_mode = problem.desc->pointer_mode;
    if (problem.desc->pointer_mode == CUBLASLT_POINTER_MODE_HOST) {
        params.alpha = tbdsim::blas::read_host_scalar(alpha, problem.scalar_type);
        params.beta = tbdsim::blas::read_host_scalar(beta, problem.scalar_type);
    } else {
        params.alpha_ptr = alpha;
        params.beta_ptr = beta;
    }
    params.epilogue = problem.desc->epilogue;
    params.bias_batch_stride = problem.desc->bias_batch_stride;
    launch.a_element_bytes = tbdsim::blas::element_bytes_of(static_cast<cudaDataType>(problem.a->type));
    launch.b_element_bytes = tbdsim::blas::element_bytes_of(static_cast<cudaDataType>(problem.b->type));
    launch.c_element_bytes = tbdsim::blas::element_bytes_of(static_cast<cudaDataType>(problem.c->type));
    launch.d_element_bytes = tbdsim::blas::element_bytes_of(static_cast<cudaDataType>(problem.d->type));
    launch.batch_count = problem.batch;
    launch.precision = problem.precision;
    launch.epilogue = problem.epilogue;
    launch.epilogue_bytes = epilogue_bytes(problem);
    if (tbdsim::cublaslt::epilogue_has_bias(problem.epilogue)) launch.bias = problem.desc->bias_pointer;
    if (tbdsim::cublaslt::epilogue_has_aux(problem.epilogue)) params.epilogue_aux = problem.desc->epilogue_aux_pointer;
    return launch;
}

}  // namespace

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                                     const void* alpha, const void* A, cublasLtMatrixLayout_t a_desc,
                                                     const void* B, cublasLtMatrixLayout_t b_desc, const void* beta,
                                                     const void* C, cublasLtMatrixLayout_t c_desc, void* D,
                                                     cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t* algo,
                                                     void* workspace, size_t workspace_bytes, cudaStream_t stream) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    MatmulProblem problem;
    if (const cublasStatus_t status =
            tbdsim::cublaslt::describe_problem(desc, a_desc, b_desc, c_desc, d_desc, &problem);
        status != CUBLAS_STATUS_SUCCESS) {
        return status;
    }
    if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (const cublasStatus_t status = check_workspace(algo, workspace, workspace_bytes);
        status != CUBLAS_STATUS_SUCCESS) {
        return status;
    }
    if (problem.m == 0 || problem.n == 0) return CUBLAS_STATUS_SUCCESS;  // nothing to compute or store

    tbdsim::blas::GemmLaunch launch = describe_launch(problem, alpha, beta);
    launch.params.workspace = workspace;
    launch.params.workspace_bytes = workspace_bytes;
    launch.a = A;
    launch.b = B;
    launch.c = const_cast<void*>(C);
    launch.d = D;
    launch.stream = reinterpret_cast<CUstream>(stream);
    return tbdsim::blas::launch_gemm(*handle->driver, handle->kernels, launch) == CUDA_SUCCESS
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}
