// The simulated CUPTI range profiler used the way a profiler uses it (auto ranges, kernel replay), by a
// program linked against the real libcupti and run with the simulated libraries first. The expected
// counts are what the test itself told the cost model (annotate_next_launch): FLOPs exact, split into
// FFMA/FMUL for FP32 and into the tensor-path counters for TF32/FP16/BF16; NaN for unannotated work.
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "loaded_library.h"
#include "simulated_driver.h"

using tbdsim::testing::SimulatedDriver;

extern "C" const unsigned char tbdsim_cupti_test_fatbin[];

namespace {

const char* const kMetrics[] = {
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum",           "sm__ops_path_tensor_src_bf16_dst_fp32.sum"};
constexpr size_t kMetricCount = sizeof kMetrics / sizeof kMetrics[0];

CUfunction scale_kernel() {
    static CUfunction function = [] {
        CUmodule module = nullptr;
        REQUIRE(SimulatedDriver::instance().module_load_data(&module, tbdsim_cupti_test_fatbin) == CUDA_SUCCESS);
        CUfunction f = nullptr;
        REQUIRE(SimulatedDriver::instance().module_get_function(&f, module, "_Z12scale_kernelPffi") == CUDA_SUCCESS);
        return f;
    }();
    return function;
}

void launch(double flops, uint32_t precision) {
    auto& driver = SimulatedDriver::instance();
    if (flops > 0) driver.private_api->annotate_next_launch(flops, precision);
    CUdeviceptr values = 0;
    float factor = 2.0f;
    int count = 256;
    void* arguments[] = {&values, &factor, &count};
    REQUIRE(driver.launch_kernel(scale_kernel(), 1, 1, 1, 256, 1, 1, 0, nullptr, arguments, nullptr) == CUDA_SUCCESS);
}

struct Session {
    CUpti_Profiler_Host_Object* host = nullptr;
    CUpti_RangeProfiler_Object* profiler = nullptr;
    std::vector<uint8_t> config;
    std::vector<uint64_t> counter_storage;  // 8-byte aligned counter data image
    uint8_t* counter_data = nullptr;
    size_t counter_data_size = 0;

    explicit Session(size_t max_ranges) {
        CUcontext ctx = nullptr;
        REQUIRE(SimulatedDriver::instance().ctx_get_current(&ctx) == CUDA_SUCCESS);
        CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE, nullptr};
        REQUIRE(cuptiProfilerInitialize(&init) == CUPTI_SUCCESS);
        CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE, nullptr, 0, nullptr};
        REQUIRE(cuptiDeviceGetChipName(&chip) == CUPTI_SUCCESS);
        CUpti_Profiler_GetCounterAvailability_Params availability{};
        availability.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
        availability.ctx = ctx;
        REQUIRE(cuptiProfilerGetCounterAvailability(&availability) == CUPTI_SUCCESS);
        std::vector<uint8_t> availability_image(availability.counterAvailabilityImageSize);
        availability.pCounterAvailabilityImage = availability_image.data();
        REQUIRE(cuptiProfilerGetCounterAvailability(&availability) == CUPTI_SUCCESS);

        CUpti_Profiler_Host_Initialize_Params host_init{};
        host_init.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
        host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        host_init.pChipName = chip.pChipName;
        host_init.pCounterAvailabilityImage = availability_image.data();
        REQUIRE(cuptiProfilerHostInitialize(&host_init) == CUPTI_SUCCESS);
        host = host_init.pHostObject;
        CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
        add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
        add.pHostObject = host;
        add.ppMetricNames = const_cast<const char**>(kMetrics);
        add.numMetrics = kMetricCount;
        REQUIRE(cuptiProfilerHostConfigAddMetrics(&add) == CUPTI_SUCCESS);
        CUpti_Profiler_Host_GetConfigImageSize_Params size{};
        size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
        size.pHostObject = host;
        REQUIRE(cuptiProfilerHostGetConfigImageSize(&size) == CUPTI_SUCCESS);
        config.resize(size.configImageSize);
        CUpti_Profiler_Host_GetConfigImage_Params image{};
        image.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
        image.pHostObject = host;
        image.configImageSize = config.size();
        image.pConfigImage = config.data();
        REQUIRE(cuptiProfilerHostGetConfigImage(&image) == CUPTI_SUCCESS);

        CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, nullptr, ctx, nullptr};
        REQUIRE(cuptiRangeProfilerEnable(&enable) == CUPTI_SUCCESS);
        profiler = enable.pRangeProfilerObject;
        CUpti_RangeProfiler_GetCounterDataSize_Params data_size{};
        data_size.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
        data_size.pRangeProfilerObject = profiler;
        data_size.pMetricNames = const_cast<const char**>(kMetrics);
        data_size.numMetrics = kMetricCount;
        data_size.maxNumOfRanges = max_ranges;
        data_size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_ranges);
        REQUIRE(cuptiRangeProfilerGetCounterDataSize(&data_size) == CUPTI_SUCCESS);
        counter_storage.resize((data_size.counterDataSize + 7) / 8);
        counter_data = reinterpret_cast<uint8_t*>(counter_storage.data());
        counter_data_size = data_size.counterDataSize;
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params data_init{};
        data_init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
        data_init.pRangeProfilerObject = profiler;
        data_init.counterDataSize = counter_data_size;
        data_init.pCounterData = counter_data;
        REQUIRE(cuptiRangeProfilerCounterDataImageInitialize(&data_init) == CUPTI_SUCCESS);
        CUpti_RangeProfiler_SetConfig_Params set{};
        set.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
        set.pRangeProfilerObject = profiler;
        set.configSize = config.size();
        set.pConfig = config.data();
        set.counterDataImageSize = counter_data_size;
        set.pCounterDataImage = counter_data;
        set.range = CUPTI_AutoRange;
        set.replayMode = CUPTI_KernelReplay;
        set.maxRangesPerPass = max_ranges;
        set.numNestingLevels = 1;
        set.minNestingLevel = 1;
        REQUIRE(cuptiRangeProfilerSetConfig(&set) == CUPTI_SUCCESS);
    }

    void start() {
        CUpti_RangeProfiler_Start_Params p{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE, nullptr, profiler};
        REQUIRE(cuptiRangeProfilerStart(&p) == CUPTI_SUCCESS);
    }

    // Stop, decode, and the values of every range (one row per range, kMetricCount values).
    std::vector<std::vector<double>> stop_and_evaluate(size_t& dropped) {
        CUpti_RangeProfiler_Stop_Params stop{};
        stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
        stop.pRangeProfilerObject = profiler;
        REQUIRE(cuptiRangeProfilerStop(&stop) == CUPTI_SUCCESS);
        CHECK(stop.isAllPassSubmitted == 1);
        CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE, nullptr,
                                                     profiler, 0};
        REQUIRE(cuptiRangeProfilerDecodeData(&decode) == CUPTI_SUCCESS);
        dropped = decode.numOfRangeDropped;
        CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
        info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
        info.pCounterDataImage = counter_data;
        info.counterDataImageSize = counter_data_size;
        REQUIRE(cuptiRangeProfilerGetCounterDataInfo(&info) == CUPTI_SUCCESS);
        std::vector<std::vector<double>> rows;
        for (size_t range = 0; range < info.numTotalRanges; ++range) {
            std::vector<double> values(kMetricCount);
            CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{};
            eval.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
            eval.pHostObject = host;
            eval.pCounterDataImage = counter_data;
            eval.counterDataImageSize = counter_data_size;
            eval.rangeIndex = range;
            eval.ppMetricNames = const_cast<const char**>(kMetrics);
            eval.numMetrics = kMetricCount;
            eval.pMetricValues = values.data();
            REQUIRE(cuptiProfilerHostEvaluateToGpuValues(&eval) == CUPTI_SUCCESS);
            rows.push_back(values);
        }
        return rows;
    }

    ~Session() {
        CUpti_RangeProfiler_Disable_Params disable{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE, nullptr, profiler};
        CHECK(cuptiRangeProfilerDisable(&disable) == CUPTI_SUCCESS);
        CUpti_Profiler_Host_Deinitialize_Params host_done{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE, nullptr,
                                                          host};
        CHECK(cuptiProfilerHostDeinitialize(&host_done) == CUPTI_SUCCESS);
        CUpti_Profiler_DeInitialize_Params done{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE, nullptr};
        CHECK(cuptiProfilerDeInitialize(&done) == CUPTI_SUCCESS);
    }
};

}  // namespace

