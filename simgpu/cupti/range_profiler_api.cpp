// The range profiler of the simulated CUPTI (cupti_range_profiler.h): per-kernel auto ranges with
// kernel replay. Enable registers a record sink with the simulated driver; while started, every kernel
// the context runs becomes a range holding the work the cost model was told about (flops, precision).
// Replay costs nothing here: the simulated counters are known after one execution, so the one pass
// the host API reports is all there is. Decode copies the ranges into the client's counter data image,
// which the host API then evaluates. User ranges (push/pop) and application replay are not modelled.
#include <cupti_range_profiler.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "driver_link.h"
#include "profiler_images.h"

#define TBDSIM_CUPTI_EXPORT extern "C" __attribute__((visibility("default")))

namespace tbdsim::cupti::profiler {
extern std::atomic<int> g_profiler_initialized;
}  // namespace tbdsim::cupti::profiler

using namespace tbdsim::cupti;
using namespace tbdsim::cupti::profiler;

struct CUpti_RangeProfiler_Object {
    CUcontext ctx = nullptr;
    uint32_t context_id = 0;
    int sink_slot = -1;
    std::mutex mutex;  // the sink runs on the launching threads
    bool configured = false;
    bool started = false;
    uint8_t* counter_data = nullptr;
    size_t counter_data_size = 0;
    size_t max_ranges = 0;               // min(maxRangesPerPass, image capacity)
    std::vector<RangeCounters> pending;  // ranges of the current pass, not yet decoded
    uint64_t dropped = 0;                // of the current pass
    uint64_t next_range_number = 0;      // execution order of the next decoded range
};

