// Multi-process runs: each process of a run (a data-parallel rank, a worker) is a program of its
// own, with its own steps and its own buffers. The steps of one process are found from its own
// kernels (or NVTX ranges) and its buffers tagged against those steps only, whatever the other
// processes launch meanwhile: their work, interleaved in time with this process's, must not move
// a step boundary or make a step look like a pass set apart.
#pragma once

#include "iterations.h"
#include "model.h"
#include "rules.h"

#include <string>
#include <vector>

namespace tbdprof::tagger {

// One process's part of a model, indices renumbered, and where each of its entries came from.
struct ProcessModel {
    TraceModel model;
    std::vector<size_t> allocation_of;  // per model.allocations entry: index in the whole model
    std::vector<size_t> work_of;        // per model.work entry: index in the whole model
};

// The processes that own an allocation or a work item, in increasing id.
std::vector<int32_t> processes_of(const TraceModel& model);

// The allocations, work, library calls, ranges, waits and regions of `process`; touches and operands
// pointing at another process's allocations are dropped. `pooled` is the process's own.
ProcessModel model_of_process(const TraceModel& model, int32_t process);

// tag_model (pool_tagging.h) for the whole trace when at most one process launched kernels, the
// single-process case, exactly as before; otherwise tag_model once per process on its own part,
// the results joined: `iterations` holds every process's steps (grouped by process, in increasing
// id; phases refer to their positions), tags and sub-ranges index the whole model.
TagResult tag_each_process(const TraceModel& model, const std::string& range_name, IterationSet& iterations);

}  // namespace tbdprof::tagger
