// The one table of memory-category colours, shared by the HTML report's charts and the desktop
// viewer, so a category looks the same wherever it is drawn. Index order is report.h's category order.
#pragma once

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// "#rrggbb"; mid-tone hues that stay readable on light and dark backgrounds.
inline constexpr const char* kCategoryColors[kCategoryCount] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                                "#59a14f", "#edc948", "#b07aa1", "#9d9d9d"};
// Per-device series (utilization charts).
inline constexpr const char* kDeviceColors[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2"};

}  // namespace tbdprof::analyzer
