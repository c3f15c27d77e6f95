#include "training_steps.h"

#include "dataflow.h"

#include <algorithm>

namespace tbdprof::tagger {
namespace {

// Whether work item `w` writes a gradient or is part of the update.
bool trains(const TraceModel& m, const TagResult& tags, size_t w) {
    if (w < tags.optimizer_work.size() && tags.optimizer_work[w]) return true;
    const WorkItem& item = m.work[w];
    if (item.kind != WorkItem::Kind::Kernel) return false;  // a set zeroing gradients is no backward work
    for (const Touch& t : item.touches)
        if (tags.tags[size_t(t.allocation)].category == "gradients" && writes(use_of(m, item, t))) return true;
    return false;
}

bool step_trains(const TraceModel& m, const TagResult& tags, const Iteration& step) {
    for (size_t w = step.first_work; w < step.end_work && w < m.work.size(); ++w)
        if (m.work[w].process == step.process && trains(m, tags, w)) return true;
    return false;
}

}  // namespace

bool set_apart_steps_without_training(const TraceModel& model, const TagResult& tags, IterationSet& iterations) {
    std::vector<Iteration>& steps = iterations.iterations;
    std::vector<bool> training(steps.size());
    size_t count = 0;
    for (size_t i = 0; i < steps.size(); ++i) count += (training[i] = step_trains(model, tags, steps[i]));
    if (count == steps.size() || count * 2 < steps.size()) return false;
    std::vector<Iteration> kept;
    for (size_t i = 0; i < steps.size(); ++i) (training[i] ? kept : iterations.non_training).push_back(steps[i]);
    std::sort(iterations.non_training.begin(), iterations.non_training.end(),
              [](const Iteration& a, const Iteration& b) { return a.begin_ns < b.begin_ns; });
    steps = std::move(kept);
    return true;
}

}  // namespace tbdprof::tagger
