// The simulated profiler's config and counter data images: what the client allocates and passes
// around as opaque bytes (config image from the host API, counter data image that the range profiler
// fills). The layouts are ours; the client only ever sees sizes and buffers, as with real CUPTI.
//
// What the simulator can count: a kernel the cost model was told the work of (flops > 0 with a
// precision: its GEMM and convolution kernels, and the auxiliary kernels with FLOP annotations).
// Every other kernel's counters are "not available": its metric values evaluate to NaN.
#pragma once

#include <cupti_profiler_target.h>
#include <cupti_result.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tbdsim::cupti::profiler {

inline constexpr char kChipName[] = "GH100";

// Metrics the simulated chip knows (ConfigAddMetrics refuses others with INVALID_METRIC_NAME).
const std::vector<std::string>& supported_metrics();
bool is_supported_metric(const char* name);

// One kernel's raw counters as the simulated hardware keeps them.
struct RangeCounters {
    double flops = 0;        // 0: not countable
    uint32_t precision = 0;  // TbdsimPrecision
    uint32_t reserved = 0;
};

// The value of `metric` for a range; NaN where the simulator cannot count the kernel's work.
double evaluate_metric(const char* metric, const RangeCounters& counters);

// Config image: header followed by the metric names, each NUL-terminated.
struct ConfigImageHeader {
    char magic[8];  // "TBDSIMCF"
    uint32_t metric_count;
    uint32_t names_bytes;
};
std::vector<uint8_t> make_config_image(const std::vector<std::string>& metrics);
bool parse_config_image(const uint8_t* image, size_t size, std::vector<std::string>& metrics);

// Counter data image: header followed by max_ranges RangeCounters.
struct CounterDataHeader {
    char magic[8];  // "TBDSIMCD"
    uint64_t max_ranges;
    uint64_t range_count;
    uint64_t first_range_number;  // auto range names count kernels from 0 across the session
    uint64_t dropped;
};
size_t counter_data_size(size_t max_ranges);
void initialize_counter_data(uint8_t* image, size_t max_ranges);
// Null when `image` is not an initialized counter data image of `size` bytes.
CounterDataHeader* counter_data_header(uint8_t* image, size_t size);
const CounterDataHeader* counter_data_header(const uint8_t* image, size_t size);
inline const RangeCounters* counter_data_ranges(const CounterDataHeader* header) {
    return reinterpret_cast<const RangeCounters*>(header + 1);
}
inline RangeCounters* counter_data_ranges(CounterDataHeader* header) {
    return reinterpret_cast<RangeCounters*>(header + 1);
}

}  // namespace tbdsim::cupti::profiler

// The real API's struct conventions: structSize covers at least the fields read, pPriv is NULL.
#define TBDSIM_PROFILER_PARAMS_OK(params, Type, last_field) \
    ((params) != nullptr && (params)->pPriv == nullptr &&   \
     (params)->structSize >= CUPTI_PROFILER_STRUCT_SIZE(Type, last_field))
