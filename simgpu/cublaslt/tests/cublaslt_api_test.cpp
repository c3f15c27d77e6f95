// cuBLASLt of the simulated GPU, driven through the real cublasLt.h API by a program linked against
// the real toolkit's libcublasLt and run with the simulated one first on LD_LIBRARY_PATH. Kernels
// are checked against the driver's ground-truth records (names, grids, FLOPs, precision, stream).
#include <cublasLt.h>
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

// Device memory big enough for every operand below.
struct Buffer {
    CUdeviceptr pointer = 0;
    explicit Buffer(size_t bytes = 64u << 20) {
        REQUIRE(SimulatedDriver::instance().mem_alloc(&pointer, bytes) == CUDA_SUCCESS);
    }
    ~Buffer() { SimulatedDriver::instance().mem_free(pointer); }
    void* get() const { return reinterpret_cast<void*>(pointer); }
};

struct Handle {
    cublasLtHandle_t handle = nullptr;
    Handle() { REQUIRE(cublasLtCreate(&handle) == CUBLAS_STATUS_SUCCESS); }
    ~Handle() { cublasLtDestroy(handle); }
};

template <typename T>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T value) {
    REQUIRE(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value) == CUBLAS_STATUS_SUCCESS);
}

template <typename T>
void set(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute, T value) {
    REQUIRE(cublasLtMatrixLayoutSetAttribute(layout, attribute, &value, sizeof value) == CUBLAS_STATUS_SUCCESS);
}

// One matmul problem: D (m x n) = op(A) op(B) + C, as a framework would describe it.
struct Problem {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
    Buffer operands{256u << 20};

