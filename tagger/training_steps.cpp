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

// Moves the spans of `from` for which `moves` holds into `to`, which stays in time order.
template <typename Predicate>
void move_spans(std::vector<Iteration>& from, std::vector<Iteration>& to, Predicate moves) {
    std::vector<Iteration> kept;
    for (const Iteration& span : from) (moves(span) ? to : kept).push_back(span);
    from = std::move(kept);
    std::sort(to.begin(), to.end(), [](const Iteration& a, const Iteration& b) { return a.begin_ns < b.begin_ns; });
}

}  // namespace

bool set_apart_steps_without_training(const TraceModel& model, const TagResult& tags, IterationSet& iterations) {
    size_t count = 0;
    for (const Iteration& step : iterations.iterations) count += step_trains(model, tags, step);
    if (count == iterations.iterations.size() || count * 2 < iterations.iterations.size()) return false;
    move_spans(iterations.iterations, iterations.non_training,
               [&](const Iteration& step) { return !step_trains(model, tags, step); });
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
    size_t before = iterations.iterations.size();
    move_spans(iterations.non_training, iterations.iterations,
               [&](const Iteration& span) { return library_writes_gradient(model, tags, span); });
    return iterations.iterations.size() != before;
}

}  // namespace tbdprof::tagger
