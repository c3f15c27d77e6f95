// A CUDA program that multiplies through cuBLASLt the way PyTorch does (descriptors, a heuristic
// query, a workspace from its own allocation, the call on a stream): FP32, TF32, FP16, BF16, strided
// batches, bias and ReLU+bias epilogues, a call through dlopen + dlsym, and calls the library
// refuses. Linked against the real toolkit's libcudart and libcublasLt; recorded on the simulated GPU.
//   cublaslt_program EXPECTED
// writes one line per call that must appear in library_calls, in call order:
//   m n k batch a b d workspace workspace_bytes a_type compute_type transa epilogue_tag
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace {

std::FILE* g_expected = nullptr;

void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "cublaslt_program: %s failed\n", what);
        std::exit(1);
    }
}

void require_status(cublasStatus_t status, cublasStatus_t want, const char* what) {
    if (status != want) {
        std::fprintf(stderr, "cublaslt_program: %s returned %s, want %s\n", what, cublasLtGetStatusName(status),
                     cublasLtGetStatusName(want));
        std::exit(1);
    }
}

template <typename Descriptor, typename Set, typename Attribute, typename T>
void set(Set set_attribute, Descriptor descriptor, Attribute attribute, T value) {
    require_status(set_attribute(descriptor, attribute, &value, sizeof value), CUBLAS_STATUS_SUCCESS, "set attribute");
}

struct Call {
    uint64_t m, n, k;
    int32_t batch = 1;
    cudaDataType ab_type = CUDA_R_32F, cd_type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    cublasOperation_t transa = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    const void* bias = nullptr;
    cudaStream_t stream = nullptr;
    size_t workspace_limit = 8u << 20;
    uint64_t a_rows_override = 0;  // != 0: a wrong shape the library must refuse
};

using MatmulFn = decltype(&cublasLtMatmul);

