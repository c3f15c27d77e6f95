// Training iterations (steps) and the phases inside them.
#pragma once

#include "model.h"

#include <string>
#include <vector>

namespace tbdprof::tagger {

struct Iteration {
    int32_t process = 0;
    int64_t begin_ns = 0;      // launch of its first work item
    int64_t end_ns = 0;        // end of its last work item
    int64_t core_begin_ns = 0; // launch of its first kernel
    size_t first_work = 0;     // indices into TraceModel::work, [first_work, end_work)
    size_t end_work = 0;
};

struct IterationSet {
    std::vector<Iteration> iterations;
    std::string source;  // 'nvtx', 'repetition', or empty when none were found
    std::string note;    // why none were found, for the report
};

// Iterations from NVTX-style ranges (`ProfilerStep#N`, `step`, `iteration`, or `range_name` when not
// empty); otherwise from the repeating structure of the kernel sequence of the busiest process.
IterationSet detect_iterations(const TraceModel& model, const std::string& range_name);

// Smallest period p of `sequence` (p <= size/2) with at most `tolerance` of positions i where
// sequence[i] != sequence[i + p]; 0 when there is none. Exposed for tests.
size_t find_period(const std::vector<int32_t>& sequence, double tolerance);

}  // namespace tbdprof::tagger
