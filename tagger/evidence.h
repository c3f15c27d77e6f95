// The evidence behind a tag, in words: how the data flow used a buffer, per phase of the steps.
// Stored with every tag (allocation_categories.evidence) and printed by `tbdprof tag --explain`.
#pragma once

#include "dataflow.h"
#include "rules.h"

#include <string>
#include <vector>

namespace tbdprof::tagger {

// A work item's phase of the steps; one byte, as there is one per kernel of the run.
enum class WorkPhase : uint8_t { OutsideSteps, Optimizer, Step, Forward, Backward };

// "forward", "backward", "optimizer", "step" (in a step without phases) or "outside steps".
const char* phase_name(WorkPhase phase);

// Per work item.
std::vector<WorkPhase> phase_of_work(const TraceModel& m, const DataFlow& flow, const std::vector<Phase>& phases,
                                     const std::vector<bool>& optimizer_work);

std::string describe_flow(const TraceModel& m, const DataFlow& flow, const std::vector<WorkPhase>& phase,
                          size_t allocation);

}  // namespace tbdprof::tagger
