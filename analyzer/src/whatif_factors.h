// The factors a scenario applies per category (docs/whatif.md, "Batch", "Precision", "ZeRO"), and
// what the scenarios share, read once from the recorded run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "memory_allocations.h"
#include "tbdprof/analyzer/whatif.h"
#include "whatif_replay.h"
#include "whatif_run.h"
#include "whatif_scenarios.h"

namespace tbdprof::analyzer::whatif {

// Per-category factors, with library workspaces (cuBLAS/cuDNN handles) held fixed whatever the scenario.
struct Factors {
    std::array<double, kCategoryCount> by_category;
    Factors() { by_category.fill(1.0); }
};

// A category's factor for allocation `a` (library workspaces stay fixed).
double factor_of(const Factors& factors, const Allocation& a, int category);

// What ZeRO's buffers of one rank (a process of the run) are bounded by.
struct RankBytes {
    double weights = 0;        // at their largest
    double gradients = 0;      // at their largest
    double layer_weights = 0;  // one layer's weights: what one library call reads, else the largest weights tensor
};

// What the scenarios share: read once from the recorded run (and the calibration run).
struct Model {
    int64_t granularity = 1;
    std::optional<StoragePrecision> recorded_precision;
    double parameters = 0;        // weights bytes at their largest / recorded element size
    int64_t optimizer_bytes = 0;  // optimizer state at its largest
    std::vector<double> fitted;   // per real allocation: bytes at the new batch (a + b * batch)
    int64_t ranks = 1;
    int64_t bucket_bytes = 0;                 // ZeRO's reduce-scatter and all-gather bucket
    std::map<int64_t, RankBytes> by_process;  // what each rank's ZeRO buffers and master copy are bounded by
    double zero_share = 0;  // the busiest rank's share under --zero-partition tensors; 0: even (1 / ranks)
};

// The share of the sharded bytes the busiest rank keeps under ZeRO: 1 / ranks, or the tensor partition's.
double shard_share(const Model& model);

// What the scenarios share, from the recorded run and its replay in `events` order (the calibration
// lines are added by predict_memory once the run is known to carry a prediction).
Model read_model(const RecordedRun& run, const std::vector<Event>& events, const Replayed& recorded,
                 const WhatIfOptions& options);

// ZeRO's communication buffers of the rank that is `process` (docs/whatif.md, "ZeRO"): a
// reduce-scatter bucket of gradients (in backward) and an all-gather bucket of updated weights
// (after the update), each at most the bucket size and at most what it carries, the larger of the
// two as they are not in use together; stage 3 gathers the weights before their use instead, and
// holds the reduce-scatter bucket and one layer's weights gathered whole.
double comm_buffer_bytes(const ScenarioSpec& spec, const Model& model, int64_t process);

// Precision and ZeRO as factors per category (the FP32 master copy a change to mixed precision adds
// grows the optimizer state where the run had some).
Factors precision_zero_factors(const ScenarioSpec& spec, const Model& model);

// The FP32 master copy a change to mixed precision needs where the run had no optimizer state to
// grow (docs/whatif.md, "Precision"): 4 B per parameter of the rank that is `process` (its weights at
// their largest / the recorded element size), of the whole run's without one; a share of it under ZeRO.
double master_copy_bytes(const ScenarioSpec& spec, const Model& model, std::optional<int64_t> process);

// Input, activations and temporaries grow with the batch; library workspaces do not (factor_of).
Factors with_batch(Factors f, double scale);

}  // namespace tbdprof::analyzer::whatif
