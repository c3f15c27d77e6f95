// The CUDA runtime, cuBLAS and cuBLASLt calls of the styled samples, executed on host memory (see
// host_prelude.h). Device memory is host memory, every stream is the one host thread, GEMMs are
// reference loops with cuBLAS's column-major semantics. Only what the samples call is here; anything
// else fails to link, which is the point: the host build must not silently skip work.
#include "host_prelude.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>

extern "C" {
uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;
int warpSize = 32;
}

namespace {

int g_fake_object;  // streams and handles point here: they carry no state

cudaError_t allocate(void** pointer, size_t bytes) {
    *pointer = std::malloc(bytes ? bytes : 1);
    return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
}

// Column-major D[m, n] = alpha op(A) op(B) + beta C, element types through load/store functions.
template <typename Load, typename Store>
void reference_gemm(bool ta, bool tb, int m, int n, int k, float alpha, Load a, int lda, Load b, int ldb, float beta,
                    Load c, int ldc, Store d, int ldd) {
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            float sum = 0;
            for (int p = 0; p < k; ++p) {
                float av = ta ? a(p + long(i) * lda) : a(i + long(p) * lda);
                float bv = tb ? b(j + long(p) * ldb) : b(p + long(j) * ldb);
                sum += av * bv;
            }
            // beta == 0: C is not read (it may hold anything), as cuBLAS documents
            d(i + long(j) * ldd, alpha * sum + (beta != 0.0f ? beta * c(i + long(j) * ldc) : 0.0f));
        }
}

void sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
           float beta, float* c, int ldc) {
    auto load_a = [a](long i) { return a[i]; };
    auto load_b = [b](long i) { return b[i]; };
    auto load_c = [c](long i) { return c[i]; };
    auto store = [c](long i, float v) { c[i] = v; };
    reference_gemm(ta, tb, m, n, k, alpha, std::function<float(long)>(load_a), lda, std::function<float(long)>(load_b),
                   ldb, beta, std::function<float(long)>(load_c), ldc, store, ldc);
}

struct MatmulDesc {
    cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    const void* bias = nullptr;
};
struct Layout {
    cudaDataType type;
    long rows, cols, ld;
};

std::function<float(long)> loader(const void* data, cudaDataType type) {
    if (type == CUDA_R_16BF) {
        auto p = static_cast<const __nv_bfloat16*>(data);
        return [p](long i) { return __bfloat162float(p[i]); };
    }
    auto p = static_cast<const float*>(data);
    return [p](long i) { return p[i]; };
}

}  // namespace

extern "C" {

cudaError_t CUDARTAPI cudaMalloc(void** pointer, size_t bytes) {
    return allocate(pointer, bytes);
}
cudaError_t CUDARTAPI cudaMallocHost(void** pointer, size_t bytes) {
    return allocate(pointer, bytes);
}
cudaError_t CUDARTAPI cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t) {
    return allocate(pointer, bytes);
}
cudaError_t CUDARTAPI cudaFree(void* pointer) {
    std::free(pointer);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFreeHost(void* pointer) {
    return cudaFree(pointer);
}
cudaError_t CUDARTAPI cudaFreeAsync(void* pointer, cudaStream_t) {
    return cudaFree(pointer);
}
cudaError_t CUDARTAPI cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
    std::memmove(to, from, bytes);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
    return cudaMemcpy(to, from, bytes, kind);
}
cudaError_t CUDARTAPI cudaMemset(void* pointer, int value, size_t bytes) {
    std::memset(pointer, value, bytes);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t) {
    return cudaMemset(pointer, value, bytes);
}
cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* stream) {
    *stream = reinterpret_cast<cudaStream_t>(&g_fake_object);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
    return cudaStreamCreate(stream);
}
cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t) {
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t) {
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaDeviceSynchronize(void) {
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaGetLastError(void) {
    return cudaSuccess;
}
const char* CUDARTAPI cudaGetErrorString(cudaError_t error) {
    return error == cudaSuccess ? "no error" : "error";
}
const char* CUDARTAPI cudaGetErrorName(cudaError_t error) {
    return error == cudaSuccess ? "cudaSuccess" : "cudaError";
}

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
    *handle = reinterpret_cast<cublasHandle_t>(&g_fake_object);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t) {
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t, cudaStream_t) {
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t, cublasMath_t) {
    return CUBLAS_STATUS_SUCCESS;
}
// Scalars are read through host pointers only (the samples pass alpha and beta from the host).
cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t, cublasPointerMode_t mode) {
    return mode == CUBLAS_POINTER_MODE_HOST ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}
