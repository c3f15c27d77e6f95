// Activation checkpointing for the memory what-if (docs/whatif.md, "Checkpointing"): which forward
// activations backward reads, which layer each belongs to, and the recorded timeline changed so that
// those of every segment but the last are freed after their last forward use and allocated again
// when backward first reads one of them (the recomputation), plus the forward time recomputing costs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "memory_allocations.h"
#include "trace_file.h"
#include "whatif_mapped.h"
#include "whatif_pool_tensors.h"

namespace tbdprof::analyzer {

// One access of a device allocation by the device: a kernel's pointer argument (kernel_allocations)
// or a library call's operand (library_calls a/b/c), at the trace time the host queued it (a
// kernel's launch).
struct AllocationTouch {
    int64_t trace_ns = 0;
    size_t allocation = 0;      // index into the run's allocations (real ones only)
    int64_t library_call = -1;  // the GEMM (or other library call) it belongs to; -1: a plain kernel
    bool writes = false;        // a non-const pointer argument, or a GEMM's output operand
    bool operand = false;       // a library call's operand (at the call's begin), not a kernel's argument
};

// One access inside an allocation counted by its tensors (a pooled segment, a mapped page of one, an
// arena): where in it, so that the tensor placed there at that time can be found.
struct SegmentTouch {
    int64_t trace_ns = 0;
    size_t allocation = 0;  // index into the run's allocations (a real one counted by its sub-ranges)
    int64_t offset = 0;     // bytes from the allocation's start
    int64_t library_call = -1;
    bool writes = false;
    bool operand = false;  // as AllocationTouch::operand
};

struct TimedKernel {
    int64_t launch_ns = 0, duration_ns = 0;
    int64_t library_call = -1;
};

// What checkpointing needs from a trace, read once.
struct CheckpointFacts {
    std::vector<std::pair<int64_t, int64_t>> forward, backward;  // per training iteration with both phases
    std::vector<AllocationTouch> touches;                        // sorted by time
    std::vector<SegmentTouch> segment_touches;                   // sorted by time
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
    // With a caching pool's tensors (PooledTensors): the pool's tensors, the recomputed ones released
    // after their last forward use and requested again at the recomputation (appended), for the
    // pool's replay; `pool_origin`: per tensor, the recorded one it copies.
    bool pooled = false;
    std::vector<PoolTensor> pool_tensors;
    std::vector<size_t> pool_origin;
};

// The tensors of a caching pool that the pool's replay uses (whatif_pool_replay.h), and where the
// mapped pages of expandable segments lie in their segments: with them, saved activations inside
// the pool are checkpointed as tensors of the pool (docs/whatif.md, "Checkpointing").
struct PooledTensors {
    const std::vector<PoolTensor>& tensors;
    const MappedSegments& mapped;
};

// every_layers 0: K = the square root of the layer count, rounded. `pooled`: null when the run has
// no caching pool the replay reproduces (saved activations inside segments then stop the prediction).
CheckpointPlan plan_checkpointing(const CheckpointFacts& facts, const std::vector<Allocation>& allocations,
                                  int every_layers, const PooledTensors* pooled = nullptr);

// Internal to the checkpointing files (whatif_checkpoint.cpp, whatif_checkpoint_pool.cpp).
namespace checkpoint_detail {

using Span = std::pair<int64_t, int64_t>;

// One training iteration's forward read as layers.
struct ForwardLayers {
    std::vector<int64_t> starts;  // time of each layer's first access
    int layer_at(int64_t time) const;
};

// Where a segment's recomputation stops: the last forward write of one of its freed activations,
// and the library calls that write one (a GEMM's kernels may launch before its call's begin).
struct RecomputeCut {
    int64_t cutoff_ns = INT64_MIN;
    std::unordered_set<int64_t> writer_calls;
};

// Device time of the forward kernels a segment's recomputation runs: from the segment's first layer
// up to the cut; kernels that only produce the kept output are not run again.
double segment_kernel_ns(const CheckpointFacts& facts, const ForwardLayers& layers, Span forward, int segment,
                         int segment_layers, const RecomputeCut& cut);

// The pool's saved activations of one iteration checkpointed: their releases moved to their last
// forward use and their re-requests appended to plan.pool_tensors; the cut of each segment
// recomputed added to `cuts`. Returns the bytes recomputed.
int64_t plan_pooled_iteration(const CheckpointFacts& facts, const PooledTensors& pooled, const ForwardLayers& layers,
                              Span forward, Span backward, int segment_layers, int segments, CheckpointPlan& plan,
                              std::map<int, RecomputeCut>& cuts);

// Forward's end (and backward's start) where the tagger's phases put it too early: backward begins at
// the first library call that writes a gradient, or reads weights a call of this forward already read
// (backward's GEMM of the last layer's input gradient); a kernel's pointer word taken for a gradient
// write (a stale word of a by-value argument struct, in a pooled segment) can end the tagger's
// forward phase before the forward's own layers have run. Moves boundaries only later, but forward's
// start to the begin of a library call whose kernels begin forward.
void align_phases(CheckpointFacts& facts, const std::vector<Allocation>& allocations, const PooledTensors* pooled);

// The layers' first accesses found through the pool's weights tensors (a GEMM reading a weights
// tensor inside a segment), merged into `starts`.
void add_pooled_layer_starts(const CheckpointFacts& facts, const PooledTensors& pooled, Span forward,
                             std::vector<std::pair<int64_t, int64_t>>& starts);

// Where each layer after the first begins (`starts`: time and library call of each layer's weights
// call, moved here), from forward's data flow rather than at the call: a program checkpoints its
// modules, and a pre-norm block's first operation (a LayerNorm) reads the block's input before its
// first weights call. Between the previous layer's call and this one, the cut goes before the
// operation where the fewest activation bytes are accessed on both sides of it (what a checkpoint
// there keeps); of equally few, the earliest where that operation and work after the layer's call
// both access each of them (a block's input: its first operation and its residual add read it),
// leaving out those that cross every candidate (they choose nothing); with none, at the call as
// before. A library call's output operand begins a new value of the activation it writes (a pooled
// block the tagger recovers as one tensor can hold several in turn). In whatif_checkpoint_pool.cpp,
// as it reads the pool's tensors too.
void move_layer_starts_to_cuts(const CheckpointFacts& facts, const std::vector<Allocation>& allocations,
                               const PooledTensors* pooled, Span forward,
                               std::vector<std::pair<int64_t, int64_t>>& starts);

}  // namespace checkpoint_detail

}  // namespace tbdprof::analyzer