    Problem(uint64_t m, uint64_t n, uint64_t k, cudaDataType ab_type = CUDA_R_32F, cudaDataType cd_type = CUDA_R_32F,
            cublasComputeType_t compute = CUBLAS_COMPUTE_32F, cublasOperation_t transa = CUBLAS_OP_N,
            cublasOperation_t transb = CUBLAS_OP_N) {
        REQUIRE(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
        set(desc, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(transa));
        set(desc, CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(transb));
        const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
        // Leading dimensions are at least 1, as for BLAS, even for an empty matrix.
        const auto ld = [](uint64_t rows) { return static_cast<int64_t>(rows > 0 ? rows : 1); };
        REQUIRE(cublasLtMatrixLayoutCreate(&a, ab_type, ta ? k : m, ta ? m : k, ld(ta ? k : m)) ==
                CUBLAS_STATUS_SUCCESS);
        REQUIRE(cublasLtMatrixLayoutCreate(&b, ab_type, tb ? n : k, tb ? k : n, ld(tb ? n : k)) ==
                CUBLAS_STATUS_SUCCESS);
        REQUIRE(cublasLtMatrixLayoutCreate(&c, cd_type, m, n, ld(m)) == CUBLAS_STATUS_SUCCESS);
        REQUIRE(cublasLtMatrixLayoutCreate(&d, cd_type, m, n, ld(m)) == CUBLAS_STATUS_SUCCESS);
    }
    ~Problem() {
        for (cublasLtMatrixLayout_t layout : {a, b, c, d}) cublasLtMatrixLayoutDestroy(layout);
        cublasLtMatmulDescDestroy(desc);
    }
    void batch(int32_t count, int64_t stride_a, int64_t stride_b, int64_t stride_cd) {
        for (cublasLtMatrixLayout_t layout : {a, b, c, d}) set(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count);
        set(a, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride_a);
        set(b, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride_b);
        set(c, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride_cd);
        set(d, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride_cd);
    }
    cublasStatus_t run(cublasLtHandle_t handle, cudaStream_t stream = nullptr,
                       const cublasLtMatmulAlgo_t* algo = nullptr, void* workspace = nullptr,
                       size_t workspace_bytes = 0) const {
        static const float one = 1.0f, zero = 0.0f;
        char* base = static_cast<char*>(operands.get());
        return cublasLtMatmul(handle, desc, &one, base, a, base + (64u << 20), b, &zero, base + (128u << 20), c,
                              base + (192u << 20), d, algo, workspace, workspace_bytes, stream);
    }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An enum value no enumerator has, as a careless caller would pass it.
template <typename Enum>
Enum out_of_range(int value) {
    return static_cast<Enum>(value);
}

}  // namespace

TEST_CASE("the simulated libcublasLt is the one loaded") {
    CHECK(tbdsim::test::loaded_from_simulated(reinterpret_cast<void*>(&cublasLtCreate), "libcublasLt.so"));
}

TEST_CASE("version and status names") {
    CHECK(cublasLtGetVersion() == CUBLAS_VERSION);
    int major = 0;
    CHECK(cublasLtGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS);
    CHECK(major == CUBLAS_VER_MAJOR);
    CHECK(std::string(cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED)) == "CUBLAS_STATUS_NOT_SUPPORTED");
    CHECK(std::string(cublasLtGetStatusString(CUBLAS_STATUS_SUCCESS)) == "success");
    CHECK(cublasLtCreate(nullptr) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasLtDestroy(nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
}

TEST_CASE("descriptor attributes round-trip with the documented size rules") {
    cublasLtMatmulDesc_t desc = nullptr;
    REQUIRE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
    int32_t compute = 0;
    size_t written = 0;
    CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute,
                                         &written) == CUBLAS_STATUS_SUCCESS);
    CHECK(compute == CUBLAS_COMPUTE_32F_FAST_TF32);
    CHECK(written == sizeof compute);
    uint32_t epilogue = 0;
    CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, nullptr) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(epilogue == CUBLASLT_EPILOGUE_DEFAULT);
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_RELU_BIAS));
    const void* bias = reinterpret_cast<const void*>(0x1000);
    set(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    const void* bias_back = nullptr;
    CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_back, sizeof bias_back,
                                         &written) == CUBLAS_STATUS_SUCCESS);
    CHECK(bias_back == bias);
    // A size query, a wrong size, no buffer.
    CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, nullptr, 0, &written) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(written == sizeof(int32_t));
    CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, nullptr, 0, nullptr) ==
          CUBLAS_STATUS_INVALID_VALUE);
    const int64_t too_wide = CUBLAS_OP_T;
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &too_wide, sizeof too_wide) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, sizeof(int32_t)) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasLtMatmulDescDestroy(desc) == CUBLAS_STATUS_SUCCESS);

    // Caller-owned storage, initialized in place.
    cublasLtMatrixLayoutOpaque_t storage{};
    REQUIRE(cublasLtMatrixLayoutInit(&storage, CUDA_R_16BF, 128, 64, 256) == CUBLAS_STATUS_SUCCESS);
    set(&storage, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{6});
    set(&storage, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t{256 * 64});
    uint64_t rows = 0;
    int64_t ld = 0, stride = 0;
    int32_t batch = 0, order = -1;
    uint32_t type = 0;
    CHECK(cublasLtMatrixLayoutGetAttribute(&storage, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &written) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(cublasLtMatrixLayoutGetAttribute(&storage, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld, &written) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(cublasLtMatrixLayoutGetAttribute(&storage, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch,
                                           &written) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasLtMatrixLayoutGetAttribute(&storage, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                           sizeof stride, &written) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasLtMatrixLayoutGetAttribute(&storage, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order, &written) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(cublasLtMatrixLayoutGetAttribute(&storage, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type, &written) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(rows == 128);
    CHECK(ld == 256);
    CHECK(batch == 6);
    CHECK(stride == 256 * 64);
    CHECK(order == CUBLASLT_ORDER_COL);
    CHECK(type == CUDA_R_16BF);
    CHECK(cublasLtMatrixLayoutGetAttribute(&storage, out_of_range<cublasLtMatrixLayoutAttribute_t>(99), &rows,
                                           sizeof rows, &written) == CUBLAS_STATUS_INVALID_VALUE);
    cublasLtMatmulDescOpaque_t too_small{};
    CHECK(cublasLtMatmulDescInit_internal(&too_small, 16, CUBLAS_COMPUTE_32F, CUDA_R_32F) ==
          CUBLAS_STATUS_ALLOC_FAILED);
}

TEST_CASE("the heuristic returns one algo whose workspace lies within the preference") {
    Handle h;
    Problem problem(512, 512, 512);
    cublasLtMatmulPreference_t preference = nullptr;
    REQUIRE(cublasLtMatmulPreferenceCreate(&preference) == CUBLAS_STATUS_SUCCESS);
    cublasLtMatmulHeuristicResult_t result{};
    int count = -1;
    for (const uint64_t limit : {uint64_t{0}, uint64_t{1} << 20, uint64_t{64} << 20}) {
        REQUIRE(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
                                                     sizeof limit) == CUBLAS_STATUS_SUCCESS);
        CHECK(cublasLtMatmulAlgoGetHeuristic(h.handle, problem.desc, problem.a, problem.b, problem.c, problem.d,
                                             preference, 1, &result, &count) == CUBLAS_STATUS_SUCCESS);
        CHECK(count == 1);
        CHECK(result.state == CUBLAS_STATUS_SUCCESS);
        CHECK(result.workspaceSize <= limit);
        if (limit > 0) CHECK(result.workspaceSize > 0);
    }
    CHECK(cublasLtMatmulAlgoGetHeuristic(h.handle, problem.desc, problem.a, problem.b, problem.c, problem.d,
                                         preference, 0, &result, &count) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasLtMatmulAlgoGetHeuristic(nullptr, problem.desc, problem.a, problem.b, problem.c, problem.d,
                                         preference, 1, &result, &count) == CUBLAS_STATUS_NOT_INITIALIZED);
    // The algo needs its workspace: a smaller one is refused, the right one runs.
    Buffer workspace(result.workspaceSize);
    RecordCollector records;
    CHECK(problem.run(h.handle, nullptr, &result.algo, workspace.get(), result.workspaceSize - 256) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(problem.run(h.handle, nullptr, &result.algo, workspace.get(), result.workspaceSize) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(records.of_kind(TBDSIM_RECORD_KERNEL).size() == 1);
    cublasLtMatmulPreferenceDestroy(preference);
}

TEST_CASE("bad arguments give the real status codes and launch nothing") {
    Handle h;
    RecordCollector records;
    Problem good(256, 128, 64);
    CHECK(good.run(nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
    const float one = 1.0f;
    CHECK(cublasLtMatmul(h.handle, nullptr, &one, nullptr, good.a, nullptr, good.b, &one, nullptr, good.c, nullptr,
                         good.d, nullptr, nullptr, 0, nullptr) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasLtMatmul(h.handle, good.desc, &one, nullptr, good.a, nullptr, good.b, &one, nullptr, good.c, nullptr,
                         nullptr, nullptr, nullptr, 0, nullptr) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(good.run(h.handle, nullptr, nullptr, nullptr, 1024) == CUBLAS_STATUS_INVALID_VALUE);  // size, no buffer

    Problem inner_mismatch(256, 128, 64);  // op(B) must have k = 64 rows
    set(inner_mismatch.b, CUBLASLT_MATRIX_LAYOUT_ROWS, uint64_t{65});
    set(inner_mismatch.b, CUBLASLT_MATRIX_LAYOUT_LD, int64_t{65});
    CHECK(inner_mismatch.run(h.handle) == CUBLAS_STATUS_INVALID_VALUE);
    Problem output_mismatch(256, 128, 64);  // C must be m x n like D
    set(output_mismatch.c, CUBLASLT_MATRIX_LAYOUT_COLS, uint64_t{127});
    CHECK(output_mismatch.run(h.handle) == CUBLAS_STATUS_INVALID_VALUE);
    Problem transposed_mismatch(256, 128, 64, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);
    set(transposed_mismatch.desc, CUBLASLT_MATMUL_DESC_TRANSA, int32_t{CUBLAS_OP_T});  // A is 256 x 64, op(A) 64 x 256
    CHECK(transposed_mismatch.run(h.handle) == CUBLAS_STATUS_INVALID_VALUE);
    Problem short_ld(256, 128, 64);
    set(short_ld.a, CUBLASLT_MATRIX_LAYOUT_LD, int64_t{255});
    CHECK(short_ld.run(h.handle) == CUBLAS_STATUS_INVALID_VALUE);
    Problem batch_mismatch(256, 128, 64);
    set(batch_mismatch.a, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{2});
    CHECK(batch_mismatch.run(h.handle) == CUBLAS_STATUS_INVALID_VALUE);
    Problem bad_transpose(256, 128, 64);
    set(bad_transpose.desc, CUBLASLT_MATMUL_DESC_TRANSB, int32_t{7});
    CHECK(bad_transpose.run(h.handle) == CUBLAS_STATUS_INVALID_VALUE);

    Problem row_major(256, 128, 64);
    set(row_major.a, CUBLASLT_MATRIX_LAYOUT_ORDER, int32_t{CUBLASLT_ORDER_ROW});
    CHECK(row_major.run(h.handle) == CUBLAS_STATUS_NOT_SUPPORTED);
    Problem mixed_inputs(256, 128, 64, CUDA_R_16F);
    set(mixed_inputs.b, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t{CUDA_R_16BF});
    CHECK(mixed_inputs.run(h.handle) == CUBLAS_STATUS_NOT_SUPPORTED);
    Problem not_an_epilogue(256, 128, 64);
    set(not_an_epilogue.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{3});
    CHECK(not_an_epilogue.run(h.handle) == CUBLAS_STATUS_NOT_SUPPORTED);
    Problem aux_missing(256, 128, 64);
    set(aux_missing.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_GELU_AUX));
    CHECK(aux_missing.run(h.handle) == CUBLAS_STATUS_INVALID_VALUE);
    Problem bias_missing(256, 128, 64);
    set(bias_missing.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_BIAS));
    CHECK(bias_missing.run(h.handle) == CUBLAS_STATUS_INVALID_VALUE);

    Problem empty(0, 128, 64);
    CHECK(empty.run(h.handle) == CUBLAS_STATUS_SUCCESS);  // nothing to do, nothing launched
    CHECK(records.of_kind(TBDSIM_RECORD_KERNEL).empty());
}

TEST_CASE("FP32 and TF32 matmuls launch one named, annotated kernel each") {
    Handle h;
    RecordCollector records;
    CHECK(Problem(1024, 512, 256).run(h.handle) == CUBLAS_STATUS_SUCCESS);
    CHECK(Problem(512, 512, 512, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_OP_T).run(h.handle) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(Problem(32, 32, 32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_OP_N, CUBLAS_OP_T).run(h.handle) ==
          CUBLAS_STATUS_SUCCESS);
    REQUIRE(SimulatedDriver::instance().ctx_synchronize(nullptr) == CUDA_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 3);
    CHECK(contains(kernels[0].name, "sm90_xmma_gemm_f32f32_f32f32_f32_nn_"));
    CHECK(kernels[0].record.grid[0] == 8);
    CHECK(kernels[0].record.grid[1] == 4);
    CHECK(kernels[0].record.grid[2] == 1);
    CHECK(kernels[0].record.flops == doctest::Approx(2.0 * 1024 * 512 * 256));
    CHECK(kernels[0].record.precision == TBDSIM_PRECISION_FP32);
    CHECK(contains(kernels[1].name, "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_"));
    CHECK(kernels[1].record.precision == TBDSIM_PRECISION_TF32);
    CHECK(kernels[2].name == "ampere_sgemm_32x32_sliced1x4_nt");
    CHECK(kernels[2].record.flops == doctest::Approx(2.0 * 32 * 32 * 32));
}

TEST_CASE("FP16 and BF16 inputs with FP32 compute run on the tensor-core kernels") {
    Handle h;
    RecordCollector records;
    CHECK(Problem(768, 256, 1024, CUDA_R_16F, CUDA_R_16F).run(h.handle) == CUBLAS_STATUS_SUCCESS);
    CHECK(Problem(768, 256, 1024, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUBLAS_OP_T).run(h.handle) ==
          CUBLAS_STATUS_SUCCESS);
    CHECK(Problem(768, 256, 1024, CUDA_R_16BF, CUDA_R_32F).run(h.handle) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 3);
    CHECK(contains(kernels[0].name, "sm90_xmma_gemm_f16f16_f16f32_f32_nn_"));
    CHECK(kernels[0].record.precision == TBDSIM_PRECISION_FP16);
    CHECK(kernels[0].record.grid[0] == 6);
    CHECK(kernels[0].record.grid[1] == 1);
    CHECK(kernels[0].record.flops == doctest::Approx(2.0 * 768 * 256 * 1024));
    CHECK(contains(kernels[1].name, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_"));
    CHECK(kernels[1].record.precision == TBDSIM_PRECISION_BF16);
    CHECK(kernels[2].record.precision == TBDSIM_PRECISION_BF16);
}

TEST_CASE("strided batches put the batch in gridDim.z and count every entry") {
    Handle h;
    RecordCollector records;
    Problem batched(128, 128, 64, CUDA_R_16F, CUDA_R_16F);
    batched.batch(12, 128 * 64, 64 * 128, 128 * 128);
    CHECK(batched.run(h.handle) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].record.grid[2] == 12);
    CHECK(kernels[0].record.flops == doctest::Approx(2.0 * 128 * 128 * 64 * 12));
}

TEST_CASE("bias epilogues are fused into the GEMM kernel and add no FLOPs") {
    Handle h;
    Buffer bias(1 << 20);
    RecordCollector records;
    Problem with_bias(512, 256, 128);
    set(with_bias.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_BIAS));
    set(with_bias.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias.get()));
    CHECK(with_bias.run(h.handle) == CUBLAS_STATUS_SUCCESS);
    Problem relu_bias(512, 256, 128, CUDA_R_16BF, CUDA_R_16BF);
    set(relu_bias.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_RELU_BIAS));
    set(relu_bias.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias.get()));
    CHECK(relu_bias.run(h.handle) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 2);
    CHECK(contains(kernels[0].name, "sm90_xmma_gemm_f32f32_f32f32_f32_nn_"));
    CHECK(contains(kernels[0].name, "_epilogue_bias"));
    CHECK(!contains(kernels[0].name, "relu"));
    CHECK(kernels[0].record.flops == doctest::Approx(2.0 * 512 * 256 * 128));
    CHECK(contains(kernels[1].name, "_epilogue_bias_relu"));
    CHECK(kernels[1].record.flops == doctest::Approx(2.0 * 512 * 256 * 128));
    CHECK(kernels[1].record.precision == TBDSIM_PRECISION_BF16);
}

TEST_CASE("every epilogue has its fused kernel; aux matrices add their bytes to the roofline") {
    Handle h;
    Buffer extra(64u << 20);
    char* base = static_cast<char*>(extra.get());
    RecordCollector records;
    // Memory-bound shape (k small): the aux matrix's bytes show in the duration.
    Problem plain(4096, 4096, 8, CUDA_R_16F, CUDA_R_16F);
    CHECK(plain.run(h.handle) == CUBLAS_STATUS_SUCCESS);
    Problem gelu_aux_bias(4096, 4096, 8, CUDA_R_16F, CUDA_R_16F);
    set(gelu_aux_bias.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_GELU_AUX_BIAS));
    set(gelu_aux_bias.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(base));
    set(gelu_aux_bias.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void*>(base + (1 << 20)));
    set(gelu_aux_bias.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t{4096});
    CHECK(gelu_aux_bias.run(h.handle) == CUBLAS_STATUS_SUCCESS);
    Problem dgelu_bgrad(256, 128, 64);
    set(dgelu_bgrad.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_DGELU_BGRAD));
    set(dgelu_bgrad.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(base));
    set(dgelu_bgrad.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void*>(base + (1 << 20)));
    set(dgelu_bgrad.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t{256});
    CHECK(dgelu_bgrad.run(h.handle) == CUBLAS_STATUS_SUCCESS);
    Problem bgradb(256, 128, 64);
    set(bgradb.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_BGRADB));
    set(bgradb.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(base));
    CHECK(bgradb.run(h.handle) == CUBLAS_STATUS_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 4);
    CHECK(contains(kernels[1].name, "_epilogue_bias_gelu_aux"));
    CHECK(kernels[1].record.flops == doctest::Approx(kernels[0].record.flops));  // no FLOPs of its own
    // Plain: A, B (4096 x 8 each) + C and D (4096 x 4096) in FP16; the aux matrix adds another 4096 x 4096.
    const double plain_bytes = 2.0 * (2 * 4096 * 8 + 2.0 * 4096 * 4096);
    const double aux_bytes = 2.0 * 4096 * 4096 + 2.0 * 4096;
    const auto duration = [](const CapturedRecord& r) { return static_cast<double>(r.record.end_ns - r.record.start_ns); };
    CHECK(duration(kernels[1]) / duration(kernels[0]) == doctest::Approx((plain_bytes + aux_bytes) / plain_bytes).epsilon(0.02));
    CHECK(contains(kernels[2].name, "_epilogue_dgelu_bgrad"));
    CHECK(contains(kernels[3].name, "_epilogue_bgradb"));
}

