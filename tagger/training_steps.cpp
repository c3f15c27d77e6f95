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

// Whether a library call in `span` writes a gradient (its output operand: a weight-gradient GEMM).
// Kernels do not count: one taking pointers inside a struct may only read a buffer, and a
// validation pass's kernels read parameters (a bias misread as a gradient would count).
bool library_writes_gradient(const TraceModel& m, const TagResult& tags, const Iteration& span) {
    for (size_t w = span.first_work; w < span.end_work && w < m.work.size(); ++w) {
        const WorkItem& item = m.work[w];
        if (item.process != span.process || item.kind != WorkItem::Kind::Kernel || item.library_call == kNone) continue;
        for (const Touch& t : item.touches)
            if (tags.tags[size_t(t.allocation)].category == "gradients" && use_of(m, item, t) != Use::Read &&
                use_of(m, item, t) != Use::Workspace)
                return true;
    }
    return false;
}

bool count_set_apart_spans_that_train(const TraceModel& model, const TagResult& tags, IterationSet& iterations) {
    std::vector<Iteration> passes;
    bool moved = false;
    for (const Iteration& span : iterations.non_training) {
        bool trains = library_writes_gradient(model, tags, span);
        (trains ? iterations.iterations : passes).push_back(span);
        moved |= trains;
    }
    if (!moved) return false;
    iterations.non_training = std::move(passes);
    std::sort(iterations.iterations.begin(), iterations.iterations.end(),
              [](const Iteration& a, const Iteration& b) { return a.begin_ns < b.begin_ns; });
    return true;
}

}  // namespace tbdprof::tagger
