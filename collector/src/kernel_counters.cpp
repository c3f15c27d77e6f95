#include "tbdprof/collector/kernel_counters.h"

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "tbdprof/collector/symbol_lookup.h"
#include "tbdprof/collector/user_messages.h"
#include "tbdprof/raw_format.h"

namespace tbdprof::collector::counters {

std::atomic<bool> g_requested{false};

namespace {

// FP32 SIMT thread instructions (FLOPs = fadd + fmul + 2*ffma) and the tensor-path math operations
// of the FP32-input precisions (each counts FLOPs). Metrics the chip's CUPTI does not know are left out.
const char* const kFlopMetrics[] = {
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum",           "sm__ops_path_tensor_src_bf16_dst_fp32.sum"};

// Ranges per pass: the counter data image holds this many; we collect before it can overflow.
constexpr size_t kLaunchesPerPass = 256;
constexpr size_t kMaxContexts = 8;

struct Api {
    decltype(&cuptiProfilerInitialize) initialize = nullptr;
    decltype(&cuptiDeviceGetChipName) chip_name = nullptr;
    decltype(&cuptiProfilerGetCounterAvailability) availability = nullptr;
    decltype(&cuptiProfilerHostInitialize) host_initialize = nullptr;
    decltype(&cuptiProfilerHostConfigAddMetrics) add_metrics = nullptr;
    decltype(&cuptiProfilerHostGetConfigImageSize) config_size = nullptr;
    decltype(&cuptiProfilerHostGetConfigImage) config_image = nullptr;
    decltype(&cuptiProfilerHostEvaluateToGpuValues) evaluate = nullptr;
    decltype(&cuptiRangeProfilerEnable) enable = nullptr;
    decltype(&cuptiRangeProfilerGetCounterDataSize) counter_data_size = nullptr;
    decltype(&cuptiRangeProfilerCounterDataImageInitialize) counter_data_init = nullptr;
    decltype(&cuptiRangeProfilerSetConfig) set_config = nullptr;
    decltype(&cuptiRangeProfilerStart) start = nullptr;
    decltype(&cuptiRangeProfilerStop) stop = nullptr;
    decltype(&cuptiRangeProfilerDecodeData) decode = nullptr;
    decltype(&cuptiRangeProfilerGetCounterDataInfo) data_info = nullptr;
    decltype(&cuCtxGetCurrent) ctx_get_current = nullptr;
    decltype(&cuCtxGetDevice) ctx_get_device = nullptr;
    decltype(&cuCtxGetId) ctx_get_id = nullptr;
};

struct ContextProfiler {
    CUcontext ctx = nullptr;
    uint32_t context_id = 0;
    CUpti_RangeProfiler_Object* object = nullptr;
    std::vector<uint64_t> counter_data;  // 8-byte aligned image
    size_t counter_data_bytes = 0;
    size_t launches_in_pass = 0;
    uint64_t next_range_number = 0;
    bool started = false;
};

enum class Setup { NotTried, Ready, Failed };

std::mutex g_mutex;  // held across each recorded launch while counters are requested
Setup g_setup = Setup::NotTried;
Api g_api;
CUpti_Profiler_Host_Object* g_host = nullptr;
std::vector<const char*> g_metrics;  // accepted by the chip's CUPTI
std::vector<uint8_t> g_config;
ContextProfiler g_contexts[kMaxContexts];
size_t g_context_count = 0;
bool g_warned = false;

void warn(const char* what, int code) {
    if (g_warned) return;
    g_warned = true;
    tell_user("--metrics: hardware counters unavailable (%s, CUPTI result %d); recording without them", what, code);
}

bool load_api() {
    void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cupti == nullptr || driver == nullptr) return false;
    return resolve(cupti, "cuptiProfilerInitialize", g_api.initialize) &&
           resolve(cupti, "cuptiDeviceGetChipName", g_api.chip_name) &&
           resolve(cupti, "cuptiProfilerGetCounterAvailability", g_api.availability) &&
           resolve(cupti, "cuptiProfilerHostInitialize", g_api.host_initialize) &&
           resolve(cupti, "cuptiProfilerHostConfigAddMetrics", g_api.add_metrics) &&
           resolve(cupti, "cuptiProfilerHostGetConfigImageSize", g_api.config_size) &&
           resolve(cupti, "cuptiProfilerHostGetConfigImage", g_api.config_image) &&
           resolve(cupti, "cuptiProfilerHostEvaluateToGpuValues", g_api.evaluate) &&
           resolve(cupti, "cuptiRangeProfilerEnable", g_api.enable) &&
           resolve(cupti, "cuptiRangeProfilerGetCounterDataSize", g_api.counter_data_size) &&
           resolve(cupti, "cuptiRangeProfilerCounterDataImageInitialize", g_api.counter_data_init) &&
           resolve(cupti, "cuptiRangeProfilerSetConfig", g_api.set_config) &&
           resolve(cupti, "cuptiRangeProfilerStart", g_api.start) &&
           resolve(cupti, "cuptiRangeProfilerStop", g_api.stop) &&
           resolve(cupti, "cuptiRangeProfilerDecodeData", g_api.decode) &&
           resolve(cupti, "cuptiRangeProfilerGetCounterDataInfo", g_api.data_info) &&
           resolve(driver, "cuCtxGetCurrent", g_api.ctx_get_current) &&
           resolve(driver, "cuCtxGetDevice", g_api.ctx_get_device) && resolve(driver, "cuCtxGetId", g_api.ctx_get_id);
}

// Host side, once: profiler initialized, the chip's host object, the config image of the metrics the
// chip accepts (a name it refuses is dropped, the rest are kept).
bool set_up_host(CUcontext ctx) {
    CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE, nullptr};
    if (CUptiResult r = g_api.initialize(&init); r != CUPTI_SUCCESS) return warn("cuptiProfilerInitialize", r), false;
    CUdevice device = 0;
    if (g_api.ctx_get_device(&device) != CUDA_SUCCESS) return false;
    CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE, nullptr,
                                         static_cast<size_t>(device), nullptr};
    if (CUptiResult r = g_api.chip_name(&chip); r != CUPTI_SUCCESS) return warn("cuptiDeviceGetChipName", r), false;
    CUpti_Profiler_GetCounterAvailability_Params availability{};
    availability.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
    availability.ctx = ctx;
    if (CUptiResult r = g_api.availability(&availability); r != CUPTI_SUCCESS)
        return warn("cuptiProfilerGetCounterAvailability", r), false;
    std::vector<uint8_t> availability_image(availability.counterAvailabilityImageSize);
    availability.pCounterAvailabilityImage = availability_image.data();
    if (CUptiResult r = g_api.availability(&availability); r != CUPTI_SUCCESS)
        return warn("cuptiProfilerGetCounterAvailability", r), false;

