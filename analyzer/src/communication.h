// Communication analysis over the window (communication.cpp), and the comparison of ranks
// (communication_ranks.cpp). Internal to the analyzer.
#pragma once

#include <cstdint>
#include <vector>

#include "interval_union.h"
#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// One rank's kernels inside the window: communication kernels as they ran (for matching collectives
// across ranks), and the unions of communication and computation.
struct RankKernels {
    int64_t process = 0, device = 0;
    std::vector<Stretch> collectives;  // communication kernels starting in the window, in start order
    IntervalUnion communication, computation;
};

// The figures of one union pair inside [lo, hi).
CommunicationFigures communication_figures(const RankKernels& rank, int64_t lo, int64_t hi);

// Across the ranks of one trace: the time each waited inside collectives for the others (matched by
// order), the slowest rank and the imbalance. Notes what could not be compared.
void compare_ranks(const std::vector<RankKernels>& kernels, CommunicationMetrics& metrics,
                   std::vector<std::string>& notes);

}  // namespace tbdprof::analyzer
