// Training iterations (steps): the one definition the tagger stores and every reader uses.
#pragma once

#include "model.h"

#include <string>
#include <vector>

namespace tbdprof::tagger {

struct Iteration {
    int32_t process = 0;
    int64_t begin_ns = 0;       // host time: launch of its first work item (or the NVTX range's start)
    int64_t end_ns = 0;         // host time: where the next span begins at the latest; never overlaps
    int64_t core_begin_ns = 0;  // launch of its first kernel
    size_t first_work = 0;      // indices into TraceModel::work, [first_work, end_work)
    size_t end_work = 0;
    int64_t device_begin_ns = 0;  // span of the device work launched in it (start of the first,
    int64_t device_end_ns = 0;    // end of the last); 0/0 when it launched none
};

struct IterationSet {
    std::vector<Iteration> iterations;    // training steps, in order
    std::vector<Iteration> non_training;  // spans set apart: validation passes, checkpoint saves
    std::string source;                   // 'nvtx', 'repetition', or empty when none were found
    std::string note;                     // why none were found, for the report
};

// Iterations from NVTX ranges named like a numbered step (`ProfilerStep#N`, `Train step 3`,
// `iteration 7`; see step_names.h) or matching `range_name` (exact, prefix or * ? pattern) when it is
// not empty; otherwise from the repeating structure of the kernel sequence of the busiest process.
IterationSet detect_iterations(const TraceModel& model, const std::string& range_name);

// Where the micro-batches of the steps begin (gradient accumulation: several batch arrivals in one
// step, each followed by the same forward kernels), the first of each step left out: per later
// micro-batch, the first host-to-device copy of its batch, as an index into TraceModel::work; in
// increasing order. Empty when no step holds micro-batches.
std::vector<size_t> micro_batch_starts(const TraceModel& model, const IterationSet& steps);

// Smallest period p of `sequence` (p <= size/2) with at most `tolerance` of positions i where
// sequence[i] != sequence[i + p]; 0 when there is none. Exposed for tests.
size_t find_period(const std::vector<int32_t>& sequence, double tolerance);

}  // namespace tbdprof::tagger
