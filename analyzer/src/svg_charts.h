// Inline SVG charts for the HTML reports: no scripts, no external files.
#pragma once

#include <string>
#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// Live bytes by category over the run, stacked, as steps.
std::string memory_timeline_chart(const MemoryMetrics& memory, int64_t run_duration_ns);
// Kernel utilization per device over the run, the analysis window shaded.
std::string utilization_chart(const UtilizationSeries& series, const Window& window, int64_t run_duration_ns);
// One horizontal bar per entry, split by category (the breakdown at the peak; compare's runs).
std::string category_bars_chart(const std::vector<std::string>& labels, const std::vector<CategoryBytes>& values);

}  // namespace tbdprof::analyzer
