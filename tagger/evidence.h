// The evidence behind a tag, in words: how the data flow used a buffer, per phase of the steps.
// Stored with every tag (allocation_categories.evidence) and printed by `tbdprof tag --explain`.
#pragma once

#include "dataflow.h"
#include "rules.h"

#include <string>
#include <vector>

namespace tbdprof::tagger {

// A work item's phase of the steps.
enum class WorkPhase : uint8_t { OutsideSteps, Optimizer, Step, Forward, Backward };

// "forward", "backward", "optimizer", "step" (in a step without phases) or "outside steps".
const char* phase_name(WorkPhase phase);

// The phase of each work item, asked by work index: from its iteration, whether it is the
// optimizer's, and where backward begins in that iteration. Worked out when asked rather than kept
// per item (a byte a kernel of the run). The arguments must outlive it.
class WorkPhases {
public:
    WorkPhases(const TraceModel& m, const DataFlow& flow, const std::vector<Phase>& phases,
               const std::vector<bool>& optimizer_work);
    WorkPhase operator[](size_t work) const;

private:
    const TraceModel& m_;
    const DataFlow& flow_;
    const std::vector<bool>& optimizer_work_;
    std::vector<int64_t> backward_begin_ns_;  // per iteration: backward's start (host time); -1 none found
};

std::string describe_flow(const TraceModel& m, const DataFlow& flow, const WorkPhases& phase, size_t allocation);

}  // namespace tbdprof::tagger
