// FP32 FLOPs from library calls: exact sums, the split of a call over its kernels, tensor-core work
// apart, and the share of GPU time without FLOP information.
#include <doctest/doctest.h>

#include "tbdprof/analyzer/analyze.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {
constexpr int64_t kCompute32F = 68, kComputeTF32 = 77, kR32F = 0, kR16F = 2;
AnalysisOptions all_window() {
    AnalysisOptions options;
    options.window = WindowChoice::all;
    return options;
}
}  // namespace

TEST_CASE("FP32 FLOPs are the exact sum of FP32 GEMM FLOPs") {
    tbdtest::TraceBuilder t("flops_exact.sqlite");
    const double gemm1 = 2.0 * 512 * 256 * 128, gemm2 = 2.0 * 1024 * 1024 * 1024 * 3;
    t.kernel(0, 100, 2, 0, t.library_call(gemm1, kCompute32F, kR32F));
    t.kernel(200, 100, 2, 0, t.library_call(gemm2, std::nullopt, std::nullopt, "cublasSgemm_v2"));
    t.kernel(400, 100, 3, 0, t.library_call(1e9, kComputeTF32, kR32F));  // TF32: tensor cores
    t.kernel(600, 100, 3, 0, t.library_call(2e9, kCompute32F, kR16F));   // FP16 inputs: tensor cores
    t.kernel(800, 100, 1);                                               // no FLOP information
    const Report r = analyze_trace(t.finish(1000), all_window());
    CHECK(r.flops.fp32_flops == gemm1 + gemm2);
    CHECK(r.flops.tensor_flops == 3e9);
    CHECK(r.flops.fp32_flops_per_s == doctest::Approx((gemm1 + gemm2) / 1e-6));
    CHECK(r.flops.fp32_flops_per_busy_s == doctest::Approx((gemm1 + gemm2) / 500e-9));
    CHECK(r.flops.fp32_utilization == doctest::Approx((gemm1 + gemm2) / 1e-6 / 1e12));
    CHECK(r.flops.no_flop_info_share == doctest::Approx(0.2));
    CHECK(r.devices[0].fp32_flops == gemm1 + gemm2);
}

TEST_CASE("a call's FLOPs spread over its kernels by duration") {
    tbdtest::TraceBuilder t("flops_split.sqlite");
    t.range(0, 1000, "step");
    t.range(1000, 2000, "step");
    t.range(2000, 3000, "step");
    const int64_t call = t.library_call(4000, kCompute32F, kR32F);
    t.kernel(900, 100, 1, 0, call);   // starts in the first iteration: outside the steady window
    t.kernel(1000, 300, 2, 0, call);  // inside
    const Report r = analyze_trace(t.finish(3000), AnalysisOptions{});
    CHECK(r.window.used == "steady");
    CHECK(r.flops.fp32_flops == doctest::Approx(3000));
    REQUIRE(!r.kernels.top.empty());
    CHECK(r.kernels.top[0].name == "kernel_b");
    CHECK(r.kernels.top[0].flops == doctest::Approx(3000));
}

TEST_CASE("kernels of several functions in one call keep their own FLOPs in the top list") {
    tbdtest::TraceBuilder t("flops_mixed.sqlite");
    const int64_t call = t.library_call(1000, kCompute32F, kR32F);
    t.kernel(0, 100, 1, 0, call);
    t.kernel(100, 300, 2, 0, call);
    t.kernel(400, 100, 1, 0, call);
    const Report r = analyze_trace(t.finish(1000), all_window());
    CHECK(r.flops.fp32_flops == doctest::Approx(1000));
    REQUIRE(r.kernels.top.size() == 2);
    CHECK(r.kernels.top[0].name == "kernel_b");
    CHECK(r.kernels.top[0].flops == doctest::Approx(600));
    CHECK(r.kernels.top[1].flops == doctest::Approx(400));
    CHECK(r.kernels.top[0].share == doctest::Approx(0.6));
}

TEST_CASE("FP64 and integer work is neither FP32 nor tensor-core") {
    tbdtest::TraceBuilder t("flops_other.sqlite");
    t.kernel(0, 100, 1, 0, t.library_call(5e6, 70, 1));  // CUBLAS_COMPUTE_64F
    const Report r = analyze_trace(t.finish(1000), all_window());
    CHECK(r.flops.fp32_flops == 0);
    CHECK(r.flops.tensor_flops == 0);
    CHECK(r.flops.other_flops == 5e6);
    CHECK(r.flops.no_flop_info_share == 0);
}

TEST_CASE("per-iteration FLOPs are the window's FLOPs over the iterations in it") {
    tbdtest::TraceBuilder t("flops_per_iteration.sqlite");
    for (int i = 0; i < 4; ++i) {
        t.iteration(i * 1000, i * 1000 + 1000);
        t.kernel(i * 1000 + 100, 200, 2, 0, t.library_call(1500, kCompute32F, kR32F));
        t.kernel(i * 1000 + 400, 100, 3, 0, t.library_call(700, kComputeTF32, kR32F));
    }
    const Report r = analyze_trace(t.finish(4000), AnalysisOptions{});
    REQUIRE(r.iterations.count == 3);  // steady window: iterations 2..4
    REQUIRE(r.flops.fp32_flops_per_iteration);
    CHECK(*r.flops.fp32_flops_per_iteration == doctest::Approx(1500));
    CHECK(*r.flops.fp32_flops_per_iteration * 3 == doctest::Approx(r.flops.fp32_flops));
    CHECK(*r.flops.tensor_flops_per_iteration == doctest::Approx(700));
    CHECK(*r.iterations.kernels_per_iteration == doctest::Approx(2));
    CHECK(r.iterations.kernels_outside == 0);
}

