// Level-1 and level-2 BLAS of the simulated cuBLAS: one named, annotated kernel per call, real results
// for reductions into host memory, the reference BLAS's quick returns and argument checks.
#include <cublas_v2.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "driver_interposers.h"
#include "simulated_driver.h"

using tbdsim::testing::CapturedRecord;
using tbdsim::testing::RecordCollector;
using tbdsim::testing::SimulatedDriver;

namespace {

struct VectorHandle {
    cublasHandle_t handle = nullptr;
    VectorHandle() { REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS); }
    ~VectorHandle() { cublasDestroy(handle); }
};

// A device buffer filled from host values (device memory is host memory on the simulated GPU, but the
// bytes go through cuMemcpyHtoD as a program's would).
template <typename T>
struct DeviceVector {
    CUdeviceptr address = 0;
    explicit DeviceVector(const std::vector<T>& values) {
        auto& driver = SimulatedDriver::instance();
        REQUIRE(driver.mem_alloc(&address, values.size() * sizeof(T)) == CUDA_SUCCESS);
        REQUIRE(driver.memcpy_htod(address, values.data(), values.size() * sizeof(T)) == CUDA_SUCCESS);
    }
    ~DeviceVector() { SimulatedDriver::instance().mem_free(address); }
    T* get() const { return reinterpret_cast<T*>(address); }
};

}  // namespace

TEST_CASE("dot, nrm2 and asum return the values of their operands, each from one annotated kernel") {
    VectorHandle h;
    const DeviceVector<float> x({1, 2, 3, 4});
    const DeviceVector<float> y({4, -3, 2, 1});
    RecordCollector records;
    float dot = -1, nrm2 = -1, asum = -1;
    REQUIRE(cublasSdot(h.handle, 4, x.get(), 1, y.get(), 1, &dot) == CUBLAS_STATUS_SUCCESS);
    CHECK(dot == doctest::Approx(4 - 6 + 6 + 4));
    REQUIRE(cublasSnrm2(h.handle, 4, x.get(), 1, &nrm2) == CUBLAS_STATUS_SUCCESS);
    CHECK(nrm2 == doctest::Approx(std::sqrt(30.0)));
    REQUIRE(cublasSasum(h.handle, 2, y.get(), 2, &asum) == CUBLAS_STATUS_SUCCESS);  // 4 + |2|
    CHECK(asum == doctest::Approx(6));
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 3);
    CHECK(kernels[0].name == "dot_kernel_s");
    CHECK(kernels[0].record.flops == doctest::Approx(8));
    CHECK(kernels[0].record.precision == TBDSIM_PRECISION_FP32);
    CHECK(kernels[1].name == "nrm2_kernel_s");
    CHECK(kernels[2].name == "asum_kernel_s");
    CHECK(kernels[2].record.flops == doctest::Approx(2));
}

TEST_CASE("complex and double forms, conjugated or not, 32- and 64-bit sizes") {
    VectorHandle h;
    const DeviceVector<cuDoubleComplex> x({{1, 1}, {0, 2}});
    const DeviceVector<cuDoubleComplex> y({{2, 0}, {1, -1}});
    RecordCollector records;
    cuDoubleComplex dotu{}, dotc{};
    REQUIRE(cublasZdotu(h.handle, 2, x.get(), 1, y.get(), 1, &dotu) == CUBLAS_STATUS_SUCCESS);
    CHECK(dotu.x == doctest::Approx(4));  // (1+i)2 + 2i(1-i) = 2+2i + 2i+2
    CHECK(dotu.y == doctest::Approx(4));
    REQUIRE(cublasZdotc_64(h.handle, 2, x.get(), 1, y.get(), 1, &dotc) == CUBLAS_STATUS_SUCCESS);
    CHECK(dotc.x == doctest::Approx(0));  // (1-i)2 + (-2i)(1-i) = 2-2i - 2i-2
    CHECK(dotc.y == doctest::Approx(-4));
    double norm = 0;
    REQUIRE(cublasDznrm2(h.handle, 2, x.get(), 1, &norm) == CUBLAS_STATUS_SUCCESS);
    CHECK(norm == doctest::Approx(std::sqrt(6.0)));
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 3);
    CHECK(kernels[0].name == "dot_kernel_z");
    CHECK(kernels[0].record.flops == doctest::Approx(2.0 * 2 * 4));
    CHECK(kernels[0].record.precision == TBDSIM_PRECISION_FP64);
}

