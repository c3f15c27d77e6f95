#include "processes.h"

#include "pool_tagging.h"

#include <algorithm>
#include <set>

namespace tbdprof::tagger {
namespace {

size_t processes_with_kernels(const TraceModel& m) {
    std::set<int32_t> seen;
    for (const WorkItem& w : m.work)
        if (w.kind == WorkItem::Kind::Kernel) seen.insert(w.process);
    return seen.size();
}

template <typename T>
std::vector<T> of_process(const std::vector<T>& all, int32_t process) {
    std::vector<T> out;
    for (const T& item : all)
        if (item.process == process) out.push_back(item);
    return out;
}

// The process's work in launch order, its touches and library calls renumbered; `work_index` maps
// the whole model's work to the process's (kNone for another process's).
void copy_work(const TraceModel& m, int32_t process, const std::vector<int32_t>& allocation,
               const std::vector<int32_t>& call, ProcessModel& p, std::vector<int32_t>& work_index) {
    work_index.assign(m.work.size(), kNone);
    for (size_t w = 0; w < m.work.size(); ++w) {
        const WorkItem& item = m.work[w];
        if (item.process != process) continue;
        WorkItem copy = item;
        copy.touches.clear();
        for (const Touch& t : item.touches)
            if (allocation[size_t(t.allocation)] != kNone)
                copy.touches.push_back({allocation[size_t(t.allocation)], t.access});
        copy.library_call = item.library_call == kNone ? kNone : call[size_t(item.library_call)];
        work_index[w] = static_cast<int32_t>(p.model.work.size());
        p.work_of.push_back(w);
        p.model.work.push_back(std::move(copy));
    }
}

// Appends `part`'s iterations to `joined`, their work indices mapped back to the whole model's.
void join_iterations(const TraceModel& m, const ProcessModel& p, const IterationSet& part, IterationSet& joined) {
    auto whole = [&](size_t local) { return local < p.work_of.size() ? p.work_of[local] : m.work.size(); };
    auto add = [&](std::vector<Iteration>& to, Iteration it) {
        // The first work after the span's last own item: another process's work in between is skipped
        // by every reader, which looks only at the span's process.
        const size_t end = it.end_work > it.first_work ? whole(it.end_work - 1) + 1 : whole(it.first_work);
        it.first_work = whole(it.first_work);
        it.end_work = std::max(it.first_work, end);
        to.push_back(it);
    };
    for (const Iteration& it : part.iterations) add(joined.iterations, it);
    for (const Iteration& it : part.non_training) add(joined.non_training, it);
    if (joined.source.empty()) joined.source = part.source;
    if (joined.note.empty() && part.iterations.empty()) joined.note = part.note;
}

// Adds one process's result to the whole run's: tags and sub-ranges index the whole model, phases
// the joined iterations (the process's first step is `first_iteration`).
void join_result(const ProcessModel& p, TagResult&& part, size_t first_iteration, TagResult& joined) {
    for (size_t a = 0; a < p.allocation_of.size(); ++a) joined.tags[p.allocation_of[a]] = std::move(part.tags[a]);
    for (size_t w = 0; w < p.work_of.size() && w < part.optimizer_work.size(); ++w)
        joined.optimizer_work[p.work_of[w]] = part.optimizer_work[w];
    for (Phase& phase : part.phases) {
        phase.iteration += first_iteration;
        joined.phases.push_back(std::move(phase));
    }
    for (SubRangeTag& r : part.subranges) {
        r.segment = static_cast<int32_t>(p.allocation_of[size_t(r.segment)]);
        joined.subranges.push_back(std::move(r));
    }
    joined.segments_with_subranges += part.segments_with_subranges;
    joined.single_role_segments += part.single_role_segments;
    joined.segments_without_subranges += part.segments_without_subranges;
    joined.segment_level = joined.segment_level || part.segment_level;
    joined.registered_regions += part.registered_regions;
    joined.named_regions += part.named_regions;
}

}  // namespace

std::vector<int32_t> processes_of(const TraceModel& m) {
    std::set<int32_t> seen;
    for (const Allocation& a : m.allocations) seen.insert(a.process);
    for (const WorkItem& w : m.work) seen.insert(w.process);
    return {seen.begin(), seen.end()};
}

ProcessModel model_of_process(const TraceModel& m, int32_t process) {
    ProcessModel p;
    TraceModel& out = p.model;
    std::vector<int32_t> allocation(m.allocations.size(), kNone);
    for (size_t a = 0; a < m.allocations.size(); ++a) {
        if (m.allocations[a].process != process) continue;
        allocation[a] = static_cast<int32_t>(out.allocations.size());
        p.allocation_of.push_back(a);
        out.allocations.push_back(m.allocations[a]);
    }
    auto local = [&](int32_t a) { return a == kNone ? kNone : allocation[size_t(a)]; };
    std::vector<int32_t> call(m.library_calls.size(), kNone);
    for (size_t c = 0; c < m.library_calls.size(); ++c) {
        if (m.library_calls[c].process != process) continue;
        LibraryCall copy = m.library_calls[c];
        copy.a = local(copy.a), copy.b = local(copy.b), copy.c = local(copy.c), copy.workspace = local(copy.workspace);
        call[c] = static_cast<int32_t>(out.library_calls.size());
        out.library_calls.push_back(copy);
    }
    std::vector<int32_t> work;
    copy_work(m, process, allocation, call, p, work);
    out.several_word_slots = m.several_word_slots;  // PointerUse::several_at stays valid
    for (const PointerUse& u : m.pointer_uses) {
        if (work[u.work] == kNone || local(u.allocation) == kNone) continue;
        PointerUse copy = u;
        copy.work = static_cast<uint32_t>(work[u.work]);
        copy.allocation = local(u.allocation);
        out.pointer_uses.push_back(copy);
    }
    for (const RegisteredRegion& r : m.regions) {
        if (local(r.allocation) == kNone) continue;
        out.regions.push_back(r);
        out.regions.back().allocation = local(r.allocation);
    }
    out.ranges = of_process(m.ranges, process);
    out.host_waits = of_process(m.host_waits, process);
    out.capture_windows = of_process(m.capture_windows, process);
    out.has_argument_info = m.has_argument_info;
    out.operands_unresolved = m.operands_unresolved;
    // As load_model decides it, for this process's allocations alone.
    out.pooled = !out.regions.empty() || std::any_of(out.allocations.begin(), out.allocations.end(), [](const auto& a) {
        return a.distinct_offsets >= kPooledOffsets;
    });
    return p;
}

TagResult tag_each_process(const TraceModel& m, const std::string& range_name, IterationSet& its) {
    if (processes_with_kernels(m) < 2) return tag_model(m, range_name, its);
    its = IterationSet{};
    TagResult joined;
    joined.tags.resize(m.allocations.size());
    joined.optimizer_work.assign(m.work.size(), false);
    for (int32_t process : processes_of(m)) {
        const ProcessModel p = model_of_process(m, process);
        IterationSet part;
        TagResult result = tag_model(p.model, range_name, part);
        const size_t first_iteration = its.iterations.size();
        join_iterations(m, p, part, its);
        join_result(p, std::move(result), first_iteration, joined);
    }
    if (!its.iterations.empty()) its.note.clear();  // why a process had none, when another had steps
    return joined;
}

}  // namespace tbdprof::tagger
