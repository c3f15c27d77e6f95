// Level-3 cuBLAS beyond the real GEMMs, as a program would call them: symm, syrk, herk, syr2k, trmm,
// trsm, trsmBatched, geam, dgmm, complex and double GEMMs (plain, strided-batched) and a grouped GEMM
// on device matrices, through the shared runtime
// (tests/cli/record_cublas_level3.sh checks what tbdprof records of them).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>

#define CHECK(call)                                                                \
    do {                                                                           \
        if ((call) != 0) {                                                         \
            std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main() {
    const int n = 128;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    cuDoubleComplex* z = nullptr;
    float** pointers = nullptr;
    CHECK(cudaMalloc(&a, n * n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * n * sizeof(float)));
    CHECK(cudaMalloc(&z, n * n * sizeof(cuDoubleComplex)));
    CHECK(cudaMalloc(&pointers, 4 * sizeof(float*)));
    float* host_pointers[4] = {a, a, a, a};
    CHECK(cudaMemcpy(pointers, host_pointers, sizeof host_pointers, cudaMemcpyHostToDevice));

    cublasHandle_t handle = nullptr;
    CHECK(cublasCreate(&handle));
    const float one = 1.0f, zero = 0.0f;
    const double real_one = 1.0;
    const cuDoubleComplex complex_one{1.0, 0.0};
    CHECK(cublasSsymm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, 128, 64, &one, a, n, b, n, &zero, c, n));
    CHECK(cublasSsyrk(handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, 128, 32, &one, a, n, &zero, c, n));
    CHECK(cublasZherk(handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C, 64, 16, &real_one, z, n, &real_one, z, n));
    CHECK(cublasSsyr2k(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, 64, 128, &one, a, n, b, n, &zero, c, n));
    CHECK(cublasStrmm(handle, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 100, 50, &one,
                      a, n, b, n, c, n));
    CHECK(cublasStrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 64, 128,
                      &one, a, n, b, n));
    CHECK(cublasStrsmBatched(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 32,
                             16, &one, pointers, n, pointers, n, 4));
    CHECK(cublasSgeam(handle, CUBLAS_OP_N, CUBLAS_OP_T, 128, 128, &one, a, n, &one, b, n, c, n));
    CHECK(cublasSdgmm(handle, CUBLAS_SIDE_RIGHT, 128, 96, a, n, b, 1, c, n));
    CHECK(cublasZgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 32, 32, 32, &complex_one, z, n, z, n, &complex_one, z, n));
    double* d = reinterpret_cast<double*>(z);
    CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &real_one, d, n, d, n, &real_one, d, n));
    CHECK(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, 32, 32, 32, &real_one, d, 32, 1024, d, 32, 1024,
                                    &real_one, d, 32, 1024, 3));
    // Two groups: 2 problems of 64 x 32 x 16, 3 of 128 x 64 x 256 transposed twice.
    const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
    const int m[2] = {64, 128}, ns[2] = {32, 64}, k[2] = {16, 256}, size[2] = {2, 3};
    const int lda[2] = {64, 256}, ldb[2] = {16, 64}, ldc[2] = {64, 128};
    const float alphas[2] = {1, 1}, betas[2] = {0, 0};
    float** group_pointers = nullptr;
    CHECK(cudaMalloc(&group_pointers, 5 * sizeof(float*)));
    float* host_group[5] = {a, a, a, a, a};
    CHECK(cudaMemcpy(group_pointers, host_group, sizeof host_group, cudaMemcpyHostToDevice));
    CHECK(cublasSgemmGroupedBatched(handle, ops, ops, m, ns, k, alphas, group_pointers, lda, group_pointers, ldb, betas,
                                    group_pointers, ldc, 2, size));
    CHECK(cudaDeviceSynchronize());
    CHECK(cublasDestroy(handle));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaFree(z));
    CHECK(cudaFree(pointers));
    CHECK(cudaFree(group_pointers));
    std::printf("level-3 done\n");
    return 0;
}
