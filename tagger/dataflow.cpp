#include "dataflow.h"

#include <algorithm>

namespace tbdprof::tagger {

Use use_of(const TraceModel& m, const WorkItem& w, const Touch& t) {
    switch (w.kind) {
        case WorkItem::Kind::Set:
            return Use::Overwrite;
        case WorkItem::Kind::CopyHtoD:
        case WorkItem::Kind::CopyDtoH:
        case WorkItem::Kind::CopyDtoD:
            return t.access == Access::Read ? Use::Read : Use::Overwrite;
        case WorkItem::Kind::Kernel:
            break;
    }
    if (w.library_call != kNone) {
        const LibraryCall& c = m.library_calls[size_t(w.library_call)];
        // The kernel of an NCCL group of several calls (model.cpp, resolve_nccl_groups) runs calls
        // whose operands its own call (ncclGroupEnd) has none of: it reads what they send and
        // overwrites what they receive.
        if (c.collective != Collective::None && c.a == kNone && c.b == kNone && c.c == kNone)
            return t.access == Access::Write ? Use::Overwrite : Use::Read;
        if (t.allocation == c.workspace) return Use::Workspace;
        // The output operand: read and written by an axpy or scal, overwritten otherwise (a GEMM's
        // beta may keep some of it; the trace does not say).
        if (t.allocation == c.c) return c.output_read ? Use::Modify : Use::Overwrite;
        return Use::Read;
    }
    return t.access == Access::Read ? Use::Read : t.access == Access::Write ? Use::Modify : Use::Unknown;
}

namespace {

bool is_kernel(const WorkItem& w) {
    return w.kind == WorkItem::Kind::Kernel;
}

// Kernels launched strictly between two work items: "adjacent" work has none, or one (a second
// kernel of the same small operation).
size_t kernels_between(const TraceModel& m, uint32_t a, uint32_t b) {
    size_t n = 0;
    for (uint32_t w = a + 1; w < b && n < 3; ++w) n += is_kernel(m.work[w]);
    return n;
}

// One iteration's touches of a buffer: [begin, end) of FlowFacts::touches.
void read_iteration(const TraceModel& m, FlowFacts& f, size_t begin, size_t end) {
    bool first_seen = false, carried = false, updated = false, used = false;
    for (size_t i = begin; i < end; ++i) {
        const FlowTouch& t = f.touches[i];
        const WorkItem& w = m.work[t.work];
        // The first touch of any kind decides whether the value came from before: a set or a
        // copy into it makes it anew.
        if (!first_seen) {
            first_seen = true;
            // A conversion that reads it beside its output (Touch::reads_first, carried_reads.h)
            // takes what it held: a weight autocast copies for the step's products.
            carried = (t.use == Use::Read || t.reads_first) && (is_kernel(w) || w.kind == WorkItem::Kind::CopyDtoH);
        } else if (carried && is_kernel(w) && (t.use == Use::Modify || t.use == Use::Unknown)) {
            updated = true;
        }
        used |= is_kernel(w);
    }
    if (!used) return;
    ++f.iterations_used;
    f.carried_in += carried;
    f.updated_after_read += updated;
    // Episodes: a write, then the reads of what it wrote (count_write_episodes).
    const WriteEpisodes episodes = count_write_episodes(m, f.touches, begin, end);
    f.temp_episodes += episodes.temporary;
    f.other_episodes += episodes.other;
    f.most_temp_episodes = std::max(f.most_temp_episodes, episodes.temporary);
}

}  // namespace

WriteEpisodes count_write_episodes(const TraceModel& m, const std::vector<FlowTouch>& touches, size_t begin,
                                   size_t end) {
    WriteEpisodes e;
    for (size_t i = begin; i < end;) {
        const FlowTouch& t = touches[i];
        if (!writes(t.use) || t.use == Use::Workspace) {
            ++e.other, ++i;
            continue;
        }
        size_t j = i + 1;
        if (j < end && touches[j].use == Use::Unknown)
            ++j;
        else
            while (j < end && touches[j].use == Use::Read) ++j;
        const bool temporary = j == i + 2 && kernels_between(m, t.work, touches[i + 1].work) <= 1;
        ++(temporary ? e.temporary : e.other);
        i = j;
    }
    return e;
}

DataFlow build_data_flow(const TraceModel& m, const IterationSet& its) {
    DataFlow flow;
    flow.work_iteration = WorkIterations(m, its);
    flow.deciding.assign(its.iterations.size(), true);
    if (its.iterations.size() >= 3) flow.deciding[0] = false;
    flow.buffers.resize(m.allocations.size());
    for (size_t w = 0; w < m.work.size(); ++w) {
        const WorkItem& item = m.work[w];
        for (const Touch& t : item.touches) {
            FlowFacts& f = flow.buffers[size_t(t.allocation)];
            Use use = use_of(m, item, t);
            f.touches.push_back({static_cast<uint32_t>(w), use, t.reads_first});
            if (flow.work_iteration[w] < 0) continue;
            f.h2d |= item.kind == WorkItem::Kind::CopyHtoD && use == Use::Overwrite;
            f.kernel_written |= is_kernel(item) && writes(use) && use != Use::Workspace;
            f.written_in_iterations |= writes(use);
        }
    }
    for (FlowFacts& f : flow.buffers) {
        // Iterations this buffer is used in, steady ones first: a buffer used only in the first
        // step (a per-step tensor of that step) is decided by that step.
        bool in_steady = false;
        for (const FlowTouch& t : f.touches) {
            int it = flow.work_iteration[t.work];
            in_steady |= it >= 0 && flow.deciding[size_t(it)];
        }
        for (size_t begin = 0; begin < f.touches.size();) {
            int it = flow.work_iteration[f.touches[begin].work];
            size_t end = begin + 1;
            while (end < f.touches.size() && flow.work_iteration[f.touches[end].work] == it) ++end;
            if (it >= 0 && (flow.deciding[size_t(it)] || !in_steady)) read_iteration(m, f, begin, end);
            begin = end;
        }
    }
    return flow;
}

}  // namespace tbdprof::tagger