    CUpti_Profiler_Host_Initialize_Params host{};
    host.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip.pChipName;
    host.pCounterAvailabilityImage = availability_image.data();
    if (CUptiResult r = g_api.host_initialize(&host); r != CUPTI_SUCCESS)
        return warn("cuptiProfilerHostInitialize", r), false;
    g_host = host.pHostObject;
    for (const char* metric : kFlopMetrics) {
        CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
        add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
        add.pHostObject = g_host;
        add.ppMetricNames = &metric;
        add.numMetrics = 1;
        if (g_api.add_metrics(&add) == CUPTI_SUCCESS) g_metrics.push_back(metric);
    }
    if (g_metrics.empty()) return warn("no FLOP metric known to this chip", CUPTI_ERROR_INVALID_METRIC_NAME), false;
    CUpti_Profiler_Host_GetConfigImageSize_Params size{};
    size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
    size.pHostObject = g_host;
    if (CUptiResult r = g_api.config_size(&size); r != CUPTI_SUCCESS) return warn("config image size", r), false;
    g_config.resize(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params image{};
    image.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
    image.pHostObject = g_host;
    image.configImageSize = g_config.size();
    image.pConfigImage = g_config.data();
    if (CUptiResult r = g_api.config_image(&image); r != CUPTI_SUCCESS) return warn("config image", r), false;
    return true;
}

// A fresh counter data image and the configuration for the next pass.
bool configure_pass(ContextProfiler& p) {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{};
    init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
    init.pRangeProfilerObject = p.object;
    init.counterDataSize = p.counter_data_bytes;
    init.pCounterData = reinterpret_cast<uint8_t*>(p.counter_data.data());
    if (CUptiResult r = g_api.counter_data_init(&init); r != CUPTI_SUCCESS) return warn("counter data image", r), false;
    CUpti_RangeProfiler_SetConfig_Params set{};
    set.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
    set.pRangeProfilerObject = p.object;
    set.configSize = g_config.size();
    set.pConfig = g_config.data();
    set.counterDataImageSize = p.counter_data_bytes;
    set.pCounterDataImage = reinterpret_cast<uint8_t*>(p.counter_data.data());
    set.range = CUPTI_AutoRange;
    set.replayMode = CUPTI_KernelReplay;
    set.maxRangesPerPass = kLaunchesPerPass;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    if (CUptiResult r = g_api.set_config(&set); r != CUPTI_SUCCESS)
        return warn("cuptiRangeProfilerSetConfig", r), false;
    CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE, nullptr, p.object};
    if (CUptiResult r = g_api.start(&start); r != CUPTI_SUCCESS) return warn("cuptiRangeProfilerStart", r), false;
    p.started = true;
    p.launches_in_pass = 0;
    return true;
}

