// The tagger's step finders, shared among the files that hold them (iterations.cpp for NVTX ranges and
// the entry point, iteration_repetition.cpp, iteration_boundaries.cpp, iteration_spans.cpp,
// micro_batches.cpp). Not part of the tagger's interface: iterations.h is.
#pragma once

#include "iterations.h"
#include "model.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace tbdprof::tagger {

constexpr double kBlockTolerance = 0.05;  // a block of kernels is one more step when this close

// Kernel positions in this file's vocabulary: `kernels` lists one process's kernels as indices into
// TraceModel::work, in launch order; a kernel `k` is a position in that list.

// Each process's kernels, as indices into m.work in launch order.
std::map<int32_t, std::vector<size_t>> kernels_by_process(const TraceModel& m);

// The work launched in [begin, end) on `process`, with its device window.
Iteration make_iteration(const TraceModel& m, int64_t begin, int64_t end, int32_t process);

// Device windows of consecutive spans must not overlap either (work of one step that another stream
// ran late is cut at the next step's first device work).
void separate_device_windows(std::vector<Iteration>& its);

// Steps from the repeating structure of the busiest process's kernel sequence; none, with a note,
// when it does not repeat.
IterationSet from_repetition(const TraceModel& m);

// Blocks of the kernel sequence: one step each where the block matches the step's pattern, and
// the runs of kernels in between (validation passes) as outliers.
struct Block {
    size_t first_kernel = 0;  // index into the process's kernel list
    size_t end_kernel = 0;
    bool training = true;
};

// The first step, before the first matched one: its kernels [first_kernel, end_kernel).
struct FirstStep {
    size_t first_kernel = 0, end_kernel = 0;
};

// The kernels before `end` (the first step matching `pattern`) as a first step that initialises as it
// goes or runs a variant of the pattern (first_step.cpp). Its end may lie up to the block tolerance
// before `end`: the kernels in between then begin the next step.
std::optional<FirstStep> lazy_first_step(const TraceModel& m, const std::vector<size_t>& kernels,
                                         const std::vector<int32_t>& pattern, size_t end);

// The host spans of `blocks` (of `process`'s `kernels`): training steps and passes set apart.
IterationSet spans_of_blocks(const TraceModel& m, int32_t process, const std::vector<size_t>& kernels,
                             const std::vector<Block>& blocks);

// Where an iteration starts within the period, for steps at a fixed stride (iteration_boundaries.cpp).
size_t choose_offset(const TraceModel& m, const std::vector<size_t>& kernels, size_t period);

// Where the step's pattern of `period` kernels begins, near `middle`, when passes set apart shift the
// steps after them (iteration_boundaries.cpp).
size_t pattern_start(const TraceModel& m, const std::vector<size_t>& kernels, size_t middle, size_t period);

// A batch arrives just before kernel `k`: a host-to-device copy launched since the kernel before.
bool batch_arrives(const TraceModel& m, const std::vector<size_t>& kernels, size_t k);

// Of the batch arrivals of one step (positions in `kernels`), those that begin micro-batches.
std::vector<size_t> alike_arrivals(const TraceModel& m, const std::vector<size_t>& kernels,
                                   const std::vector<size_t>& arrivals);

// In a step of `period` kernels from `start` made of micro-batches, the arrival that begins the step
// (the one after the update); `start` when that cannot be told (micro_batches.cpp).
size_t first_micro_batch(const TraceModel& m, const std::vector<size_t>& kernels, size_t start, size_t period);

}  // namespace tbdprof::tagger
