// Activation checkpointing for the memory what-if (docs/whatif.md, "Checkpointing"): which forward
// activations backward reads, which layer each belongs to, and the recorded timeline changed so that
// those of every segment but the last are freed after their last forward use and allocated again
// when backward first reads one of them (the recomputation), plus the forward time recomputing costs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "memory_allocations.h"
#include "trace_file.h"

namespace tbdprof::analyzer {

// One access of a device allocation by the device: a kernel's pointer argument (kernel_allocations)
// or a library call's operand (library_calls a/b/c), at the trace time the host queued it (a
// kernel's launch).
struct AllocationTouch {
    int64_t trace_ns = 0;
    size_t allocation = 0;      // index into the run's allocations (real ones only)
    int64_t library_call = -1;  // the GEMM (or other library call) it belongs to; -1: a plain kernel
    bool writes = false;        // a non-const pointer argument, or a GEMM's output operand
};

struct TimedKernel {
    int64_t launch_ns = 0, duration_ns = 0;
    int64_t library_call = -1;
};

// What checkpointing needs from a trace, read once.
struct CheckpointFacts {
    std::vector<std::pair<int64_t, int64_t>> forward, backward;  // per training iteration with both phases
    std::vector<AllocationTouch> touches;                        // sorted by time
    std::vector<TimedKernel> kernels;                            // sorted by launch
    int64_t iteration_duration_ns = 0;                           // mean training iteration length
    bool kernel_accesses = false;  // kernel_allocations has rows (an imported trace has none)
};

// `real_count`: the real allocations lead `allocations` (pieces of sub-ranges follow them).
CheckpointFacts read_checkpoint_facts(const TraceFile& trace, const std::vector<Allocation>& allocations,
                                      size_t real_count);

struct CheckpointPlan {
    std::string cannot_predict;  // non-empty: why no prediction is made
    int layers = 0;              // per iteration (the first one's count)
    int segment_layers = 0;      // K
    int segments = 0;
    int64_t recomputed_bytes = 0;          // per iteration, the largest
    size_t recomputed_allocations = 0;     // over the run
    double extra_forward_ns_per_step = 0;  // recorded device time of the forward recomputed, per iteration
    double iteration_duration_ns = 0;
    std::vector<Allocation> allocations;  // the run's, frees moved, re-allocations appended
    std::vector<size_t> origin;           // per allocation: the recorded allocation it copies
};

// every_layers 0: K = the square root of the layer count, rounded.
CheckpointPlan plan_checkpointing(const CheckpointFacts& facts, const std::vector<Allocation>& allocations,
                                  int every_layers);

}  // namespace tbdprof::analyzer
