#include "collectives.h"

namespace tbdprof::tagger {
namespace {

const LibraryCall* call_of(const TraceModel& m, const WorkItem& w) {
    if (w.kind != WorkItem::Kind::Kernel || w.library_call == kNone) return nullptr;
    return &m.library_calls[size_t(w.library_call)];
}

// Whether work of the same step other than `call_work` wrote `buffer` before it (a kernel or a library
// call: backward's GEMM, or an earlier collective).
bool written_before(const TraceModel& m, const DataFlow& flow, int32_t buffer, uint32_t call_work) {
    const int step = flow.work_iteration[call_work];
    for (const FlowTouch& t : flow.buffers[size_t(buffer)].touches) {
        if (t.work >= call_work) break;
        if (flow.work_iteration[t.work] == step && m.work[t.work].kind == WorkItem::Kind::Kernel && writes(t.use) &&
            t.use != Use::Workspace)
            return true;
    }
    return false;
}

// Whether work of the same step after `call_work` reads what the call left in `buffer` (forward's GEMM
// reading the gathered parameters), before anything overwrites it.
bool read_after(const TraceModel& m, const DataFlow& flow, int32_t buffer, uint32_t call_work) {
    const int step = flow.work_iteration[call_work];
    for (const FlowTouch& t : flow.buffers[size_t(buffer)].touches) {
        if (t.work <= call_work || flow.work_iteration[t.work] != step) continue;
        if (t.use == Use::Overwrite || t.use == Use::Workspace) return false;
        if (m.work[t.work].kind == WorkItem::Kind::Kernel) return true;
    }
    return false;
}

bool untagged(const std::vector<Tag>& tags, int32_t a) {
    return a != kNone && tags[size_t(a)].category.empty();
}

bool tagged(const std::vector<Tag>& tags, int32_t a, std::string_view category) {
    return a != kNone && tags[size_t(a)].category == category;
}

// One pass over the steps' collectives; how many buffers it tagged.
size_t tag_once(const TraceModel& m, const DataFlow& flow, std::vector<Tag>& tags) {
    size_t tagged_now = 0;
    for (uint32_t w = 0; w < m.work.size(); ++w) {
        const LibraryCall* call = call_of(m, m.work[w]);
        if (!call || call->collective == Collective::None || flow.work_iteration[w] < 0 || call->a == call->c)
            continue;
        if (call->collective == Collective::Reduction && tagged(tags, call->c, "gradients") &&
            untagged(tags, call->a) && written_before(m, flow, call->a, w)) {
            tags[size_t(call->a)] = {"gradients", 0.85, "reduced-into-gradients",
                                     "written in the step, then reduced across ranks (all-reduce, reduce-scatter or "
                                     "reduce) into gradients: this rank's gradients before the ranks' are summed",
                                     {}};
            ++tagged_now;
        } else if (call->collective == Collective::Gather && tagged(tags, call->a, "weights") &&
                   untagged(tags, call->c) && read_after(m, flow, call->c, w)) {
            tags[size_t(call->c)] = {"weights", 0.8, "gathered-weights",
                                     "filled by an all-gather or broadcast of weights and then read in the step: the "
                                     "parameters gathered from every rank's shard",
                                     {}};
            ++tagged_now;
        }
    }
    return tagged_now;
}

}  // namespace

Collective collective_of(std::string_view op) {
    if (op == "nccl_all_reduce" || op == "nccl_reduce_scatter" || op == "nccl_reduce") return Collective::Reduction;
    if (op == "nccl_all_gather" || op == "nccl_broadcast") return Collective::Gather;
    return op.starts_with("nccl_") ? Collective::Other : Collective::None;
}

bool is_reduction(const TraceModel& m, const WorkItem& w) {
    const LibraryCall* call = call_of(m, w);
    return call && call->collective == Collective::Reduction;
}

size_t tag_collective_operands(const TraceModel& m, const DataFlow& flow, std::vector<Tag>& tags) {
    size_t total = 0;
    for (size_t now = tag_once(m, flow, tags); now > 0; now = tag_once(m, flow, tags)) total += now;
    return total;
}

}  // namespace tbdprof::tagger
