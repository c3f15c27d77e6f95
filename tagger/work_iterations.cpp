#include "work_iterations.h"

#include <algorithm>

namespace tbdprof::tagger {
namespace {

// Ranges in order and disjoint: each work item lies in at most one, found by binary search.
bool ordered_and_disjoint(const std::vector<Iteration>& its) {
    for (size_t i = 1; i < its.size(); ++i)
        if (its[i].first_work < its[i - 1].end_work || its[i].first_work < its[i - 1].first_work) return false;
    return true;
}

}  // namespace

WorkIterations::WorkIterations(const TraceModel& m, const IterationSet& its)
    : model_(&m), iterations_(&its.iterations) {
    if (ordered_and_disjoint(its.iterations)) return;
    per_item_.assign(m.work.size(), -1);
    for (size_t i = 0; i < its.iterations.size(); ++i) {
        const Iteration& it = its.iterations[i];
        for (size_t w = it.first_work; w < it.end_work && w < m.work.size(); ++w)
            if (m.work[w].process == it.process) per_item_[w] = static_cast<int>(i);
    }
}

int WorkIterations::operator[](size_t work) const {
    if (!per_item_.empty()) return per_item_[work];
    if (iterations_ == nullptr || work >= model_->work.size()) return -1;
    // The last iteration whose range begins at or before `work` (empty ranges included: the one
    // that holds `work`, if any, is the last of those, the ranges being disjoint and in order).
    auto after = std::upper_bound(iterations_->begin(), iterations_->end(), work,
                                  [](size_t w, const Iteration& it) { return w < it.first_work; });
    if (after == iterations_->begin()) return -1;
    const Iteration& it = *(after - 1);
    if (work >= it.end_work || model_->work[work].process != it.process) return -1;
    return static_cast<int>(after - 1 - iterations_->begin());
}

}  // namespace tbdprof::tagger