// Runs one matmul with operands carved from `memory`; writes the expected row when it must succeed.
void run(cublasLtHandle_t handle, const Call& call, char* memory, MatmulFn matmul, cublasStatus_t want) {
    const bool ta = call.transa != CUBLAS_OP_N;
    const uint64_t a_rows = call.a_rows_override != 0 ? call.a_rows_override : (ta ? call.k : call.m);
    const uint64_t a_cols = ta ? call.m : call.k;
    cublasLtMatmulDesc_t desc = nullptr;
    require_status(cublasLtMatmulDescCreate(&desc, call.compute, CUDA_R_32F), CUBLAS_STATUS_SUCCESS, "desc");
    set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(call.transa));
    set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(call.epilogue));
    if (call.bias != nullptr) set(cublasLtMatmulDescSetAttribute, desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, call.bias);
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
    require_status(cublasLtMatrixLayoutCreate(&a, call.ab_type, a_rows, a_cols, static_cast<int64_t>(a_rows)),
                   CUBLAS_STATUS_SUCCESS, "layout A");
    require_status(cublasLtMatrixLayoutCreate(&b, call.ab_type, call.k, call.n, static_cast<int64_t>(call.k)),
                   CUBLAS_STATUS_SUCCESS, "layout B");
    require_status(cublasLtMatrixLayoutCreate(&c, call.cd_type, call.m, call.n, static_cast<int64_t>(call.m)),
                   CUBLAS_STATUS_SUCCESS, "layout C");
    require_status(cublasLtMatrixLayoutCreate(&d, call.cd_type, call.m, call.n, static_cast<int64_t>(call.m)),
                   CUBLAS_STATUS_SUCCESS, "layout D");
    if (call.batch > 1) {
        const int64_t strides[] = {static_cast<int64_t>(a_rows * a_cols), static_cast<int64_t>(call.k * call.n),
                                   static_cast<int64_t>(call.m * call.n), static_cast<int64_t>(call.m * call.n)};
        int i = 0;
        for (cublasLtMatrixLayout_t layout : {a, b, c, d}) {
            set(cublasLtMatrixLayoutSetAttribute, layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, call.batch);
            set(cublasLtMatrixLayoutSetAttribute, layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, strides[i++]);
        }
    }

    // The workspace the heuristic asks for, at the end of the operand memory (PyTorch takes it from
    // its caching allocator the same way).
    size_t workspace_bytes = 0;
    if (want == CUBLAS_STATUS_SUCCESS) {
        cublasLtMatmulPreference_t preference = nullptr;
        require_status(cublasLtMatmulPreferenceCreate(&preference), CUBLAS_STATUS_SUCCESS, "preference");
        set(cublasLtMatmulPreferenceSetAttribute, preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
            static_cast<uint64_t>(call.workspace_limit));
        cublasLtMatmulHeuristicResult_t result{};
        int count = 0;
        require_status(cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, d, preference, 1, &result, &count),
                       CUBLAS_STATUS_SUCCESS, "heuristic");
        require(count == 1 && result.workspaceSize <= call.workspace_limit, "heuristic workspace");
        workspace_bytes = result.workspaceSize;
        cublasLtMatmulPreferenceDestroy(preference);
    }
    char* A = memory;
    char* B = memory + (64u << 20);
    char* C = memory + (128u << 20);
    char* D = memory + (192u << 20);
    char* workspace = memory + (256u << 20);
    const float one = 1.0f, zero = 0.0f;
    require_status(matmul(handle, desc, &one, A, a, B, b, &zero, C, c, D, d, nullptr,
                          workspace_bytes != 0 ? workspace : nullptr, workspace_bytes, call.stream),
                   want, "cublasLtMatmul");
    if (want == CUBLAS_STATUS_SUCCESS) {
        const char* tag = call.epilogue == CUBLASLT_EPILOGUE_BIAS        ? "_epilogue_bias"
                          : call.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ? "_epilogue_bias_relu"
                                                                         : "-";
        std::fprintf(g_expected, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %d %" PRIuPTR " %" PRIuPTR " %" PRIuPTR
                                 " %" PRIuPTR " %zu %d %d %d %s\n",
                     call.m, call.n, call.k, call.batch, reinterpret_cast<uintptr_t>(A),
                     reinterpret_cast<uintptr_t>(B), reinterpret_cast<uintptr_t>(D),
                     reinterpret_cast<uintptr_t>(workspace_bytes != 0 ? workspace : nullptr), workspace_bytes,
                     static_cast<int>(call.ab_type), static_cast<int>(call.compute), static_cast<int>(call.transa),
                     tag);
    }
    for (cublasLtMatrixLayout_t layout : {a, b, c, d}) cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(desc);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: cublaslt_program EXPECTED\n");
        return 2;
    }
    g_expected = std::fopen(argv[1], "w");
    require(g_expected != nullptr, "opening the expectation file");
    void* memory = nullptr;
    require(cudaMalloc(&memory, 272u << 20) == cudaSuccess, "cudaMalloc");
    void* bias = nullptr;
    require(cudaMalloc(&bias, 1u << 20) == cudaSuccess, "cudaMalloc bias");
    cudaStream_t stream = nullptr;
    require(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
    cublasLtHandle_t handle = nullptr;
    require_status(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS, "cublasLtCreate");
    char* base = static_cast<char*>(memory);

    run(handle, {.m = 512, .n = 256, .k = 128}, base, &cublasLtMatmul, CUBLAS_STATUS_SUCCESS);
    run(handle, {.m = 384, .n = 256, .k = 640, .compute = CUBLAS_COMPUTE_32F_FAST_TF32, .transa = CUBLAS_OP_T}, base,
        &cublasLtMatmul, CUBLAS_STATUS_SUCCESS);
    run(handle, {.m = 1024, .n = 512, .k = 256, .ab_type = CUDA_R_16F, .cd_type = CUDA_R_16F}, base, &cublasLtMatmul,
        CUBLAS_STATUS_SUCCESS);
    run(handle, {.m = 128, .n = 128, .k = 64, .batch = 8, .ab_type = CUDA_R_16BF, .cd_type = CUDA_R_16BF,
                 .workspace_limit = 1u << 20},
        base, &cublasLtMatmul, CUBLAS_STATUS_SUCCESS);
    run(handle, {.m = 512, .n = 64, .k = 256, .epilogue = CUBLASLT_EPILOGUE_BIAS, .bias = bias, .workspace_limit = 0},
        base, &cublasLtMatmul, CUBLAS_STATUS_SUCCESS);
    run(handle, {.m = 256, .n = 128, .k = 512, .ab_type = CUDA_R_16BF, .cd_type = CUDA_R_16BF,
                 .epilogue = CUBLASLT_EPILOGUE_RELU_BIAS, .bias = bias, .stream = stream},
        base, &cublasLtMatmul, CUBLAS_STATUS_SUCCESS);
    // Refused: op(A) has 200 rows where D has 256; a bias epilogue without a bias. Not recorded.
    run(handle, {.m = 256, .n = 128, .k = 64, .a_rows_override = 200}, base, &cublasLtMatmul,
        CUBLAS_STATUS_INVALID_VALUE);
    run(handle, {.m = 256, .n = 128, .k = 64, .epilogue = CUBLASLT_EPILOGUE_BIAS}, base, &cublasLtMatmul,
        CUBLAS_STATUS_INVALID_VALUE);
    // The same library reached the way TensorFlow-style loaders reach it: dlopen + dlsym.
    void* library = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
    require(library != nullptr, "dlopen libcublasLt.so.13");
    auto looked_up = reinterpret_cast<MatmulFn>(dlsym(library, "cublasLtMatmul"));
    require(looked_up != nullptr, "dlsym cublasLtMatmul");
    run(handle, {.m = 640, .n = 320, .k = 160, .batch = 3}, base, looked_up, CUBLAS_STATUS_SUCCESS);

    require(cudaStreamSynchronize(stream) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "synchronize");
    require_status(cublasLtDestroy(handle), CUBLAS_STATUS_SUCCESS, "cublasLtDestroy");
    cudaStreamDestroy(stream);
    cudaFree(bias);
    cudaFree(memory);
    std::fclose(g_expected);
    return 0;
}
