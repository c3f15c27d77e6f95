// The memory what-if's replay (docs/whatif.md, "The model", point 1): the report's replay of the
// recorded allocations and frees, with each allocation's bytes given by a scenario.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "memory_allocations.h"
#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer::whatif {

struct Replayed {
    int64_t peak_bytes = 0, peak_trace_ns = 0;
    CategoryBytes at_peak{}, category_max{};
    std::map<int64_t, int64_t> device_peaks;
};

// The report's replay (memory_scan.cpp) with other bytes: states read only once every event of one
// instant and order is applied; the peak is the first moment the highest total is reached.
// `timeline`, when given, gets the live bytes per category after every instant.
Replayed replay(const std::vector<Allocation>& allocations, const std::vector<Event>& events,
                const std::vector<int64_t>& bytes, std::vector<MemoryPoint>* timeline = nullptr);

// Each allocation's recorded bytes (the replay unchanged).
std::vector<int64_t> recorded_bytes(const std::vector<Allocation>& allocations);

}  // namespace tbdprof::analyzer::whatif