TEST_CASE("axpy, scal, copy, gemv and ger launch their kernels with their FLOPs") {
    VectorHandle h;
    const int m = 300, n = 200;
    const DeviceVector<float> a(std::vector<float>(size_t(m) * n, 1.0f));
    const DeviceVector<float> x(std::vector<float>(m, 1.0f));
    const DeviceVector<float> y(std::vector<float>(m, 1.0f));
    const float alpha = 2, beta = 0;
    RecordCollector records;
    REQUIRE(cublasSaxpy(h.handle, m, &alpha, x.get(), 1, y.get(), 1) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSscal(h.handle, m, &alpha, y.get(), 1) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasScopy(h.handle, m, x.get(), 1, y.get(), 1) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSgemv(h.handle, CUBLAS_OP_N, m, n, &alpha, a.get(), m, x.get(), 1, &beta, y.get(), 1) ==
            CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSgemv_64(h.handle, CUBLAS_OP_T, m, n, &alpha, a.get(), m, x.get(), 1, &beta, y.get(), 1) ==
            CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSger(h.handle, m, n, &alpha, x.get(), 1, y.get(), 1, a.get(), m) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(SimulatedDriver::instance().ctx_synchronize(nullptr) == CUDA_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 6);
    const char* names[] = {"axpy_kernel_val_s", "scal_kernel_val_s",   "copy_kernel_s",
                           "gemv2N_kernel_s",   "gemv2T_kernel_val_s", "ger_kernel_s"};
    const double flops[] = {2.0 * m, double(m), 0, 2.0 * m * n, 2.0 * m * n, 2.0 * m * n};
    for (size_t i = 0; i < kernels.size(); ++i) {
        CAPTURE(i);
        CHECK(kernels[i].name == names[i]);
        CHECK(kernels[i].record.flops == doctest::Approx(flops[i]));
        CHECK(kernels[i].record.block[0] == 256);
    }
    CHECK(kernels[3].record.grid[0] == 2);  // 300 rows / 256 threads
}

TEST_CASE("quick returns and argument checks of the reference BLAS") {
    VectorHandle h;
    const DeviceVector<float> x({1, 2});
    RecordCollector records;
    float result = 7;
    CHECK(cublasSdot(h.handle, 0, x.get(), 1, x.get(), 1, &result) == CUBLAS_STATUS_SUCCESS);
    CHECK(result == 0);
    result = 7;
    CHECK(cublasSnrm2(h.handle, 2, x.get(), 0, &result) == CUBLAS_STATUS_SUCCESS);  // incx <= 0
    CHECK(result == 0);
    CHECK(cublasSdot(h.handle, 2, x.get(), 1, x.get(), 1, nullptr) == CUBLAS_STATUS_INVALID_VALUE);
    const float alpha = 1, beta = 0;
    float* out = x.get();
    CHECK(cublasSgemv(h.handle, CUBLAS_OP_N, 4, 2, &alpha, out, 3, out, 1, &beta, out, 1) ==
          CUBLAS_STATUS_INVALID_VALUE);  // lda < m
    CHECK(cublasSger(h.handle, 2, 2, &alpha, out, 0, out, 1, out, 2) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSaxpy(nullptr, 2, &alpha, out, 1, out, 1) == CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(records.of_kind(TBDSIM_RECORD_KERNEL).empty());
    // The generic level-2 routines (routine.h) check their arguments the same way.
    CHECK(cublasStrsv(h.handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 2, out, 2, out, 0) ==
          CUBLAS_STATUS_INVALID_VALUE);  // incx == 0
    CHECK(cublasStrsv(h.handle, static_cast<cublasFillMode_t>(3), CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 2, out, 2, out,
                      1) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(records.of_kind(TBDSIM_RECORD_KERNEL).empty());
}