TEST_CASE("the simulated libcupti is the one loaded") {
    CHECK(tbdsim::test::loaded_from_simulated(reinterpret_cast<void*>(&cuptiRangeProfilerEnable), "libcupti.so"));
}

TEST_CASE("struct sizes, pPriv and metric names are checked as the real API documents") {
    SimulatedDriver::instance();
    CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE - 1, nullptr};
    CHECK(cuptiProfilerInitialize(&init) == CUPTI_ERROR_INVALID_PARAMETER);
    int not_null = 0;
    init = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE, &not_null};
    CHECK(cuptiProfilerInitialize(&init) == CUPTI_ERROR_INVALID_PARAMETER);
    CHECK(cuptiProfilerInitialize(nullptr) == CUPTI_ERROR_INVALID_PARAMETER);
    CUcontext ctx = nullptr;
    REQUIRE(SimulatedDriver::instance().ctx_get_current(&ctx) == CUDA_SUCCESS);
    CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, nullptr, ctx, nullptr};
    CHECK(cuptiRangeProfilerEnable(&enable) == CUPTI_ERROR_NOT_INITIALIZED);  // before cuptiProfilerInitialize

    CUpti_Profiler_Host_Initialize_Params host_init{};
    host_init.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
    host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host_init.pChipName = "GA100";
    CHECK(cuptiProfilerHostInitialize(&host_init) == CUPTI_ERROR_INVALID_PARAMETER);
    host_init.pChipName = "GH100";
    REQUIRE(cuptiProfilerHostInitialize(&host_init) == CUPTI_SUCCESS);
    const char* bad[] = {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "no_such_metric.sum"};
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
    add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
    add.pHostObject = host_init.pHostObject;
    add.ppMetricNames = bad;
    add.numMetrics = 2;
    CHECK(cuptiProfilerHostConfigAddMetrics(&add) == CUPTI_ERROR_INVALID_METRIC_NAME);
    CUpti_Profiler_Host_GetMetricProperties_Params properties{};
    properties.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
    properties.pHostObject = host_init.pHostObject;
    properties.pMetricName = bad[0];
    CHECK(cuptiProfilerHostGetMetricProperties(&properties) == CUPTI_SUCCESS);
    CHECK(std::string(properties.pDimUnit) == "inst");
    CUpti_Profiler_Host_Deinitialize_Params host_done{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE, nullptr,
                                                      host_init.pHostObject};
    CHECK(cuptiProfilerHostDeinitialize(&host_done) == CUPTI_SUCCESS);
}

