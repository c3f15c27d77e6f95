// The evidence behind a tag, in words: how the data flow used a buffer, per phase of the steps.
// Stored with every tag (allocation_categories.evidence) and printed by `tbdprof tag --explain`.
#pragma once

#include "dataflow.h"
#include "rules.h"

#include <string>
#include <vector>

namespace tbdprof::tagger {

// Per work item: "forward", "backward", "optimizer", "step" (in a step without phases) or
// "outside steps".
std::vector<const char*> phase_of_work(const TraceModel& m, const DataFlow& flow, const std::vector<Phase>& phases,
                                       const std::vector<bool>& optimizer_work);

std::string describe_flow(const TraceModel& m, const DataFlow& flow, const std::vector<const char*>& phase,
                          size_t allocation);

}  // namespace tbdprof::tagger
