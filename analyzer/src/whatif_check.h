// `tbdprof check --whatif "OPTIONS"`: the memory limits of a budget judged on a planned
// configuration, the what-if prediction (whatif.h) of the recorded run with OPTIONS applied.
#pragma once

#include <string>
#include <vector>

#include "tbdprof/analyzer/budget.h"
#include "tbdprof/analyzer/whatif.h"

namespace tbdprof::analyzer {

// The what-if options as `tbdprof whatif` takes them ("--batch-size 64 --batch-size-recorded 32
// --checkpoint sqrt"), split at spaces (no quoting: paths with spaces cannot be given); returns an error sentence
// (empty on success).
std::string parse_whatif_words(const std::string& text, WhatIfOptions& options);

// The budget's memory limits (max-peak-memory, max-category) checked on the scenario with every
// change applied. A prediction passes only with the model's stated error (options.fit_margin) to
// spare; one the model cannot make fails with its reason. Throws as predict_memory does.
std::vector<CheckResult> check_whatif_memory(const std::string& trace_path, const WhatIfOptions& options,
                                             const Budget& budget);

// The budget without its memory limits (what the recorded run is still checked against).
Budget without_memory_limits(Budget budget);

}  // namespace tbdprof::analyzer