TEST_CASE("one range per kernel: exact counts for annotated work, NaN for the rest") {
    Session session(16);
    session.start();
    launch(2.0 * 64 * 32 * 16, 1);  // FP32 SGEMM 64x32x16
    launch(0, 0);                   // nothing the simulator can count
    launch(4097, 1);                // odd FP32 count: one FMUL
    launch(1.0e6, 2);               // TF32 tensor cores
    launch(3.0e6, 4);               // BF16 tensor cores
    size_t dropped = 99;
    const auto rows = session.stop_and_evaluate(dropped);
    CHECK(dropped == 0);
    REQUIRE(rows.size() == 5);
    // fadd, fmul, ffma, tf32, fp16, bf16
    CHECK(rows[0] == std::vector<double>{0, 0, 64 * 32 * 16, 0, 0, 0});
    for (double value : rows[1]) CHECK(std::isnan(value));
    CHECK(rows[2] == std::vector<double>{0, 1, 2048, 0, 0, 0});
    CHECK(rows[3] == std::vector<double>{0, 0, 0, 1.0e6, 0, 0});
    CHECK(rows[4] == std::vector<double>{0, 0, 0, 0, 0, 3.0e6});

    // Outside Start/Stop nothing is counted; the next pass continues the auto range numbering.
    launch(100, 1);
    session.start();
    launch(200, 1);
    const auto second = session.stop_and_evaluate(dropped);
    REQUIRE(second.size() == 1);
    CHECK(second[0][2] == 100);
}

TEST_CASE("ranges beyond the counter data image are dropped and counted") {
    Session session(2);
    session.start();
    for (int i = 0; i < 5; ++i) launch(10, 1);
    size_t dropped = 0;
    const auto rows = session.stop_and_evaluate(dropped);
    CHECK(rows.size() == 2);
    CHECK(dropped == 3);
}
