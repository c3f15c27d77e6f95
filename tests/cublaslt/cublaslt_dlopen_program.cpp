// A program that reaches cuBLASLt only through dlopen + dlsym, as TensorFlow-style loaders do, and
// never looks up the Get*Attribute functions: the collector's hook must find them in the library that
// defines the cublasLtMatmul it handed out (RTLD_NEXT cannot see a privately loaded library). Not
// linked against libcublasLt; device memory comes from the runtime.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace {

void* g_library = nullptr;

template <typename F>
F lookup(const char* name) {
    auto function = reinterpret_cast<F>(dlsym(g_library, name));
    if (function == nullptr) {
        std::fprintf(stderr, "cublaslt_dlopen_program: no %s\n", name);
        std::exit(1);
    }
    return function;
}

void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "cublaslt_dlopen_program: %s failed\n", what);
        std::exit(1);
    }
}

}  // namespace

int main() {
    g_library = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
    require(g_library != nullptr, "dlopen libcublasLt.so.13");
    const auto create = lookup<decltype(&cublasLtCreate)>("cublasLtCreate");
    const auto destroy = lookup<decltype(&cublasLtDestroy)>("cublasLtDestroy");
    const auto desc_create = lookup<decltype(&cublasLtMatmulDescCreate)>("cublasLtMatmulDescCreate");
    const auto desc_destroy = lookup<decltype(&cublasLtMatmulDescDestroy)>("cublasLtMatmulDescDestroy");
    const auto desc_set = lookup<decltype(&cublasLtMatmulDescSetAttribute)>("cublasLtMatmulDescSetAttribute");
    const auto layout_create = lookup<decltype(&cublasLtMatrixLayoutCreate)>("cublasLtMatrixLayoutCreate");
    const auto layout_destroy = lookup<decltype(&cublasLtMatrixLayoutDestroy)>("cublasLtMatrixLayoutDestroy");
    const auto matmul = lookup<decltype(&cublasLtMatmul)>("cublasLtMatmul");

    void* memory = nullptr;
    require(cudaMalloc(&memory, 16u << 20) == cudaSuccess, "cudaMalloc");
    char* base = static_cast<char*>(memory);
    cublasLtHandle_t handle = nullptr;
    require(create(&handle) == CUBLAS_STATUS_SUCCESS, "cublasLtCreate");
    cublasLtMatmulDesc_t desc = nullptr;
    require(desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS, "desc");
    const int32_t transpose = CUBLAS_OP_T;
    require(desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transpose, sizeof transpose) == CUBLAS_STATUS_SUCCESS,
            "TRANSB");
    // D (384 x 192) = A (384 x 96) * op(B), B stored 192 x 96.
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    require(layout_create(&a, CUDA_R_16F, 384, 96, 384) == CUBLAS_STATUS_SUCCESS, "layout A");
    require(layout_create(&b, CUDA_R_16F, 192, 96, 192) == CUBLAS_STATUS_SUCCESS, "layout B");
    require(layout_create(&d, CUDA_R_16F, 384, 192, 384) == CUBLAS_STATUS_SUCCESS, "layout D");
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < 3; ++i) {
        // C and D are the same matrix, as frameworks often pass them.
        require(matmul(handle, desc, &one, base, a, base + (4u << 20), b, &zero, base + (8u << 20), d,
                       base + (8u << 20), d, nullptr, nullptr, 0, nullptr) == CUBLAS_STATUS_SUCCESS,
                "cublasLtMatmul");
    }
    require(cudaDeviceSynchronize() == cudaSuccess, "synchronize");
    for (cublasLtMatrixLayout_t layout : {a, b, d}) layout_destroy(layout);
    desc_destroy(desc);
    destroy(handle);
    cudaFree(memory);
    return 0;
}
