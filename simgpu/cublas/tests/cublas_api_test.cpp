// cuBLAS of the simulated GPU, driven through the real cublas_v2.h API by a program linked against
// the real toolkit's libcublas and run with the simulated one first on LD_LIBRARY_PATH.
#include <cublas_v2.h>
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "loaded_library.h"
#include "driver_interposers.h"
#include "simulated_driver.h"

using tbdsim::testing::CapturedRecord;
using tbdsim::testing::RecordCollector;
using tbdsim::testing::SimulatedDriver;

namespace {

constexpr int kSize = 1024;

// Device buffers big enough for every problem below.
struct Buffers {
    CUdeviceptr a = 0, b = 0, c = 0;
    Buffers() {
        auto& driver = SimulatedDriver::instance();
        const size_t bytes = sizeof(float) * kSize * kSize * 16;
        REQUIRE(driver.mem_alloc(&a, bytes) == CUDA_SUCCESS);
        REQUIRE(driver.mem_alloc(&b, bytes) == CUDA_SUCCESS);
        REQUIRE(driver.mem_alloc(&c, bytes) == CUDA_SUCCESS);
    }
    ~Buffers() {
        auto& driver = SimulatedDriver::instance();
        driver.mem_free(a);
        driver.mem_free(b);
        driver.mem_free(c);
    }
    const float* fa() const { return reinterpret_cast<const float*>(a); }
    const float* fb() const { return reinterpret_cast<const float*>(b); }
    float* fc() const { return reinterpret_cast<float*>(c); }
};

struct Handle {
    cublasHandle_t handle = nullptr;
    Handle() { REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS); }
    ~Handle() { cublasDestroy(handle); }
};

// An enum value no enumerator has, as a careless caller would pass it.
template <typename Enum>
Enum out_of_range(int value) {
    return static_cast<Enum>(value);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const float kOne = 1.0f;
const float kZero = 0.0f;

}  // namespace

TEST_CASE("the simulated libcublas is the one loaded") {
    CHECK(tbdsim::test::loaded_from_simulated(reinterpret_cast<void*>(&cublasCreate_v2), "libcublas.so"));
}

TEST_CASE("version, properties and status names") {
    Handle h;
    int version = 0;
    CHECK(cublasGetVersion(h.handle, &version) == CUBLAS_STATUS_SUCCESS);
    CHECK(version == CUBLAS_VERSION);
    int major = 0;
    CHECK(cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS);
    CHECK(major == CUBLAS_VER_MAJOR);
    CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE)) == "CUBLAS_STATUS_INVALID_VALUE");
    CHECK(std::string(cublasGetStatusString(CUBLAS_STATUS_SUCCESS)).size() > 0);
}

