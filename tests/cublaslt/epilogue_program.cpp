// cuBLASLt matmuls whose epilogues read or write buffers outside the argument list: GELU+bias with
// its aux output, the GELU backward with the bias gradient reading that aux, the bias gradient of B,
// and ReLU with its bit-mask aux output (FP32, m 256, n 128, k 64, aux ld 256). The bias vector and
// the aux matrix are allocations of their own (4 KiB and 1 MiB) so that a trace can tell them apart.
// Linked against the real toolkit's libcudart and libcublasLt; recorded on the simulated GPU
// (epilogue_operands.sh checks library_call_operands against these calls).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "epilogue_program: %s failed\n", what);
        std::exit(1);
    }
}

template <typename T>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T value) {
    require(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value) == CUBLAS_STATUS_SUCCESS,
            "cublasLtMatmulDescSetAttribute");
}

constexpr uint64_t kM = 256, kN = 128, kK = 64;

// D (m x n) = epilogue(A (m x k) B (k x n)), operands from `matrices`.
void run(cublasLtHandle_t handle, char* matrices, cublasLtEpilogue_t epilogue, void* bias, void* aux) {
    cublasLtMatmulDesc_t desc = nullptr;
    require(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS, "desc");
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(epilogue));
    if (bias != nullptr) set(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias));
    if (aux != nullptr) {
        set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux);
        set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t{kM});
    }
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    require(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, kM, kK, kM) == CUBLAS_STATUS_SUCCESS, "layout A");
    require(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, kK, kN, kK) == CUBLAS_STATUS_SUCCESS, "layout B");
    require(cublasLtMatrixLayoutCreate(&d, CUDA_R_32F, kM, kN, kM) == CUBLAS_STATUS_SUCCESS, "layout D");
    const float one = 1.0f, zero = 0.0f;
    char* A = matrices;
    char* B = matrices + (1u << 20);
    char* D = matrices + (2u << 20);
    require(cublasLtMatmul(handle, desc, &one, A, a, B, b, &zero, D, d, D, d, nullptr, nullptr, 0, nullptr) ==
                CUBLAS_STATUS_SUCCESS,
            "cublasLtMatmul");
    for (cublasLtMatrixLayout_t layout : {a, b, d}) cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(desc);
}

}  // namespace

int main() {
    void *matrices = nullptr, *bias = nullptr, *aux = nullptr;
    require(cudaMalloc(&matrices, 4u << 20) == cudaSuccess, "cudaMalloc matrices");
    require(cudaMalloc(&bias, 4096) == cudaSuccess, "cudaMalloc bias");
    require(cudaMalloc(&aux, 1u << 20) == cudaSuccess, "cudaMalloc aux");
    cublasLtHandle_t handle = nullptr;
    require(cublasLtCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasLtCreate");
    char* base = static_cast<char*>(matrices);
    run(handle, base, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, bias, aux);
    run(handle, base, CUBLASLT_EPILOGUE_DGELU_BGRAD, bias, aux);
    run(handle, base, CUBLASLT_EPILOGUE_BGRADB, bias, nullptr);
    run(handle, base, CUBLASLT_EPILOGUE_RELU_AUX, nullptr, aux);
    require(cudaDeviceSynchronize() == cudaSuccess, "synchronize");
    cublasLtDestroy(handle);
    cudaFree(aux);
    cudaFree(bias);
    cudaFree(matrices);
    return 0;
}
