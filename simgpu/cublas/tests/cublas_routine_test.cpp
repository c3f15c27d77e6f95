// The generic routine families of the simulated cuBLAS (routine.h), called through the toolkit's
// headers: one named kernel per call with the documented FLOPs, durations that follow the roofline,
// results the library leaves in host memory, the helpers, the legacy management functions and cublasXt.
#include <cublasXt.h>
#include <cublas_v2.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "driver_interposers.h"
#include "simulated_driver.h"

// The legacy API's management functions (cublas.h, which cannot be included next to cublas_v2.h).
extern "C" {
cublasStatus_t cublasInit();
cublasStatus_t cublasShutdown();
cublasStatus_t cublasGetError();
cublasStatus_t cublasAlloc(int n, int elemSize, void** devicePtr);
cublasStatus_t cublasFree(void* devicePtr);
}

using tbdsim::testing::CapturedRecord;
using tbdsim::testing::RecordCollector;
using tbdsim::testing::SimulatedDriver;

namespace {

struct Handle {
    cublasHandle_t handle = nullptr;
    Handle() { REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS); }
    ~Handle() { cublasDestroy(handle); }
};

// Device memory for operands whose values no kernel reads (the simulator times kernels, it does not
// run them).
struct Scratch {
    CUdeviceptr address = 0;
    explicit Scratch(size_t bytes) { REQUIRE(SimulatedDriver::instance().mem_alloc(&address, bytes) == CUDA_SUCCESS); }
    ~Scratch() { SimulatedDriver::instance().mem_free(address); }
    template <typename T>
    T* as() const {
        return reinterpret_cast<T*>(address);
    }
};

double triangle(double n) {
    return n * (n + 1) / 2;
}

uint64_t duration_ns(const CapturedRecord& r) {
    return r.record.end_ns - r.record.start_ns;
}

}  // namespace

TEST_CASE("level-3 families: one named kernel per call with the documented FLOPs") {
    Handle h;
    Scratch scratch(1 << 20);
    float* f = scratch.as<float>();
    const float one = 1, zero = 0;
    RecordCollector records;
    REQUIRE(cublasSsymm(h.handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, 64, 32, &one, f, 64, f, 64, &zero, f, 64) ==
            CUBLAS_STATUS_SUCCESS);
    const cuDoubleComplex* z = scratch.as<cuDoubleComplex>();
    const double real_one = 1;
    REQUIRE(cublasZherk(h.handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, 16, 8, &real_one, z, 16, &real_one,
                        scratch.as<cuDoubleComplex>(), 16) == CUBLAS_STATUS_SUCCESS);
    const double done = 1;
    REQUIRE(cublasDtrsm_v2_64(h.handle, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, 10,
                              20, &done, scratch.as<double>(), 20, scratch.as<double>(), 10) == CUBLAS_STATUS_SUCCESS);
    const cuComplex cone{1, 0};
    REQUIRE(cublasCgemm3m(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &cone, scratch.as<cuComplex>(), 8,
                          scratch.as<cuComplex>(), 8, &cone, scratch.as<cuComplex>(), 8) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSgeam(h.handle, CUBLAS_OP_N, CUBLAS_OP_T, 30, 40, &one, f, 30, &one, f, 40, f, 30) ==
            CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 5);
    CHECK(kernels[0].name == "symm_kernel_s");
    CHECK(kernels[0].record.flops == doctest::Approx(2.0 * 64 * 32 * 64));
    CHECK(kernels[0].record.precision == TBDSIM_PRECISION_FP32);
    CHECK(kernels[1].name == "herk_kernel_z");
    CHECK(kernels[1].record.flops == doctest::Approx(4 * 2 * triangle(16) * 8));  // complex: 4x
    CHECK(kernels[1].record.precision == TBDSIM_PRECISION_FP64);
    CHECK(kernels[2].name == "trsm_kernel_d");
    CHECK(kernels[2].record.flops == doctest::Approx(20.0 * 10 * 20));  // right side: n^2 m
    CHECK(kernels[3].name == "gemm3m_kernel_c");
    CHECK(kernels[3].record.flops == doctest::Approx(6.0 * 8 * 8 * 8));  // three real products
    CHECK(kernels[4].name == "geam_kernel_s");
    CHECK(kernels[4].record.flops == doctest::Approx(3.0 * 30 * 40));
}

