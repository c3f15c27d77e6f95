// Gradient accumulation: the micro-batches inside one training step, found by their batch arrivals.
#include "iteration_finders.h"
#include "iterations.h"

#include <algorithm>
#include <optional>

namespace tbdprof::tagger {
namespace {

// Two batch arrivals `a` < `b` begin micro-batches of one step when the kernels after them begin
// alike, for an eighth of the distance between them and at least 4: the same forward runs again
// (the backward of a later micro-batch may differ: PyTorch adds each parameter's new gradient to the
// one accumulated). A batch copied in two parts (inputs, then the labels before the loss), or a copy
// for other work (gradient clipping's), begins with other kernels.
bool begin_alike(const TraceModel& m, const std::vector<size_t>& kernels, size_t a, size_t b) {
    const size_t wanted = std::max<size_t>(4, (b - a) / 8);
    if (b + wanted > kernels.size()) return false;
    for (size_t i = 0; i < wanted; ++i)
        if (m.work[kernels[a + i]].function != m.work[kernels[b + i]].function) return false;
    return true;
}

// The batch arrivals in the step of `period` kernels from `start` that begin micro-batches.
std::vector<size_t> micro_batch_arrivals(const TraceModel& m, const std::vector<size_t>& kernels, size_t start,
                                         size_t period) {
    std::vector<size_t> arrivals;
    for (size_t k = start; k < start + period && k < kernels.size(); ++k)
        if (batch_arrives(m, kernels, k)) arrivals.push_back(k);
    return alike_arrivals(m, kernels, arrivals);
}

}  // namespace

// A batch arrives just before kernel `k`: a host-to-device copy launched since the kernel before.
bool batch_arrives(const TraceModel& m, const std::vector<size_t>& kernels, size_t k) {
    if (k == 0 || k >= kernels.size()) return false;
    for (size_t w = kernels[k - 1] + 1; w < kernels[k]; ++w)
        if (m.work[w].kind == WorkItem::Kind::CopyHtoD) return true;
    return false;
}

// Of the batch arrivals of one step (positions in `kernels`), those that begin micro-batches: whose
// kernels begin like another arrival's.
std::vector<size_t> alike_arrivals(const TraceModel& m, const std::vector<size_t>& kernels,
                                   const std::vector<size_t>& arrivals) {
    std::vector<size_t> micro;
    for (size_t i = 0; i < arrivals.size(); ++i)
        for (size_t j = 0; j < arrivals.size(); ++j)
            if (i != j &&
                begin_alike(m, kernels, std::min(arrivals[i], arrivals[j]), std::max(arrivals[i], arrivals[j]))) {
                micro.push_back(arrivals[i]);
                break;
            }
    return micro;
}

// Gradient accumulation: a step of `period` kernels holds several micro-batches, each a batch arrival
// and the same forward, and the update after the last one. The micro-batches look alike, so copies
// and host pauses cannot say which arrival begins the step; what does is what comes before it: the
// step's first micro-batch follows the update, kernels that micro-batch does not run, while a later
// one follows the end of the micro-batch before, whose kernels it runs again. Looks at the step from
// `start` (a steady step, after the first one's lazy set-up) and returns the arrival in it that
// begins the step; `start` when the step is not micro-batches or no single arrival follows such
// kernels (an update reusing backward's kernels says nothing).
size_t first_micro_batch(const TraceModel& m, const std::vector<size_t>& kernels, size_t start, size_t period) {
    std::vector<size_t> micro = micro_batch_arrivals(m, kernels, start, period);
    if (micro.size() < 2 || micro.front() + period >= kernels.size()) return start;
    micro.push_back(micro.front() + period);  // the next step's first micro-batch closes the last
    std::optional<size_t> first;
    for (size_t i = 0; i + 1 < micro.size(); ++i) {
        const int32_t before = m.work[kernels[micro[i] - 1]].function;
        bool runs_it = false;
        for (size_t k = micro[i]; k < micro[i + 1] && !runs_it; ++k) runs_it = m.work[kernels[k]].function == before;
        if (runs_it) continue;
        if (first) return start;  // more than one: not a single update before the step
        first = micro[i];
    }
    return first.value_or(start);
}

std::vector<size_t> micro_batch_starts(const TraceModel& m, const IterationSet& steps) {
    const std::map<int32_t, std::vector<size_t>> kernels_of = kernels_by_process(m);
    std::vector<size_t> starts;
    for (const Iteration& step : steps.iterations) {
        const auto found = kernels_of.find(step.process);
        if (found == kernels_of.end()) continue;
        const std::vector<size_t>& kernels = found->second;
        // The step's kernels, as positions in the process's list (batch_arrives looks back to the
        // kernel before each, which may be the step before's).
        const size_t first =
            size_t(std::lower_bound(kernels.begin(), kernels.end(), step.first_work) - kernels.begin());
        const size_t end = size_t(std::lower_bound(kernels.begin(), kernels.end(), step.end_work) - kernels.begin());
        // The first step's batch may arrive before the run's first kernel, with no kernel before it.
        std::vector<size_t> arrivals;
        for (size_t k = first; k < end; ++k) {
            bool arrives = batch_arrives(m, kernels, k);
            for (size_t w = 0; k == 0 && !arrives && w < kernels[0]; ++w)
                arrives = m.work[w].kind == WorkItem::Kind::CopyHtoD && m.work[w].process == step.process;
            if (arrives) arrivals.push_back(k);
        }
        const std::vector<size_t> micro = alike_arrivals(m, kernels, arrivals);
        if (micro.size() < 2) continue;
        for (size_t k : micro) {
            if (k == micro.front()) continue;  // the step's first micro-batch
            size_t w = kernels[k - 1] + 1;
            while (w < kernels[k] && !(m.work[w].kind == WorkItem::Kind::CopyHtoD && m.work[w].process == step.process))
                ++w;
            starts.push_back(w);
        }
    }
    std::sort(starts.begin(), starts.end());
    return starts;
}

}  // namespace tbdprof::tagger