TEST_CASE("algo ids, initialization, configuration, capabilities and check") {
    Handle h;
    int ids[4] = {-1, -1, -1, -1}, count = 0;
    REQUIRE(cublasLtMatmulAlgoGetIds(h.handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F,
                                     CUDA_R_16F, 4, ids, &count) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(count == 1);
    cublasLtMatmulAlgo_t algo{};
    REQUIRE(cublasLtMatmulAlgoInit(h.handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F,
                                   CUDA_R_16F, ids[0], &algo) == CUBLAS_STATUS_SUCCESS);
    const uint32_t splitk = 4;
    REQUIRE(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk) ==
            CUBLAS_STATUS_SUCCESS);
    uint32_t read_back = 0;
    size_t written = 0;
    REQUIRE(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &read_back, sizeof read_back,
                                                 &written) == CUBLAS_STATUS_SUCCESS);
    CHECK(read_back == 4);
    CHECK(written == sizeof(uint32_t));
    CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, 2) ==
          CUBLAS_STATUS_INVALID_VALUE);  // wrong size
    uint32_t epilogues = 0;
    REQUIRE(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_EPILOGUE_MASK, &epilogues, sizeof epilogues,
                                              &written) == CUBLAS_STATUS_SUCCESS);
    CHECK((epilogues & CUBLASLT_EPILOGUE_GELU) != 0);
    Problem problem(256, 128, 64, CUDA_R_16F, CUDA_R_16F);
    cublasLtMatmulHeuristicResult_t result{};
    REQUIRE(cublasLtMatmulAlgoCheck(h.handle, problem.desc, problem.a, problem.b, problem.c, problem.d, &algo,
                                    &result) == CUBLAS_STATUS_SUCCESS);
    CHECK(result.workspaceSize > 0);  // split-K sums partial products in the workspace
    CHECK(problem.run(h.handle, nullptr, &algo) == CUBLAS_STATUS_INVALID_VALUE);  // ... which was not given
}

