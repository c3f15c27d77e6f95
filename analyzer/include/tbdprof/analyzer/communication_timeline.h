// Where each rank's communication ran over the whole run, for a timeline (the viewer draws a lane per
// rank): the stretches in which communication ran alone (exposed: nothing hid it) and those it shared
// with computation on the same device (overlapped). The same split as the report's communication
// figures (docs/analyzer.md, "Communication"), which sum these stretches inside the window.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tbdprof::analyzer {

struct RankCommunicationStretches {
    int64_t process = 0, device = 0;
    std::optional<int64_t> rank;  // as the launcher set it; none when the trace does not say
    // Trace-relative [begin_ns, end_ns), disjoint, in time order.
    std::vector<std::pair<int64_t, int64_t>> exposed_ns, overlapped_ns;
};

// One entry per process and device that ran communication kernels, in (process, device) order; empty
// when the trace has none. Throws TraceError for a trace that cannot be read.
std::vector<RankCommunicationStretches> communication_stretches(const std::string& path);

}  // namespace tbdprof::analyzer
