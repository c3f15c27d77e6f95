// The timeline's communication lanes: one row per rank (process and device with NCCL kernels),
// its communication split into exposed stretches (nothing else ran on the device) and overlapped
// ones (computation ran too), from the analyzer's communication_stretches.
#pragma once

#include <string>
#include <vector>

#include "trace_data.h"

namespace tbdprof::viewer {

inline constexpr const char* kExposedCommunication = "exposed communication";
inline constexpr const char* kOverlappedCommunication = "overlapped communication";

// Appends the rows (without level of detail: the caller builds it with the others). Nothing when
// the trace has no communication kernels.
void add_communication_rows(const std::string& path, std::vector<TimelineRow>& rows);

}  // namespace tbdprof::viewer