TEST_CASE("no per-iteration figures when the window holds work outside its counted iterations") {
    tbdtest::TraceBuilder t("flops_per_iteration_gap.sqlite");
    // Every second iteration overlaps the one before: the reader leaves it out, and its work is in
    // the window between the counted ones.
    for (int i = 0; i < 6; ++i) {
        t.iteration(i * 1000 - (i % 2) * 100, i * 1000 + 1000);
        t.kernel(i * 1000 + 500, 100, 2, 0, t.library_call(1500, kCompute32F, kR32F));
    }
    const Report r = analyze_trace(t.finish(6000), AnalysisOptions{});
    CHECK(r.iterations.count == 2);  // 2000..3000 and 4000..5000; 2900..4000 in between is left out
    CHECK(r.iterations.kernels_outside > 0);
    CHECK_FALSE(r.flops.fp32_flops_per_iteration);
    bool noted = false;
    for (const std::string& note : r.notes) noted |= note.find("no per-iteration figures") != std::string::npos;
    CHECK(noted);
}

TEST_CASE("the collector's precision column decides, and each precision is against its own peak") {
    tbdtest::TraceBuilder t("flops_precision_column.sqlite");
    t.exec("UPDATE devices SET name = 'NVIDIA H100 80GB HBM3' WHERE id = 0");
    const int64_t sgemm_tf32 = t.library_call(1000, kCompute32F, kR32F, "cublasSgemm_v2");  // under TF32 math mode
    const int64_t sgemm = t.library_call(3000, kCompute32F, kR32F, "cublasSgemm_v2");
    const int64_t bf16 = t.library_call(5000, 75, kR32F, "cublasGemmEx");  // FAST_16BF, old trace row: no column
    t.exec("UPDATE library_calls SET precision = 'tf32', math_mode = 3 WHERE id = " + std::to_string(sgemm_tf32));
    t.exec("UPDATE library_calls SET precision = 'fp32', math_mode = 0 WHERE id = " + std::to_string(sgemm));
    t.kernel(0, 100, 2, 0, sgemm_tf32);
    t.kernel(200, 100, 2, 0, sgemm);
    t.kernel(400, 100, 3, 0, bf16);
    const Report r = analyze_trace(t.finish(1000), all_window());
    const auto& p = r.flops.by_precision;
    CHECK(r.flops.fp32_flops == 3000);
    CHECK(p[size_t(Precision::fp32)].flops == 3000);
    CHECK(p[size_t(Precision::tf32)].flops == 1000);
    CHECK(p[size_t(Precision::bf16)].flops == 5000);
    CHECK(r.flops.tensor_flops == 6000);
    CHECK(p[size_t(Precision::fp32)].peak_flops == doctest::Approx(1e12));
    CHECK(p[size_t(Precision::tf32)].peak_flops == doctest::Approx(1e12 * 494.7 / 66.9));
    CHECK(p[size_t(Precision::bf16)].peak_flops == doctest::Approx(1e12 * 989.4 / 66.9));
    CHECK(p[size_t(Precision::tf32)].utilization == doctest::Approx(1000 / 1e-6 / (1e12 * 494.7 / 66.9)));
}

TEST_CASE("a device the table does not know has unknown tensor-core peaks") {
    tbdtest::TraceBuilder t("flops_unknown_device.sqlite");
    t.exec("UPDATE devices SET name = 'Some Future GPU' WHERE id = 0");
    t.kernel(0, 100, 2, 0, t.library_call(1000, kComputeTF32, kR32F));
    const Report r = analyze_trace(t.finish(1000), all_window());
    CHECK(r.flops.by_precision[size_t(Precision::tf32)].flops == 1000);
    CHECK(r.flops.by_precision[size_t(Precision::tf32)].peak_flops == 0);
    CHECK(r.flops.by_precision[size_t(Precision::tf32)].utilization == 0);
}

TEST_CASE("a lagging device: the steady window leaves out the work launched before it") {
    // Host steps [0,100), [100,200), [200,300); each launches one FP32 GEMM of 1 MFLOP. The device
    // lags: the first step's GEMM runs [90,140), past the second step's host start.
    tbdtest::TraceBuilder t("flops_device_lag.sqlite");
    const int64_t starts[] = {90, 150, 250}, durations[] = {50, 40, 40};
    for (int i = 0; i < 3; ++i) {
        const int64_t begin = 100 * i, device_begin = starts[i], device_end = starts[i] + durations[i];
        t.exec(
            "INSERT INTO iterations (process, idx, begin_ns, end_ns, source, device_begin_ns, device_end_ns) "
            "VALUES (1, " +
            std::to_string(i) + ", " + std::to_string(begin) + ", " + std::to_string(begin + 100) + ", 'nvtx', " +
            std::to_string(device_begin) + ", " + std::to_string(device_end) + ")");
        t.kernel(starts[i], durations[i], 2, 0, t.library_call(1e6, kCompute32F, kR32F, "cublasGemmEx", begin + 5));
    }
    const Report r = analyze_trace(t.finish(400), AnalysisOptions{});
    CHECK(r.window.used == "steady");
    CHECK(r.window.begin_ns == 140);  // the first step's device work has ended
    CHECK(r.window.end_ns == 300);
    CHECK(r.iterations.count == 2);  // the second step still counts, though its host start is earlier
    CHECK(r.flops.fp32_flops == doctest::Approx(2e6));  // none of the first step's GEMM
    REQUIRE(r.flops.fp32_flops_per_iteration.has_value());
    CHECK(*r.flops.fp32_flops_per_iteration == doctest::Approx(1e6));
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].utilization == doctest::Approx(80.0 / 160.0));
}