TEST_CASE("batched and grouped forms: the batch multiplies the work, each group is one GEMM launch") {
    Handle h;
    Scratch scratch(1 << 20);
    float* f = scratch.as<float>();
    std::vector<const float*> host_pointers(8, f);
    Scratch pointers(8 * sizeof(void*));
    std::memcpy(pointers.as<void>(), host_pointers.data(), 8 * sizeof(void*));
    const auto** a = pointers.as<const float*>();
    const float one = 1;
    RecordCollector records;
    REQUIRE(cublasStrsmBatched(h.handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                               16, 4, &one, a, 16, const_cast<float* const*>(a), 16, 4) == CUBLAS_STATUS_SUCCESS);
    const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
    const int m[2] = {64, 128}, n[2] = {32, 64}, k[2] = {16, 256}, size[2] = {2, 3};
    const int lda[2] = {64, 256}, ldb[2] = {16, 64};  // op(A) m x k, op(B) k x n
    const float alphas[2] = {1, 1}, betas[2] = {0, 0};
    REQUIRE(cublasSgemmGroupedBatched(h.handle, ops, ops, m, n, k, alphas, a, lda, a, ldb, betas,
                                      const_cast<float* const*>(a), m, 2, size) == CUBLAS_STATUS_SUCCESS);
    int* info = scratch.as<int>() + 1000;
    for (int i = 0; i < 4; ++i) info[i] = 7;
    REQUIRE(cublasSgetrfBatched(h.handle, 8, const_cast<float* const*>(a), 8, nullptr, info, 4) ==
            CUBLAS_STATUS_SUCCESS);
    int host_info = -9;
    REQUIRE(cublasSgelsBatched(h.handle, CUBLAS_OP_N, 16, 8, 2, const_cast<float* const*>(a), 16,
                               const_cast<float* const*>(a), 16, &host_info, nullptr, 4) == CUBLAS_STATUS_SUCCESS);
    CHECK(host_info == 0);
    for (int i = 0; i < 4; ++i) CHECK(info[i] == 0);  // every factorization reports success
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 5);
    CHECK(kernels[0].name == "trsm_batched_kernel_s");
    CHECK(kernels[0].record.flops == doctest::Approx(16.0 * 16 * 4 * 4));
    CHECK(kernels[1].record.flops == doctest::Approx(2.0 * 64 * 32 * 16 * 2));
    CHECK(kernels[2].record.flops == doctest::Approx(2.0 * 128 * 64 * 256 * 3));
    CHECK(kernels[2].name.find("_tt_") != std::string::npos);  // group 2 is transposed twice
    CHECK(kernels[3].name == "getrf_batched_kernel_s");
    CHECK(kernels[3].record.flops == doctest::Approx(2.0 / 3.0 * 8 * 8 * 8 * 4));
    CHECK(kernels[4].name == "gels_batched_kernel_s");
}

TEST_CASE("durations follow the roofline: bytes for bandwidth-bound routines, FLOPs for compute-bound ones") {
    Handle h;
    Scratch scratch(size_t{2048} * 2048 * 8);
    const float one = 1;
    const double done = 1;
    RecordCollector records;
    float* f = scratch.as<float>();
    double* d = scratch.as<double>();
    REQUIRE(cublasSgeam(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 1024, 1024, &one, f, 1024, &one, f, 1024, f, 1024) ==
            CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSgeam(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 2048, 2048, &one, f, 2048, &one, f, 2048, f, 2048) ==
            CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasDsymm(h.handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, 512, 512, &done, d, 512, d, 512, &done, d,
                        512) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasDsymm(h.handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, 1024, 1024, &done, d, 1024, d, 1024, &done,
                        d, 1024) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 4);
    // geam moves 3 mn elements: 4x the elements, 4x the time.
    CHECK(static_cast<double>(duration_ns(kernels[1])) / static_cast<double>(duration_ns(kernels[0])) ==
          doctest::Approx(4.0).epsilon(0.02));
    // symm does 2 m^2 n FLOPs: 8x the FLOPs, 8x the time.
    CHECK(static_cast<double>(duration_ns(kernels[3])) / static_cast<double>(duration_ns(kernels[2])) ==
          doctest::Approx(8.0).epsilon(0.02));
}