TEST_CASE("cublasLtMatrixTransform launches one kernel timed by the bytes it moves") {
    Handle h;
    Buffer matrices(64u << 20);
    char* base = static_cast<char*>(matrices.get());
    cublasLtMatrixTransformDesc_t desc = nullptr;
    REQUIRE(cublasLtMatrixTransformDescCreate(&desc, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
    const int32_t transpose = CUBLAS_OP_T;
    REQUIRE(cublasLtMatrixTransformDescSetAttribute(desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &transpose,
                                                    sizeof transpose) == CUBLAS_STATUS_SUCCESS);
    cublasLtMatrixLayout_t a = nullptr, c = nullptr;
    REQUIRE(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 512, 1024, 512) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, 1024, 512, 1024) == CUBLAS_STATUS_SUCCESS);
    const int32_t row = CUBLASLT_ORDER_ROW;
    set(c, CUBLASLT_MATRIX_LAYOUT_ORDER, row);
    const float one = 1, zero = 0;
    RecordCollector records;
    REQUIRE(cublasLtMatrixTransform(h.handle, desc, &one, base, a, &zero, nullptr, nullptr, base + (8 << 20), c,
                                    nullptr) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasLtMatrixTransform(h.handle, desc, &one, base, c, &zero, nullptr, nullptr, base, c, nullptr) ==
          CUBLAS_STATUS_INVALID_VALUE);  // op(A) is not C's shape
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].name == "matrix_transform_kernel_s");
    CHECK(kernels[0].record.flops == doctest::Approx(3.0 * 1024 * 512));
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixTransformDescDestroy(desc);
}