ContextProfiler* enable_on(CUcontext ctx) {
    if (g_context_count == kMaxContexts) return nullptr;  // further contexts are not profiled
    ContextProfiler& p = g_contexts[g_context_count];
    unsigned long long id = 0;
    if (g_api.ctx_get_id(ctx, &id) != CUDA_SUCCESS) return nullptr;
    CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, nullptr, ctx, nullptr};
    if (CUptiResult r = g_api.enable(&enable); r != CUPTI_SUCCESS) return warn("cuptiRangeProfilerEnable", r), nullptr;
    p.ctx = ctx;
    p.context_id = static_cast<uint32_t>(id);
    p.object = enable.pRangeProfilerObject;
    CUpti_RangeProfiler_GetCounterDataSize_Params size{};
    size.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
    size.pRangeProfilerObject = p.object;
    size.pMetricNames = g_metrics.data();
    size.numMetrics = g_metrics.size();
    size.maxNumOfRanges = kLaunchesPerPass;
    size.maxNumRangeTreeNodes = kLaunchesPerPass;
    if (CUptiResult r = g_api.counter_data_size(&size); r != CUPTI_SUCCESS)
        return warn("counter data size", r), nullptr;
    p.counter_data_bytes = size.counterDataSize;
    p.counter_data.assign((size.counterDataSize + 7) / 8, 0);
    ++g_context_count;
    return configure_pass(p) ? &p : nullptr;
}

ContextProfiler* profiler_for(CUcontext ctx) {
    for (size_t i = 0; i < g_context_count; ++i)
        if (g_contexts[i].ctx == ctx) return &g_contexts[i];
    return enable_on(ctx);
}

