// Which scenarios a memory what-if gives (docs/whatif.md): the recorded run, each change the options
// ask for alone, and all of them together when there are several.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tbdprof/analyzer/whatif.h"

namespace tbdprof::analyzer::whatif {

// One column of the output: which changes a scenario makes.
struct ScenarioSpec {
    std::string name;
    std::optional<double> batch_scale;  // the factor when not calibrated
    bool calibrated = false;            // the batch by the fitted lines instead
    std::optional<StoragePrecision> precision;
    int zero_stage = 0;
    bool checkpoint = false;
};

// Whether `spec` changes the batch alone (by a factor, larger or smaller; no calibration, precision,
// ZeRO or checkpointing with it): a caching pool whose replay does not give back the recorded segments
// predicts such a scenario by that replay all the same (whatif_pool_replay.h, batch_pool_model).
bool only_changes_batch(const ScenarioSpec& spec);

// Whether `spec` changes the batch by a factor, alone or with precision or ZeRO (no calibration or
// checkpointing): such scenarios replay the same pool model as the batch alone, and one that also
// changes precision or ZeRO is bounded by the batch alone's replay (whatif_pool_replay.h,
// segments_within).
bool changes_batch_by_factor(const ScenarioSpec& spec);

// "recorded" first, then the batch change alone when `scale` is set (the batch factor the options give;
// none: no batch change), then each other change alone and all of them together. The batch alone must
// come before the combined scenario: the latter is bounded by the batch alone's replay, taken as the
// list is replayed in order (whatif.cpp, bound_by_batch_alone).
std::vector<ScenarioSpec> scenario_list(const WhatIfOptions& options, std::optional<double> scale);

}  // namespace tbdprof::analyzer::whatif