TEST_CASE("settings and the emulation descriptor keep what they are given") {
    size_t capacity = 0;
    REQUIRE(cublasLtHeuristicsCacheSetCapacity(100) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasLtHeuristicsCacheGetCapacity(&capacity) == CUBLAS_STATUS_SUCCESS);
    CHECK(capacity == 100);
    CHECK(cublasLtLoggerSetLevel(2) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasLtLoggerSetLevel(9) == CUBLAS_STATUS_INVALID_VALUE);
    // Declared by cublasLt.h, not exported by the toolkit's import library: looked up at run time.
    using SetMask = unsigned (*)(unsigned);
    const auto set_mask = reinterpret_cast<SetMask>(dlsym(RTLD_DEFAULT, "cublasLtDisableCpuInstructionsSetMask"));
    REQUIRE(reinterpret_cast<void*>(set_mask) != nullptr);
    set_mask(5);
    CHECK(set_mask(0) == 5);  // returns the previous mask
    cublasLtEmulationDesc_t emulation = nullptr;
    REQUIRE(cublasLtEmulationDescCreate(&emulation) == CUBLAS_STATUS_SUCCESS);
    int32_t special = 0;
    size_t written = 0;
    REQUIRE(cublasLtEmulationDescGetAttribute(emulation, CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT, &special,
                                              sizeof special, &written) == CUBLAS_STATUS_SUCCESS);
    CHECK(special == 0xFFFF);  // the documented default
    const int32_t offset = 3;
    REQUIRE(cublasLtEmulationDescSetAttribute(emulation, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET, &offset,
                                              sizeof offset) == CUBLAS_STATUS_SUCCESS);
    int32_t read_back = 0;
    REQUIRE(cublasLtEmulationDescGetAttribute(emulation, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET,
                                              &read_back, sizeof read_back, &written) == CUBLAS_STATUS_SUCCESS);
    CHECK(read_back == 3);
    CHECK(cublasLtEmulationDescDestroy(emulation) == CUBLAS_STATUS_SUCCESS);
}