// Stop, decode, and one RawKernelMetric per range and metric.
void collect(ThreadState& thread, ContextProfiler& p) {
    if (!p.started) return;
    p.started = false;
    CUpti_RangeProfiler_Stop_Params stop{};
    stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
    stop.pRangeProfilerObject = p.object;
    if (CUptiResult r = g_api.stop(&stop); r != CUPTI_SUCCESS) return warn("cuptiRangeProfilerStop", r);
    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE, nullptr, p.object,
                                                 0};
    if (CUptiResult r = g_api.decode(&decode); r != CUPTI_SUCCESS) return warn("cuptiRangeProfilerDecodeData", r);
    const auto* image = reinterpret_cast<const uint8_t*>(p.counter_data.data());
    CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
    info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
    info.pCounterDataImage = image;
    info.counterDataImageSize = p.counter_data_bytes;
    if (CUptiResult r = g_api.data_info(&info); r != CUPTI_SUCCESS) return warn("counter data info", r);
    std::vector<uint64_t> names(g_metrics.size());
    for (size_t m = 0; m < g_metrics.size(); ++m) names[m] = intern_string(thread, g_metrics[m]);
    std::vector<double> values(g_metrics.size());
    for (size_t range = 0; range < info.numTotalRanges; ++range) {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{};
        eval.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
        eval.pHostObject = g_host;
        eval.pCounterDataImage = image;
        eval.counterDataImageSize = p.counter_data_bytes;
        eval.rangeIndex = range;
        eval.ppMetricNames = g_metrics.data();
        eval.numMetrics = g_metrics.size();
        eval.pMetricValues = values.data();
        // A range that cannot be evaluated keeps its number with every value not available.
        if (g_api.evaluate(&eval) != CUPTI_SUCCESS) std::fill(values.begin(), values.end(), std::nan(""));
        for (size_t m = 0; m < g_metrics.size(); ++m) {
            raw::RawKernelMetric record{};
            record.context_id = p.context_id;
            record.range_number = p.next_range_number + range;
            record.metric_string = names[m];
            record.value = values[m];
            emit_record(thread, raw::RecordKind::KernelMetric, record);
        }
    }
    // Dropped ranges still took their kernels' places in the order.
    p.next_range_number += info.numTotalRanges + decode.numOfRangeDropped;
}

}  // namespace

void configure_from_environment() {
    const char* value = std::getenv("TBDPROF_METRICS");
    if (value == nullptr || *value == '\0') return;
    if (std::strcmp(value, "flops") != 0) {
        tell_user("TBDPROF_METRICS=%s is not a metric set (known: flops); ignored", value);
        return;
    }
    if (const char* cupti = std::getenv("TBDPROF_CUPTI"); cupti != nullptr && std::strcmp(cupti, "0") == 0) {
        tell_user("TBDPROF_CUPTI=0 leaves CUPTI alone: recording without hardware counters");
        return;
    }
    g_requested.store(true, std::memory_order_relaxed);
}

void before_launch_slow(ThreadState&) {
    g_mutex.lock();
    if (g_setup == Setup::Failed) return;
    CUcontext ctx = nullptr;
    if (g_setup == Setup::NotTried) {
        if (!load_api() || g_api.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) {
            // No context yet (the launch will fail or make one): try again at the next launch.
            if (g_api.ctx_get_current == nullptr)
                g_setup = Setup::Failed, warn("libcupti.so.13 without the range profiler", 0);
            return;
        }
        g_setup = set_up_host(ctx) ? Setup::Ready : Setup::Failed;
        if (g_setup == Setup::Failed) return;
    } else if (g_api.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) {
        return;
    }
    profiler_for(ctx);
}

void after_launch_slow(ThreadState& thread, bool launched) {
    if (g_setup == Setup::Ready && launched) {
        CUcontext ctx = nullptr;
        if (g_api.ctx_get_current(&ctx) == CUDA_SUCCESS) {
            for (size_t i = 0; i < g_context_count; ++i) {
                ContextProfiler& p = g_contexts[i];
                if (p.ctx != ctx || !p.started) continue;
                if (++p.launches_in_pass >= kLaunchesPerPass) {
                    collect(thread, p);
                    configure_pass(p);
                }
            }
        }
    }
    g_mutex.unlock();
}

void finish() {
    if (!g_requested.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(g_mutex);
    if (g_setup != Setup::Ready) return;
    ThreadState& thread = thread_state();
    for (size_t i = 0; i < g_context_count; ++i) collect(thread, g_contexts[i]);
}

void disable_after_fork() {
    g_requested.store(false, std::memory_order_relaxed);
    // The parent may have held the lock at fork; the child never takes it again.
}

}  // namespace tbdprof::collector::counters
