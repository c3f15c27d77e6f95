#include "iterations.h"

#include "iteration_finders.h"
#include "tbdprof/step_names.h"

#include <algorithm>
#include <limits>

namespace tbdprof::tagger {

Iteration make_iteration(const TraceModel& m, int64_t begin, int64_t end, int32_t process) {
    Iteration it;
    it.process = process;
    it.begin_ns = begin;
    it.end_ns = end;
    it.core_begin_ns = end;
    auto first = std::lower_bound(m.work.begin(), m.work.end(), begin,
                                  [](const WorkItem& w, int64_t t) { return w.launch_ns < t; });
    it.first_work = size_t(first - m.work.begin());
    it.end_work = it.first_work;
    int64_t device_begin = std::numeric_limits<int64_t>::max(), device_end = 0;
    while (it.end_work < m.work.size() && m.work[it.end_work].launch_ns < end) {
        const WorkItem& w = m.work[it.end_work++];
        if (w.process != process) continue;
        if (w.kind == WorkItem::Kind::Kernel) it.core_begin_ns = std::min(it.core_begin_ns, w.launch_ns);
        device_begin = std::min(device_begin, w.start_ns);
        device_end = std::max(device_end, w.end_ns);
    }
    if (device_end > 0) it.device_begin_ns = device_begin, it.device_end_ns = device_end;
    return it;
}

void separate_device_windows(std::vector<Iteration>& its) {
    for (size_t i = 1; i < its.size(); ++i) {
        Iteration& prev = its[i - 1];
        Iteration& here = its[i];
        if (here.device_end_ns == 0 || prev.device_end_ns == 0) continue;
        if (prev.device_end_ns > here.device_begin_ns)
            prev.device_end_ns = std::max(prev.device_begin_ns, here.device_begin_ns);
    }
}

std::map<int32_t, std::vector<size_t>> kernels_by_process(const TraceModel& m) {
    std::map<int32_t, std::vector<size_t>> kernels;
    for (size_t i = 0; i < m.work.size(); ++i)
        if (m.work[i].kind == WorkItem::Kind::Kernel) kernels[m.work[i].process].push_back(i);
    return kernels;
}

namespace {

IterationSet from_ranges(const TraceModel& m, const std::string& range_name) {
    // Only the ranges step_ranges() keeps are copied: an import's hundreds of thousands of operator
    // ranges were each copied, name and all, to be dropped there (2% of an import's instructions).
    std::vector<steps::NamedRange> ranges;
    for (const auto& r : m.ranges)
        if (r.end_ns > r.begin_ns && steps::matches_iteration_range(r.name, range_name))
            ranges.push_back({r.process, r.begin_ns, r.end_ns, r.name});
    const steps::StepRanges marked = steps::step_ranges(ranges, range_name);
    IterationSet set;
    for (const auto& [begin, end] : marked.spans)
        set.iterations.push_back(make_iteration(m, begin, end, static_cast<int32_t>(marked.process)));
    if (!set.iterations.empty()) set.source = "nvtx";
    separate_device_windows(set.iterations);
    return set;
}

}  // namespace

IterationSet detect_iterations(const TraceModel& model, const std::string& range_name) {
    IterationSet from_nvtx = from_ranges(model, range_name);
    if (!from_nvtx.iterations.empty()) return from_nvtx;
    IterationSet found = from_repetition(model);
    if (!range_name.empty() && found.iterations.empty())
        found.note = "no range matches '" + range_name + "' and " + found.note;
    return found;
}

}  // namespace tbdprof::tagger
