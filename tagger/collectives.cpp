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

// Whether work of the same step filled `buffer` before `call_work`: a kernel writing it (backward's
// gradient kernels writing a bucket's views) or a device-to-device copy into it (a gradient copied
// into the bucket). Sets are no filling: zeroing a bucket writes no data.
bool filled_before(const TraceModel& m, const DataFlow& flow, int32_t buffer, uint32_t call_work) {
    const int step = flow.work_iteration[call_work];
    for (const FlowTouch& t : flow.buffers[size_t(buffer)].touches) {
        if (t.work >= call_work) break;
        if (flow.work_iteration[t.work] != step || !writes(t.use) || t.use == Use::Workspace) continue;
        const WorkItem::Kind kind = m.work[t.work].kind;
        if (kind == WorkItem::Kind::Kernel || kind == WorkItem::Kind::CopyDtoD) return true;
    }
    return false;
}

// The allocation a device-to-device copy writes, or the one it reads.
int32_t copy_side(const WorkItem& copy, bool destination) {
    for (const Touch& t : copy.touches)
        if ((t.access != Access::Read) == destination) return t.allocation;
    return kNone;
}

// Whether the optimizer's work reads `buffer` after `after_work` in the same step, before anything
// overwrites it.
bool read_by_update_after(const DataFlow& flow, const std::vector<bool>& optimizer_work, int32_t buffer,
                          uint32_t after_work) {
    const int step = flow.work_iteration[after_work];
    for (const FlowTouch& t : flow.buffers[size_t(buffer)].touches) {
        if (t.work <= after_work || flow.work_iteration[t.work] != step) continue;
        if (t.work < optimizer_work.size() && optimizer_work[t.work]) return t.use != Use::Overwrite;
        if (t.use == Use::Overwrite || t.use == Use::Workspace) return false;
    }
    return false;
}

// The buffers a reduced bucket's sum is copied into in the step, before anything overwrites the
// bucket, that the update then reads (DDP copies each reduced bucket back into the parameters'
// .grad), or that the update's rules found gradients otherwise (SGD's first step reads no .grad in
// its kernels: it copies them into the momentum it makes, `copied-into-optimizer-state`); with
// `direct` set when the update reads the bucket itself (.grad as views of the bucket).
std::vector<int32_t> update_inputs_from(const TraceModel& m, const DataFlow& flow,
                                        const std::vector<bool>& optimizer_work, const std::vector<Tag>& tags,
                                        int32_t buffer, uint32_t call_work, bool* direct) {
    std::vector<int32_t> destinations;
    const int step = flow.work_iteration[call_work];
    *direct = false;
    for (const FlowTouch& t : flow.buffers[size_t(buffer)].touches) {
        if (t.work <= call_work || flow.work_iteration[t.work] != step) continue;
        if (t.use == Use::Overwrite || t.use == Use::Workspace) break;
        if (t.work < optimizer_work.size() && optimizer_work[t.work]) *direct = true;
        if (m.work[t.work].kind != WorkItem::Kind::CopyDtoD || t.use != Use::Read) continue;
        const int32_t destination = copy_side(m.work[t.work], true);
        if (destination != kNone && destination != buffer &&
            (read_by_update_after(flow, optimizer_work, destination, t.work) ||
             tags[size_t(destination)].category == "gradients"))
            destinations.push_back(destination);
    }
    return destinations;
}

// The sources of the device-to-device copies that filled `buffer` in the step before `call_work`,
// each written in the step by a kernel before its copy (backward's gradient, copied into the bucket).
std::vector<int32_t> copied_in_from(const TraceModel& m, const DataFlow& flow, int32_t buffer, uint32_t call_work) {
    std::vector<int32_t> sources;
    const int step = flow.work_iteration[call_work];
    for (const FlowTouch& t : flow.buffers[size_t(buffer)].touches) {
        if (t.work >= call_work) break;
        if (flow.work_iteration[t.work] != step || m.work[t.work].kind != WorkItem::Kind::CopyDtoD ||
            t.use != Use::Overwrite)
            continue;
        const int32_t source = copy_side(m.work[t.work], false);
        if (source != kNone && source != buffer && written_before(m, flow, source, t.work)) sources.push_back(source);
    }
    return sources;
}