TEST_CASE("launches go to the stream given to each call") {
    Handle h;
    auto& driver = SimulatedDriver::instance();
    CUstream stream = nullptr;
    REQUIRE(driver.stream_create(&stream, 0) == CUDA_SUCCESS);
    unsigned long long stream_id = 0;
    REQUIRE(driver.stream_get_id(stream, &stream_id) == CUDA_SUCCESS);
    RecordCollector records;
    CHECK(Problem(256, 256, 256).run(h.handle, reinterpret_cast<cudaStream_t>(stream)) == CUBLAS_STATUS_SUCCESS);
    CHECK(driver.stream_synchronize(stream) == CUDA_SUCCESS);
    const std::vector<CapturedRecord> kernels = records.of_kind(TBDSIM_RECORD_KERNEL);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].record.stream_id == stream_id);
    driver.stream_destroy(stream);
}

TEST_CASE("cuBLASLt reaches the driver only through cuGetProcAddress") {
    Handle h;
    RecordCollector records;
    CHECK(Problem(128, 128, 128).run(h.handle) == CUBLAS_STATUS_SUCCESS);
    CHECK(records.of_kind(TBDSIM_RECORD_KERNEL).size() == 1);
    // The interposers count calls from any library whose name contains "libcublas".
    CHECK(tbdsim::testing::driver_calls_by_symbol_from_cublas() == 0);
}
