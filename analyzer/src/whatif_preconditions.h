// What a memory what-if needs before it predicts (docs/whatif.md, "When it does not predict"): options
// that agree with each other, and a recorded run that can carry a prediction.
#pragma once

#include <optional>
#include <string>

#include "tbdprof/analyzer/whatif.h"
#include "whatif_replay.h"
#include "whatif_run.h"

namespace tbdprof::analyzer::whatif {

// The batch factor the options give (new / recorded), or none; throws for options that contradict.
std::optional<double> check_options(const WhatIfOptions& o);

// Why the recorded run cannot carry a prediction, or empty.
std::string cannot_predict(const RecordedRun& run, const Replayed& recorded, const WhatIfOptions& options,
                           const std::optional<StoragePrecision>& precision);

}  // namespace tbdprof::analyzer::whatif