bool untagged(const std::vector<Tag>& tags, int32_t a) {
    return a != kNone && tags[size_t(a)].category.empty();
}

bool tagged(const std::vector<Tag>& tags, int32_t a, std::string_view category) {
    return a != kNone && tags[size_t(a)].category == category;
}

// DDP's gradient bucket: the buffer of an in-place reduction, filled in the step before the call (by
// backward's kernels writing its views, or by copies of gradients), whose sum over the ranks then goes
// to the update (read by it, or copied into buffers the update reads). It holds gradients while it is
// reduced, and so do the buffers copied into it and out of it (rules `reduced-gradient-bucket`,
// `copied-into-reduced-bucket`, `copied-from-reduced-bucket`). Returns how many buffers it tagged.
size_t tag_reduced_bucket(const TraceModel& m, const DataFlow& flow, const std::vector<bool>& optimizer_work,
                          const LibraryCall& call, uint32_t w, std::vector<Tag>& tags) {
    if (call.collective != Collective::Reduction || call.a != call.c || call.a == kNone ||
        !filled_before(m, flow, call.a, w))
        return 0;
    bool direct = false;
    const std::vector<int32_t> outputs = update_inputs_from(m, flow, optimizer_work, tags, call.a, w, &direct);
    if (!direct && outputs.empty()) return 0;
    size_t tagged_now = 0;
    auto tag = [&](int32_t a, const char* rule, const char* reason) {
        if (!untagged(tags, a)) return;
        tags[size_t(a)] = {"gradients", 0.85, rule, reason, {}};
        ++tagged_now;
    };
    tag(call.a, "reduced-gradient-bucket",
        "filled in the step, reduced across ranks in place, and the sum goes to the update (read by it, or copied "
        "into what it reads): a bucket of gradients");
    for (int32_t a : outputs)
        tag(a, "copied-from-reduced-bucket",
            "filled by a copy of a bucket of gradients reduced across ranks, then read by the update");
    for (int32_t a : copied_in_from(m, flow, call.a, w))
        tag(a, "copied-into-reduced-bucket",
            "written in the step and copied into a bucket of gradients that is reduced across ranks for the update");
    return tagged_now;
}

// One pass over the steps' collectives; how many buffers it tagged.
size_t tag_once(const TraceModel& m, const DataFlow& flow, const std::vector<bool>& optimizer_work,
                std::vector<Tag>& tags) {
    size_t tagged_now = 0;
    for (uint32_t w = 0; w < m.work.size(); ++w) {
        const LibraryCall* call = call_of(m, m.work[w]);
        if (!call || call->collective == Collective::None || flow.work_iteration[w] < 0) continue;
        tagged_now += tag_reduced_bucket(m, flow, optimizer_work, *call, w, tags);
        if (call->a == call->c) continue;
        if (call->collective == Collective::Reduction && tagged(tags, call->c, "gradients") &&
            untagged(tags, call->a) && written_before(m, flow, call->a, w)) {
            tags[size_t(call->a)] = {"gradients",
                                     0.85,
                                     "reduced-into-gradients",
                                     "written in the step, then reduced across ranks (all-reduce, reduce-scatter or "
                                     "reduce) into gradients: this rank's gradients before the ranks' are summed",
                                     {}};
            ++tagged_now;
        } else if (call->collective == Collective::Gather && tagged(tags, call->a, "weights") &&
                   untagged(tags, call->c) && read_after(m, flow, call->c, w)) {
            tags[size_t(call->c)] = {"weights",
                                     0.8,
                                     "gathered-weights",
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

size_t tag_collective_operands(const TraceModel& m, const DataFlow& flow, const std::vector<bool>& optimizer_work,
                               std::vector<Tag>& tags) {
    size_t total = 0;
    for (size_t now = tag_once(m, flow, optimizer_work, tags); now > 0; now = tag_once(m, flow, optimizer_work, tags))
        total += now;
    return total;
}

}  // namespace tbdprof::tagger