TEST_CASE("results in host memory: iamax, rotg, rotmg, dot and nrm2 of Ex forms") {
    Handle h;
    Scratch scratch(4096);
    float* x = scratch.as<float>();
    const float values[] = {1, -5, 3, 5};
    std::memcpy(x, values, sizeof values);
    int index = 0;
    REQUIRE(cublasIsamax(h.handle, 4, x, 1, &index) == CUBLAS_STATUS_SUCCESS);
    CHECK(index == 2);  // the first of the largest magnitudes, 1-based
    REQUIRE(cublasIsamin(h.handle, 4, x, 1, &index) == CUBLAS_STATUS_SUCCESS);
    CHECK(index == 1);
    float a = 3, b = 4, c = 0, s = 0;
    REQUIRE(cublasSrotg(h.handle, &a, &b, &c, &s) == CUBLAS_STATUS_SUCCESS);
    CHECK(a == doctest::Approx(5));
    CHECK(c == doctest::Approx(0.6));
    CHECK(s == doctest::Approx(0.8));
    CHECK(b == doctest::Approx(1 / 0.6));  // z = 1/c when |b| >= |a|
    double d1 = 1, d2 = 1, x1 = 1, param[5] = {};
    const double y1 = 2;
    REQUIRE(cublasDrotmg(h.handle, &d1, &d2, &x1, &y1, param) == CUBLAS_STATUS_SUCCESS);
    CHECK(param[0] == 1);  // H = [h11 1; -1 h22]
    CHECK(param[1] == doctest::Approx(0.5));
    CHECK(param[4] == doctest::Approx(0.5));
    CHECK(x1 == doctest::Approx(2.5));
    CHECK(-1 * 1 + param[4] * y1 == doctest::Approx(0));  // the rotation zeroes the second component
    const uint16_t half_x[] = {0x3C00, 0x4000, 0x4200}, half_y[] = {0x4400, 0x4500, 0x4600};  // 1 2 3, 4 5 6
    std::memcpy(scratch.as<char>() + 1024, half_x, sizeof half_x);
    std::memcpy(scratch.as<char>() + 2048, half_y, sizeof half_y);
    float dot = 0;
    REQUIRE(cublasDotEx(h.handle, 3, scratch.as<char>() + 1024, CUDA_R_16F, 1, scratch.as<char>() + 2048, CUDA_R_16F, 1,
                        &dot, CUDA_R_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
    CHECK(dot == doctest::Approx(32));
    float norm = 0;
    REQUIRE(cublasNrm2Ex(h.handle, 3, x, CUDA_R_32F, 1, &norm, CUDA_R_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
    CHECK(norm == doctest::Approx(std::sqrt(35.0)));
    CHECK(cublasIsamax(h.handle, 4, x, 1, nullptr) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasDotEx(h.handle, 3, x, CUDA_R_8F_E4M3, 1, x, CUDA_R_8F_E4M3, 1, &dot, CUDA_R_32F, CUDA_R_32F) ==
          CUBLAS_STATUS_NOT_SUPPORTED);
}

TEST_CASE("helpers copy through the driver and settings are returned as set") {
    Handle h;
    Scratch device(256);
    const float host[6] = {1, 2, 3, 4, 5, 6};  // 3 x 2, ld 3
    RecordCollector records;
    REQUIRE(cublasSetMatrix(3, 2, sizeof(float), host, 3, device.as<float>(), 4) == CUBLAS_STATUS_SUCCESS);
    CHECK(device.as<float>()[4] == 4);  // column 1 starts at ld 4
    float back[6] = {};
    REQUIRE(cublasGetMatrix(3, 2, sizeof(float), device.as<float>(), 4, back, 3) == CUBLAS_STATUS_SUCCESS);
    CHECK(std::memcmp(back, host, sizeof host) == 0);
    REQUIRE(cublasSetVector(3, sizeof(float), host, 2, device.as<float>(), 1) == CUBLAS_STATUS_SUCCESS);
    CHECK(device.as<float>()[1] == 3);
    CHECK(records.of_kind(TBDSIM_RECORD_MEMCPY).size() == 3);
    CHECK(cublasSetVector(3, sizeof(float), host, 0, device.as<float>(), 1) == CUBLAS_STATUS_INVALID_VALUE);
    int sm_count = -1;
    REQUIRE(cublasSetSmCountTarget(h.handle, 12) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasGetSmCountTarget(h.handle, &sm_count) == CUBLAS_STATUS_SUCCESS);
    CHECK(sm_count == 12);
    cublasEmulationStrategy_t strategy = CUBLAS_EMULATION_STRATEGY_DEFAULT;
    REQUIRE(cublasSetEmulationStrategy(h.handle, CUBLAS_EMULATION_STRATEGY_EAGER) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasGetEmulationStrategy(h.handle, &strategy) == CUBLAS_STATUS_SUCCESS);
    CHECK(strategy == CUBLAS_EMULATION_STRATEGY_EAGER);
}

TEST_CASE("legacy management functions and cublasXt") {
    REQUIRE(cublasInit() == CUBLAS_STATUS_SUCCESS);
    void* p = nullptr;
    REQUIRE(cublasAlloc(16, 4, &p) == CUBLAS_STATUS_SUCCESS);
    CHECK(p != nullptr);
    CHECK(cublasFree(p) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasAlloc(-1, 4, &p) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasGetError() == CUBLAS_STATUS_INVALID_VALUE);  // sticky until read
    CHECK(cublasGetError() == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasShutdown() == CUBLAS_STATUS_SUCCESS);

    cublasXtHandle_t xt = nullptr;
    REQUIRE(cublasXtCreate(&xt) == CUBLAS_STATUS_SUCCESS);
    int devices[] = {0};
    REQUIRE(cublasXtDeviceSelect(xt, 1, devices) == CUBLAS_STATUS_SUCCESS);
    int block = 0;
    REQUIRE(cublasXtSetBlockDim(xt, 512) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasXtGetBlockDim(xt, &block) == CUBLAS_STATUS_SUCCESS);
    CHECK(block == 512);
    std::vector<float> a(64 * 64, 1.0f);
    const float one = 1, zero = 0;
    RecordCollector records;
    REQUIRE(cublasXtSgemm(xt, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a.data(), 64, a.data(), 64, &zero, a.data(),
                          64) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].name == "gemm_kernel_s");
    CHECK(kernels[0].record.flops == doctest::Approx(2.0 * 64 * 64 * 64));
    CHECK(cublasXtDestroy(xt) == CUBLAS_STATUS_SUCCESS);
}
