// The iteration each work item belongs to, asked by work index. The rules ask it for every touch
// and every item of a step; the answer is found from the iterations' work ranges rather than kept
// per work item, which would be 4 bytes a kernel for the whole run.
#pragma once

#include "iterations.h"
#include "model.h"

#include <cstddef>
#include <vector>

namespace tbdprof::tagger {

class WorkIterations {
public:
    WorkIterations() = default;
    // `m` and `its` must outlive this. An item in the work range [first_work, end_work) of an
    // iteration of its process belongs to it; where ranges overlap, the later iteration wins.
    WorkIterations(const TraceModel& m, const IterationSet& its);

    // The iteration (index into IterationSet::iterations) of work item `work`; -1 outside every one.
    int operator[](size_t work) const;

private:
    const TraceModel* model_ = nullptr;
    const std::vector<Iteration>* iterations_ = nullptr;
    // Filled only when the iterations' work ranges are out of order or overlap, which no finder
    // makes today; then each item's iteration is kept, as assigned in iteration order.
    std::vector<int> per_item_;
};

}  // namespace tbdprof::tagger
