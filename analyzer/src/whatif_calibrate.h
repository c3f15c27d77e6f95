// The batch by calibration (docs/whatif.md, "Batch"): the same program recorded at a second batch
// size, each device allocation's bytes fitted as a + b * batch through the two runs.
#pragma once

#include <string>
#include <vector>

#include "tbdprof/analyzer/whatif.h"
#include "whatif_run.h"

namespace tbdprof::analyzer::whatif {

// Per real allocation, its bytes at the new batch from a line through the two runs' sizes. Empty
// with `why` set when the runs' allocations do not match one to one.
std::vector<double> calibrate(const RecordedRun& run, const WhatIfOptions& options, std::string& why,
                              std::vector<std::string>& notes);

}  // namespace tbdprof::analyzer::whatif
