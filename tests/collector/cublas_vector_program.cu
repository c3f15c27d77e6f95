// A loss layer the classic way: level-1/2 cuBLAS on device vectors (gemv for a linear layer, axpy,
// scal, dot and nrm2 for a squared-error loss, ger for the weight gradient, copy), through the shared
// runtime. Prints the loss that cublasSdot_v2 returned, and exits 1 if it is not the expected value.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#define CHECK(call)                                                                \
    do {                                                                           \
        if ((call) != 0) {                                                         \
            std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main() {
    const int rows = 256, cols = 128;
    std::vector<float> w(size_t(rows) * cols, 0.5f), x(cols, 1.0f), target(rows, 60.0f);
    float *dw = nullptr, *dx = nullptr, *dy = nullptr, *dt = nullptr, *dcopy = nullptr;
    CHECK(cudaMalloc(&dw, w.size() * sizeof(float)));
    CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CHECK(cudaMalloc(&dy, rows * sizeof(float)));
    CHECK(cudaMalloc(&dt, rows * sizeof(float)));
    CHECK(cudaMalloc(&dcopy, rows * sizeof(float)));
    CHECK(cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dt, target.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
    // y = W x would be 64 per row on a GPU; the simulated GPU does not run kernels, so y is set by a
    // copy from the host instead and only the reductions compute values.
    std::vector<float> y(rows, 64.0f);
    CHECK(cudaMemcpy(dy, y.data(), rows * sizeof(float), cudaMemcpyHostToDevice));

    cublasHandle_t handle = nullptr;
    CHECK(cublasCreate(&handle));
    const float one = 1.0f, minus_one = -1.0f, zero = 0.0f, half = 0.5f;
    CHECK(cublasSgemv(handle, CUBLAS_OP_N, rows, cols, &one, dw, rows, dx, 1, &zero, dcopy, 1));  // 2*256*128
    CHECK(cublasSaxpy(handle, rows, &minus_one, dt, 1, dy, 1));                                   // y - t
    std::vector<float> diff(rows, 4.0f);  // what axpy computes on a GPU
    CHECK(cudaMemcpy(dy, diff.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
    float loss = 0, norm = 0;
    CHECK(cublasSdot(handle, rows, dy, 1, dy, 1, &loss));  // 256 * 16
    CHECK(cublasSnrm2(handle, rows, dy, 1, &norm));        // sqrt(loss)
    CHECK(cublasSscal(handle, rows, &half, dy, 1));
    CHECK(cublasSger(handle, rows, cols, &minus_one, dy, 1, dx, 1, dw, rows));
    CHECK(cublasScopy(handle, rows, dy, 1, dcopy, 1));
    CHECK(cudaDeviceSynchronize());
    CHECK(cublasDestroy(handle));
    for (float* p : {dw, dx, dy, dt, dcopy}) CHECK(cudaFree(p));
    std::printf("loss %.1f norm %.1f\n", loss, norm);
    return loss == 4096.0f && std::fabs(norm - 64.0f) < 1e-3f ? 0 : 1;
}
