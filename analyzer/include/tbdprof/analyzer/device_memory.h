// Live memory of one device over the run: the report's own memory replay (sub-ranges included)
// restricted to that device's allocations, for readers that draw one lane per device (the viewer).
#pragma once

#include <cstdint>
#include <string>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// The memory figures of `device` alone, with the full timeline (every allocation and free). Throws
// TraceError for bad input, as analyze_trace does.
MemoryMetrics device_memory(const std::string& path, int64_t device);

}  // namespace tbdprof::analyzer
