// The profiler target and host APIs of the simulated CUPTI (cupti_profiler_target.h,
// cupti_profiler_host.h, cupti_target.h) as the range profiler needs them: profiler initialization,
// chip name, counter availability, host objects that build config images for a metric list, metric
// queries, and evaluation of a decoded counter data image to metric values.
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "profiler_images.h"

#define TBDSIM_CUPTI_EXPORT extern "C" __attribute__((visibility("default")))

struct CUpti_Profiler_Host_Object {
    CUpti_ProfilerType type = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    std::vector<std::string> metrics;  // added for the config image, in order, no duplicates
    std::vector<const char*> base_metric_names;
};

namespace tbdsim::cupti::profiler {
std::atomic<int> g_profiler_initialized{0};
}  // namespace tbdsim::cupti::profiler

namespace {

using namespace tbdsim::cupti::profiler;

constexpr uint8_t kAvailabilityImage[16] = {'T', 'B', 'D', 'S', 'I', 'M', 'A', 'V', 1};

char* copy_string(const std::string& text) {
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
}

}  // namespace

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Initialize_Params, pPriv)) return CUPTI_ERROR_INVALID_PARAMETER;
    g_profiler_initialized.fetch_add(1);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_DeInitialize_Params, pPriv)) return CUPTI_ERROR_INVALID_PARAMETER;
    int count = g_profiler_initialized.load();
    while (count > 0 && !g_profiler_initialized.compare_exchange_weak(count, count - 1)) {
    }
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Device_GetChipName_Params, pChipName)) return CUPTI_ERROR_INVALID_PARAMETER;
    p->pChipName = kChipName;  // every simulated device is an H100-class part
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_GetCounterAvailability_Params, pCounterAvailabilityImage))
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->pCounterAvailabilityImage == nullptr) {
        p->counterAvailabilityImageSize = sizeof kAvailabilityImage;
        return CUPTI_SUCCESS;
    }
    if (p->counterAvailabilityImageSize < sizeof kAvailabilityImage) return CUPTI_ERROR_INVALID_PARAMETER;
    std::memcpy(p->pCounterAvailabilityImage, kAvailabilityImage, sizeof kAvailabilityImage);
    p->counterAvailabilityImageSize = sizeof kAvailabilityImage;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_DeviceSupported_Params, api)) return CUPTI_ERROR_INVALID_PARAMETER;
    const bool range = p->api == CUPTI_PROFILER_RANGE_PROFILING;
    const auto level = range ? CUPTI_PROFILER_CONFIGURATION_SUPPORTED : CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
    p->isSupported = level;
    p->architecture = level;
    p->sli = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    p->vGpu = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    p->confidentialCompute = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    p->cmp = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    p->wsl = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_Initialize_Params, pHostObject) || p->pChipName == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->profilerType != CUPTI_PROFILER_TYPE_RANGE_PROFILER) return CUPTI_ERROR_NOT_SUPPORTED;
    if (std::strcmp(p->pChipName, kChipName) != 0) return CUPTI_ERROR_INVALID_PARAMETER;
    auto* object = new (std::nothrow) CUpti_Profiler_Host_Object;
    if (object == nullptr) return CUPTI_ERROR_OUT_OF_MEMORY;
    object->type = p->profilerType;
    p->pHostObject = object;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_Deinitialize_Params, pHostObject) ||
        p->pHostObject == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    delete p->pHostObject;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiProfilerHostGetSupportedChips(CUpti_Profiler_Host_GetSupportedChips_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_GetSupportedChips_Params, ppChipNames))
        return CUPTI_ERROR_INVALID_PARAMETER;
    static const char* const kChips[] = {kChipName};
    p->numChips = 1;
    p->ppChipNames = kChips;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_GetBaseMetrics_Params, numMetrics) ||
        p->pHostObject == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    auto& names = p->pHostObject->base_metric_names;
    names.clear();
    // Base names are the metrics without their rollup (".sum"); only counters are modelled.
    static const auto* base = [] {  // never destroyed, as supported_metrics()
        auto* out = new std::vector<std::string>;
        for (const std::string& metric : supported_metrics()) out->push_back(metric.substr(0, metric.rfind('.')));
        return out;
    }();
    if (p->metricType == CUPTI_METRIC_TYPE_COUNTER)
        for (const std::string& name : *base) names.push_back(name.c_str());
    p->ppMetricNames = names.empty() ? nullptr : names.data();
    p->numMetrics = names.size();
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_GetMetricProperties_Params, metricType) ||
        p->pHostObject == nullptr || p->pMetricName == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!is_supported_metric(p->pMetricName)) return CUPTI_ERROR_INVALID_METRIC_NAME;
    const bool tensor = std::strncmp(p->pMetricName, "sm__ops_path_tensor", 19) == 0;
    p->pDescription = tensor ? "# of math ops executed in Tensor path (simulated)"
                             : "# of thread instructions executed where guard predicate was true (simulated)";
    p->pHwUnit = tensor ? "sm" : "smsp";
    p->pDimUnit = tensor ? "ops" : "inst";
    p->metricType = CUPTI_METRIC_TYPE_COUNTER;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics) ||
        p->pHostObject == nullptr || (p->numMetrics > 0 && p->ppMetricNames == nullptr))
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; ++i)  // all or nothing
        if (!is_supported_metric(p->ppMetricNames[i])) return CUPTI_ERROR_INVALID_METRIC_NAME;
    auto& metrics = p->pHostObject->metrics;
    for (size_t i = 0; i < p->numMetrics; ++i) {
        const std::string name = p->ppMetricNames[i];
        bool present = false;
        for (const std::string& metric : metrics) present = present || metric == name;
        if (!present) metrics.push_back(name);
    }
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_GetConfigImageSize_Params, configImageSize) ||
        p->pHostObject == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->configImageSize = make_config_image(p->pHostObject->metrics).size();
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage) ||
        p->pHostObject == nullptr || p->pConfigImage == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    const std::vector<uint8_t> image = make_config_image(p->pHostObject->metrics);
    if (p->configImageSize < image.size()) return CUPTI_ERROR_INVALID_PARAMETER;
    std::memcpy(p->pConfigImage, image.data(), image.size());
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
    std::vector<std::string> metrics;
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_GetNumOfPasses_Params, numOfPasses) ||
        !parse_config_image(p->pConfigImage, p->configImageSize, metrics))
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->numOfPasses = 1;  // the simulated counters all fit in one pass
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiProfilerHostGetMaxNumHardwareMetricsPerPass(CUpti_Profiler_Host_GetMaxNumHardwareMetricsPerPass_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_GetMaxNumHardwareMetricsPerPass_Params, maxMetricsPerPass) ||
        p->pChipName == nullptr)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->maxMetricsPerPass = supported_metrics().size();
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI cuptiProfilerHostGetRangeName(CUpti_Profiler_Host_GetRangeName_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_GetRangeName_Params, pRangeName))
        return CUPTI_ERROR_INVALID_PARAMETER;
    const CounterDataHeader* header = counter_data_header(p->pCounterDataImage, p->counterDataImageSize);
    if (header == nullptr || p->rangeIndex >= header->range_count) return CUPTI_ERROR_INVALID_PARAMETER;
    // Auto ranges are named by the kernel's execution order in the session.
    p->pRangeName = copy_string(std::to_string(header->first_range_number + p->rangeIndex));
    return p->pRangeName != nullptr ? CUPTI_SUCCESS : CUPTI_ERROR_OUT_OF_MEMORY;
}

TBDSIM_CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
    if (!TBDSIM_PROFILER_PARAMS_OK(p, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pMetricValues) ||
        p->pHostObject == nullptr || p->pMetricValues == nullptr || (p->numMetrics > 0 && p->ppMetricNames == nullptr))
        return CUPTI_ERROR_INVALID_PARAMETER;
    const CounterDataHeader* header = counter_data_header(p->pCounterDataImage, p->counterDataImageSize);
    if (header == nullptr || p->rangeIndex >= header->range_count) return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; ++i)
        if (!is_supported_metric(p->ppMetricNames[i])) return CUPTI_ERROR_INVALID_METRIC_NAME;
    const RangeCounters& counters = counter_data_ranges(header)[p->rangeIndex];
    for (size_t i = 0; i < p->numMetrics; ++i) p->pMetricValues[i] = evaluate_metric(p->ppMetricNames[i], counters);
    return CUPTI_SUCCESS;
}
