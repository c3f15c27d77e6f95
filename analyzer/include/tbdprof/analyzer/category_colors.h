// The one table of memory-category colours, shared by the HTML report's charts and the desktop
// viewer, so a category looks the same wherever it is drawn. Index order is report.h's category order.
#pragma once

#include "tbdprof/analyzer/report.h"
#include "tbdprof/trace/categories.h"

namespace tbdprof::analyzer {

inline constexpr const auto& kCategoryColors = trace::kCategoryColors;  // the one table, in trace/
// Per-device series (utilization charts).
inline constexpr const char* kDeviceColors[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2"};

}  // namespace tbdprof::analyzer