// The reference GEMM needs no scratch: a workspace the program hands over is accepted and unused.
cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t, void*, size_t) {
    return CUBLAS_STATUS_SUCCESS;
}
const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
    return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_ERROR";
}
cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                           int k, const float* alpha, const float* a, int lda, const float* b, int ldb,
                                           const float* beta, float* c, int ldc) {
    sgemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                      int n, int k, const float* alpha, const float* a, int lda,
                                                      long long stride_a, const float* b, int ldb, long long stride_b,
                                                      const float* beta, float* c, int ldc, long long stride_c,
                                                      int batch) {
    for (int i = 0; i < batch; ++i)
        sgemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, *alpha, a + i * stride_a, lda, b + i * stride_b, ldb,
              *beta, c + i * stride_c, ldc);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* handle) {
    *handle = reinterpret_cast<cublasLtHandle_t>(&g_fake_object);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t) {
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t, cudaDataType_t) {
    *desc = reinterpret_cast<cublasLtMatmulDesc_t>(new MatmulDesc);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
    delete reinterpret_cast<MatmulDesc*>(desc);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t handle,
                                                           cublasLtMatmulDescAttributes_t attribute, const void* value,
                                                           size_t) {
    auto* desc = reinterpret_cast<MatmulDesc*>(handle);
    switch (attribute) {
        case CUBLASLT_MATMUL_DESC_TRANSA:
            std::memcpy(&desc->transa, value, sizeof(desc->transa));
            break;
        case CUBLASLT_MATMUL_DESC_TRANSB:
            std::memcpy(&desc->transb, value, sizeof(desc->transb));
            break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE:
            std::memcpy(&desc->epilogue, value, sizeof(desc->epilogue));
            break;
        case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
            std::memcpy(&desc->bias, value, sizeof(desc->bias));
            break;
        default:
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
    *layout = reinterpret_cast<cublasLtMatrixLayout_t>(new Layout{type, long(rows), long(cols), long(ld)});
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(const cublasLtMatrixLayout_t layout) {
    delete reinterpret_cast<Layout*>(layout);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* preference) {
    *preference = reinterpret_cast<cublasLtMatmulPreference_t>(&g_fake_object);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t) {
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                                 cublasLtMatmulPreferenceAttributes_t, const void*,
                                                                 size_t) {
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                                           cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                           cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                           cublasLtMatmulPreference_t, int requested,
                                                           cublasLtMatmulHeuristicResult_t* results, int* found) {
    if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
    std::memset(results, 0, sizeof(*results));
    results->state = CUBLAS_STATUS_SUCCESS;
    *found = 1;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t handle, const void* alpha,
                                           const void* a, cublasLtMatrixLayout_t la, const void* b,
                                           cublasLtMatrixLayout_t lb, const void* beta, const void* c,
                                           cublasLtMatrixLayout_t lc, void* d, cublasLtMatrixLayout_t ld,
                                           const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) {
    const auto* desc = reinterpret_cast<const MatmulDesc*>(handle);
    const auto* A = reinterpret_cast<const Layout*>(la);
    const auto* B = reinterpret_cast<const Layout*>(lb);
    const auto* C = reinterpret_cast<const Layout*>(lc);
    const auto* D = reinterpret_cast<const Layout*>(ld);
    bool ta = desc->transa != CUBLAS_OP_N, tb = desc->transb != CUBLAS_OP_N;
    int m = int(D->rows), n = int(D->cols), k = int(ta ? A->rows : A->cols);
    auto bias = desc->epilogue == CUBLASLT_EPILOGUE_BIAS ? loader(desc->bias, D->type) : nullptr;
    std::function<void(long, float)> store;
    if (D->type == CUDA_R_16BF) {
        auto p = static_cast<__nv_bfloat16*>(d);
        store = [p, bias, ldd = D->ld](long i, float v) { p[i] = __float2bfloat16(v + (bias ? bias(i % ldd) : 0.0f)); };
    } else {
        auto p = static_cast<float*>(d);
        store = [p, bias, ldd = D->ld](long i, float v) { p[i] = v + (bias ? bias(i % ldd) : 0.0f); };
    }
    reference_gemm(ta, tb, m, n, k, *static_cast<const float*>(alpha), loader(a, A->type), int(A->ld),
                   loader(b, B->type), int(B->ld), *static_cast<const float*>(beta), loader(c, C->type), int(C->ld),
                   store, int(D->ld));
    (void)B;
    return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