namespace {

void CUPTIAPI on_record(const TbdsimRecord* record, void* user) {
    auto* object = static_cast<CUpti_RangeProfiler_Object*>(user);
    // Kernels replayed by a CUDA graph launch are not profiled: kernel replay works per launch.
    if (record->kind != TBDSIM_RECORD_KERNEL || record->context_id != object->context_id || record->graph_id != 0)
        return;
    std::lock_guard lock(object->mutex);
    if (!object->started) return;
    if (object->pending.size() >= object->max_ranges) {
        ++object->dropped;
        return;
    }
    RangeCounters counters;
    counters.flops = record->flops;
    counters.precision = record->precision;
    object->pending.push_back(counters);
}

bool is_enabled(CUpti_RangeProfiler_Object* object) {
    return object != nullptr && object->sink_slot >= 0;
}

}  // namespace

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject) || p->ctx == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (g_profiler_initialized.load() == 0) return CUPTI_ERROR_NOT_INITIALIZED;
    const DriverLink* link = driver_link();
    if (link == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    unsigned long long context_id = 0;
    if (link->ctx_get_id(p->ctx, &context_id) != CUDA_SUCCESS) return CUPTI_ERROR_INVALID_CONTEXT;
    auto* object = new (std::nothrow) CUpti_RangeProfiler_Object;
    if (object == nullptr) return CUPTI_ERROR_OUT_OF_MEMORY;
    object->ctx = p->ctx;
    object->context_id = static_cast<uint32_t>(context_id);
    object->sink_slot = link->private_api->add_record_sink(on_record, object);
    if (object->sink_slot < 0) {
        delete object;
        return CUPTI_ERROR_UNKNOWN;
    }
    p->pRangeProfilerObject = object;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_Disable_Params, pRangeProfilerObject) ||
        !is_enabled(p->pRangeProfilerObject))
        return CUPTI_ERROR_INVALID_PARAMETER;
    driver_link()->private_api->remove_record_sink(p->pRangeProfilerObject->sink_slot);
    delete p->pRangeProfilerObject;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_GetCounterDataSize_Params, counterDataSize) ||
        !is_enabled(p->pRangeProfilerObject) || p->maxNumOfRanges == 0 || p->numMetrics == 0 ||
        p->pMetricNames == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; ++i)
        if (!is_supported_metric(p->pMetricNames[i])) return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->counterDataSize = counter_data_size(p->maxNumOfRanges);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_CounterDataImage_Initialize_Params, pCounterData) ||
        !is_enabled(p->pRangeProfilerObject) || p->pCounterData == nullptr ||
        reinterpret_cast<uintptr_t>(p->pCounterData) % 8 != 0 || p->counterDataSize < counter_data_size(1))
        return CUPTI_ERROR_INVALID_PARAMETER;
    initialize_counter_data(p->pCounterData, (p->counterDataSize - counter_data_size(0)) / sizeof(RangeCounters));
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
    std::vector<std::string> metrics;
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_SetConfig_Params, targetNestingLevel) ||
        !is_enabled(p->pRangeProfilerObject) || !parse_config_image(p->pConfig, p->configSize, metrics) ||
        metrics.empty() || p->maxRangesPerPass == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    CounterDataHeader* header = counter_data_header(p->pCounterDataImage, p->counterDataImageSize);
    if (header == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->range != CUPTI_AutoRange || p->replayMode != CUPTI_KernelReplay) return CUPTI_ERROR_NOT_SUPPORTED;
    CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
    std::lock_guard lock(object->mutex);
    if (object->started) return CUPTI_ERROR_INVALID_OPERATION;
    object->counter_data = p->pCounterDataImage;
    object->counter_data_size = p->counterDataImageSize;
    object->max_ranges = std::min<size_t>(p->maxRangesPerPass, header->max_ranges);
    object->configured = true;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_Start_Params, pRangeProfilerObject))
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!is_enabled(p->pRangeProfilerObject)) return CUPTI_ERROR_INVALID_OPERATION;
    CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
    std::lock_guard lock(object->mutex);
    if (!object->configured || object->started) return CUPTI_ERROR_INVALID_OPERATION;
    object->started = true;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted))
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!is_enabled(p->pRangeProfilerObject)) return CUPTI_ERROR_INVALID_OPERATION;
    CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
    std::lock_guard lock(object->mutex);
    if (!object->started) return CUPTI_ERROR_INVALID_OPERATION;
    object->started = false;
    p->passIndex = 0;
    p->targetNestingLevel = 1;
    p->isAllPassSubmitted = 1;  // kernel replay ran every pass inside each launch
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_DecodeData_Params, numOfRangeDropped))
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!is_enabled(p->pRangeProfilerObject)) return CUPTI_ERROR_INVALID_OPERATION;
    CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
    std::lock_guard lock(object->mutex);
    if (!object->configured || object->started) return CUPTI_ERROR_INVALID_OPERATION;
    CounterDataHeader* header = counter_data_header(object->counter_data, object->counter_data_size);
    if (header == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    header->range_count = object->pending.size();
    header->first_range_number = object->next_range_number;
    header->dropped = object->dropped;
    std::memcpy(counter_data_ranges(header), object->pending.data(), object->pending.size() * sizeof(RangeCounters));
    object->next_range_number += object->pending.size() + object->dropped;
    p->numOfRangeDropped = object->dropped;
    object->pending.clear();
    object->dropped = 0;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_GetCounterDataInfo_Params, numTotalRanges))
        return CUPTI_ERROR_INVALID_PARAMETER;
    const CounterDataHeader* header = counter_data_header(p->pCounterDataImage, p->counterDataImageSize);
    if (header == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    p->numTotalRanges = header->range_count;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiRangeProfilerCounterDataGetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_CounterData_GetRangeInfo_Params, rangeName))
        return CUPTI_ERROR_INVALID_PARAMETER;
    const CounterDataHeader* header = counter_data_header(p->pCounterDataImage, p->counterDataImageSize);
    if (header == nullptr || p->rangeIndex >= header->range_count) return CUPTI_ERROR_INVALID_PARAMETER;
    const std::string name = std::to_string(header->first_range_number + p->rangeIndex);
    char* copy = static_cast<char*>(std::malloc(name.size() + 1));
    if (copy == nullptr) return CUPTI_ERROR_OUT_OF_MEMORY;
    std::memcpy(copy, name.c_str(), name.size() + 1);
    p->rangeName = copy;  // the caller frees it, as with cuptiProfilerHostGetRangeName
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_PushRange_Params, pRangeName))
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_ERROR_INVALID_OPERATION;  // only auto ranges can be configured here
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_RangeProfiler_PopRange_Params, pRangeProfilerObject))
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_ERROR_INVALID_OPERATION;
}