TEST_CASE("handle settings round-trip and are validated") {
    Handle h;
    auto& driver = SimulatedDriver::instance();
    CUstream stream = nullptr;
    REQUIRE(driver.stream_create(&stream, 0) == CUDA_SUCCESS);
    CHECK(cublasSetStream(h.handle, stream) == CUBLAS_STATUS_SUCCESS);
    cudaStream_t got = nullptr;
    CHECK(cublasGetStream(h.handle, &got) == CUBLAS_STATUS_SUCCESS);
    CHECK(reinterpret_cast<CUstream>(got) == stream);

    cublasMath_t math = CUBLAS_PEDANTIC_MATH;
    CHECK(cublasGetMathMode(h.handle, &math) == CUBLAS_STATUS_SUCCESS);
    CHECK(math == CUBLAS_DEFAULT_MATH);
    CHECK(cublasSetMathMode(h.handle, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasGetMathMode(h.handle, &math) == CUBLAS_STATUS_SUCCESS);
    CHECK(math == CUBLAS_TF32_TENSOR_OP_MATH);
    CHECK(cublasSetMathMode(h.handle, out_of_range<cublasMath_t>(7)) == CUBLAS_STATUS_INVALID_VALUE);

    cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_DEVICE;
    CHECK(cublasGetPointerMode(h.handle, &pointer_mode) == CUBLAS_STATUS_SUCCESS);
    CHECK(pointer_mode == CUBLAS_POINTER_MODE_HOST);
    CHECK(cublasSetPointerMode(h.handle, out_of_range<cublasPointerMode_t>(5)) ==
          CUBLAS_STATUS_INVALID_VALUE);

    CUdeviceptr workspace = 0;
    REQUIRE(driver.mem_alloc(&workspace, 1 << 20) == CUDA_SUCCESS);
    CHECK(cublasSetWorkspace(h.handle, reinterpret_cast<void*>(workspace + 8), 1024) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSetWorkspace(h.handle, reinterpret_cast<void*>(workspace), 1 << 20) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSetStream(h.handle, nullptr) == CUBLAS_STATUS_SUCCESS);
    driver.mem_free(workspace);
    driver.stream_destroy(stream);
}

TEST_CASE("bad arguments give the real status codes and launch nothing") {
    Handle h;
    Buffers buffers;
    RecordCollector records;
    const auto sgemm = [&](cublasHandle_t handle, cublasOperation_t ta, int m, int n, int k, int lda, int ldb,
                           int ldc) {
        return cublasSgemm(handle, ta, CUBLAS_OP_N, m, n, k, &kOne, buffers.fa(), lda, buffers.fb(), ldb, &kZero,
                           buffers.fc(), ldc);
    };
    CHECK(cublasCreate(nullptr) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasDestroy(nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(cublasSetStream(nullptr, nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(sgemm(nullptr, CUBLAS_OP_N, 64, 64, 64, 64, 64, 64) == CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(sgemm(h.handle, CUBLAS_OP_N, -1, 64, 64, 64, 64, 64) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(sgemm(h.handle, CUBLAS_OP_N, 64, -1, 64, 64, 64, 64) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(sgemm(h.handle, CUBLAS_OP_N, 64, 64, -1, 64, 64, 64) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(sgemm(h.handle, CUBLAS_OP_N, 64, 64, 64, 63, 64, 64) == CUBLAS_STATUS_INVALID_VALUE);  // lda < m
    CHECK(sgemm(h.handle, CUBLAS_OP_T, 64, 64, 32, 31, 64, 64) == CUBLAS_STATUS_INVALID_VALUE);  // lda < k
    CHECK(sgemm(h.handle, CUBLAS_OP_N, 64, 64, 64, 64, 63, 64) == CUBLAS_STATUS_INVALID_VALUE);  // ldb < k
    CHECK(sgemm(h.handle, CUBLAS_OP_N, 64, 64, 64, 64, 64, 63) == CUBLAS_STATUS_INVALID_VALUE);  // ldc < m
    CHECK(sgemm(h.handle, out_of_range<cublasOperation_t>(9), 64, 64, 64, 64, 64, 64) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemmStridedBatched(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &kOne, buffers.fa(), 64, 0,
                                    buffers.fb(), 64, 0, &kZero, buffers.fc(), 64, 0, -1) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasGemmEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &kOne, buffers.fa(), CUDA_R_32F, 64,
                       buffers.fb(), CUDA_R_16F, 64, &kZero, buffers.fc(), CUDA_R_32F, 64, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED);
    // Empty problems succeed without a launch.
    CHECK(sgemm(h.handle, CUBLAS_OP_N, 0, 64, 64, 1, 64, 1) == CUBLAS_STATUS_SUCCESS);
    CHECK(sgemm(h.handle, CUBLAS_OP_N, 64, 0, 64, 64, 64, 64) == CUBLAS_STATUS_SUCCESS);
    CHECK(records.of_kind(TBDSIM_RECORD_KERNEL).empty());
}

TEST_CASE("sgemm launches one named, annotated kernel per call") {
    Handle h;
    Buffers buffers;
    RecordCollector records;
    REQUIRE(cublasSgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, kSize, kSize, kSize, &kOne, buffers.fa(), kSize,
                        buffers.fb(), kSize, &kZero, buffers.fc(), kSize) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSgemm(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, 512, 256, kSize, &kOne, buffers.fa(), kSize,
                        buffers.fb(), kSize, &kZero, buffers.fc(), 512) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(SimulatedDriver::instance().ctx_synchronize(nullptr) == CUDA_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 2);

    const TbdsimRecord& square = kernels[0].record;
    CHECK(contains(kernels[0].name, "sm90_xmma_gemm_f32f32_f32f32_f32_nn_"));
    CHECK(square.grid[0] == 8);
    CHECK(square.grid[1] == 8);
    CHECK(square.grid[2] == 1);
    CHECK(square.block[0] == 256);
    CHECK(square.flops == doctest::Approx(2.0 * kSize * kSize * kSize));
    CHECK(square.precision == TBDSIM_PRECISION_FP32);
    CHECK(square.start_ns < square.end_ns);

    CHECK(contains(kernels[1].name, "_tn_"));
    CHECK(kernels[1].record.grid[0] == 4);
    CHECK(kernels[1].record.grid[1] == 2);
    CHECK(kernels[1].record.flops == doctest::Approx(2.0 * 512 * 256 * kSize));
}

TEST_CASE("small problems use the small kernels; k == 0 scales C unless beta is 1") {
    Handle h;
    Buffers buffers;
    RecordCollector records;
    CHECK(cublasSgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_T, 32, 32, 32, &kOne, buffers.fa(), 32, buffers.fb(), 32,
                      &kZero, buffers.fc(), 32) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 0, &kOne, buffers.fa(), 64, buffers.fb(), 1,
                      &kZero, buffers.fc(), 64) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 0, &kOne, buffers.fa(), 64, buffers.fb(), 1,
                      &kOne, buffers.fc(), 64) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 2);
    CHECK(kernels[0].name == "ampere_sgemm_32x32_sliced1x4_nt");
    CHECK(kernels[0].record.block[0] == 128);
    CHECK(kernels[1].record.flops == doctest::Approx(64.0 * 64.0));
}

TEST_CASE("strided batched GEMMs put the batch in gridDim.z") {
    Handle h;
    Buffers buffers;
    RecordCollector records;
    const long long stride = 256LL * 256;
    CHECK(cublasSgemmStridedBatched(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &kOne, buffers.fa(), 256,
                                    stride, buffers.fb(), 256, stride, &kZero, buffers.fc(), 256, stride,
                                    12) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasGemmStridedBatchedEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &kOne, buffers.fa(),
                                     CUDA_R_16F, 256, stride, buffers.fb(), CUDA_R_16F, 256, stride, &kZero,
                                     buffers.fc(), CUDA_R_32F, 256, stride, 3, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSgemmStridedBatched(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &kOne, buffers.fa(), 256,
                                    stride, buffers.fb(), 256, stride, &kZero, buffers.fc(), 256, stride,
                                    0) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 2);
    CHECK(kernels[0].record.grid[2] == 12);
    CHECK(kernels[0].record.flops == doctest::Approx(2.0 * 256 * 256 * 256 * 12));
    CHECK(contains(kernels[1].name, "sm90_xmma_gemm_f16f16_f16f32_f32_nn_"));
    CHECK(kernels[1].record.grid[2] == 3);
    CHECK(kernels[1].record.precision == TBDSIM_PRECISION_FP16);
}

TEST_CASE("TF32 comes from the compute type or the math mode") {
    Handle h;
    Buffers buffers;
    RecordCollector records;
    CHECK(cublasGemmEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 512, 512, 512, &kOne, buffers.fa(), CUDA_R_32F, 512,
                       buffers.fb(), CUDA_R_32F, 512, &kZero, buffers.fc(), CUDA_R_32F, 512,
                       CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasGemmEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 512, 512, 512, &kOne, buffers.fa(), CUDA_R_32F, 512,
                       buffers.fb(), CUDA_R_32F, 512, &kZero, buffers.fc(), CUDA_R_32F, 512, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSetMathMode(h.handle, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 512, 512, 512, &kOne, buffers.fa(), 512, buffers.fb(), 512,
                      &kZero, buffers.fc(), 512) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 3);
    CHECK(kernels[0].record.precision == TBDSIM_PRECISION_TF32);
    CHECK(contains(kernels[0].name, "tf32"));
    CHECK(kernels[1].record.precision == TBDSIM_PRECISION_FP32);
    CHECK(kernels[2].record.precision == TBDSIM_PRECISION_TF32);
}

TEST_CASE("the other math modes: FP16 under the deprecated tensor-op mode, BF16 under BF16x9 emulation") {
    Handle h;
    Buffers buffers;
    RecordCollector records;
    auto sgemm = [&] {
        return cublasSgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &kOne, buffers.fa(), 256, buffers.fb(),
                           256, &kZero, buffers.fc(), 256);
    };
    REQUIRE(cublasSetMathMode(h.handle, CUBLAS_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS);
    CHECK(sgemm() == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSetMathMode(h.handle, CUBLAS_FP32_EMULATED_BF16X9_MATH) == CUBLAS_STATUS_SUCCESS);
    CHECK(sgemm() == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSetMathMode(h.handle, CUBLAS_PEDANTIC_MATH) == CUBLAS_STATUS_SUCCESS);
    CHECK(sgemm() == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSetMathMode(h.handle, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasGemmEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &kOne, buffers.fa(), CUDA_R_32F, 256,
                       buffers.fb(), CUDA_R_32F, 256, &kZero, buffers.fc(), CUDA_R_32F, 256,
                       CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 4);
    CHECK(kernels[0].record.precision == TBDSIM_PRECISION_FP16);
    CHECK(kernels[1].record.precision == TBDSIM_PRECISION_BF16);
    CHECK(kernels[2].record.precision == TBDSIM_PRECISION_FP32);
    CHECK(kernels[3].record.precision == TBDSIM_PRECISION_BF16);
}

TEST_CASE("launches go to the handle's stream") {
    Handle h;
    Buffers buffers;
    auto& driver = SimulatedDriver::instance();
    CUstream stream = nullptr;
    REQUIRE(driver.stream_create(&stream, 0) == CUDA_SUCCESS);
    unsigned long long stream_id = 0;
    REQUIRE(driver.stream_get_id(stream, &stream_id) == CUDA_SUCCESS);
    RecordCollector records;
    REQUIRE(cublasSetStream(h.handle, stream) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &kOne, buffers.fa(), 256, buffers.fb(), 256,
                      &kZero, buffers.fc(), 256) == CUBLAS_STATUS_SUCCESS);
    CHECK(driver.stream_synchronize(stream) == CUDA_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].record.stream_id == stream_id);
    driver.stream_destroy(stream);
}

// The workspace cublasCreate allocates last: the 64 MiB cuBLAS 13 allocated on the real H200 (sm_90,
// as the default model). Older models are not tried: the simulated cuBLAS's kernels are built for
// sm_90 only, so cublasCreate fails before allocating there (docs/simgpu.md).
constexpr std::size_t kExpectedWorkspaceBytes = std::size_t{64} << 20;

TEST_CASE("a handle allocates 1 KiB, 128 KiB and its workspace at creation, as on the H200, and frees them") {
    SimulatedDriver::instance();
    RecordCollector records;
    {
        Handle h;
        const std::vector<CapturedRecord> allocations = records.of_kind(TBDSIM_RECORD_ALLOC);
        REQUIRE(allocations.size() == 3);
        CHECK(allocations[0].record.bytes == 1u << 10);
        CHECK(allocations[1].record.bytes == 128u << 10);
        CHECK(allocations[2].record.bytes == kExpectedWorkspaceBytes);
        CHECK(records.of_kind(TBDSIM_RECORD_FREE).empty());
    }
    const std::vector<CapturedRecord> frees = records.of_kind(TBDSIM_RECORD_FREE);
    REQUIRE(frees.size() == 3);
    std::size_t freed_bytes = 0;
    for (const CapturedRecord& free : frees) freed_bytes += free.record.bytes;
    CHECK(freed_bytes == (1u << 10) + (128u << 10) + kExpectedWorkspaceBytes);
}

TEST_CASE("cuBLAS reaches the driver only through cuGetProcAddress") {
    Handle h;
    Buffers buffers;
    RecordCollector records;
    CHECK(cublasSgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, 128, &kOne, buffers.fa(), 128, buffers.fb(), 128,
                      &kZero, buffers.fc(), 128) == CUBLAS_STATUS_SUCCESS);
    // The launch reached the driver...
    CHECK(records.of_kind(TBDSIM_RECORD_KERNEL).size() == 1);
    // ...but never through a symbol reference the dynamic linker could have bound.
    CHECK(tbdsim::testing::driver_calls_by_symbol_from_cublas() == 0);
}
