// `tbdprof check --whatif "OPTIONS"`: the memory limits of a budget judged on a planned
// configuration, the what-if prediction (whatif.h) of the recorded run with OPTIONS applied (the
// command line's words turned into WhatIfOptions by the CLI).
#pragma once

#include <string>
#include <vector>

#include "tbdprof/analyzer/budget.h"
#include "tbdprof/analyzer/whatif.h"

namespace tbdprof::analyzer {

// The budget's memory limits (max-peak-memory, max-category) checked on the scenario with every
// change applied. A prediction passes only with the model's stated error (options.fit_margin) to
// spare; one the model cannot make fails with its reason. Throws as predict_memory does.
std::vector<CheckResult> check_whatif_memory(const std::string& trace_path, const WhatIfOptions& options,
                                             const Budget& budget);

// The budget without its memory limits (what the recorded run is still checked against).
Budget without_memory_limits(Budget budget);

}  // namespace tbdprof::analyzer
