#include "subranges.h"

#include "carried_reads.h"
#include "outlived_bounds.h"
#include "output_slots.h"
#include "rewritten_tenants.h"
#include "round_trips.h"
#include "slice_reads.h"
#include "subrange_extents.h"
#include "workspace_barriers.h"

#include <algorithm>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

struct Instance {
    uint64_t offset = 0;
    int64_t exact_bytes = 0;  // largest exact size seen (copies, sets)
    int64_t bound_bytes = 0;  // largest lower bound seen (GEMM operands)
    uint32_t first = 0, last = 0;
    std::vector<size_t> uses;  // indices into TraceModel::pointer_uses
    bool empty = false;        // merged into another
    bool after_rewrite = false;  // SubRange::after_rewrite
    // Begun by a rewrite cut: the size evidence of the tenants before it at its start (0: none).
    int64_t before_rewrite_bytes = 0;
    bool bound_of_one_tenant = false;  // SubRange::bound_of_one_tenant
    int64_t known_bytes() const { return exact_bytes ? exact_bytes : bound_bytes; }
};

// Whether some use of `inner` falls inside `outer`'s life [first, last]. Lives that merely overlap
// are not enough: a tensor at an inner address whose uses all lie before and after the outer one's
// (an activation used in forward whose space, after the outer tensor was freed, a caching allocator
// gives to a weight gradient or an update's temporary) is no slice of it, and absorbing it would
// stretch the outer tensor over both lives.
bool used_within(const TraceModel& m, const Instance& inner, const Instance& outer) {
    return std::any_of(inner.uses.begin(), inner.uses.end(), [&](size_t index) {
        const uint32_t work = m.pointer_uses[index].work;
        return work >= outer.first && work <= outer.last;
    });
}

// Per work item: its step (-1 outside the steps) and which micro-batch of that step it belongs to
// (0 for the first, and in steps without micro-batches).
struct WorkSteps {
    std::vector<int> step;
    std::vector<int> micro;
};

WorkSteps work_steps(const TraceModel& m, const IterationSet& its) {
    WorkSteps result{std::vector<int>(m.work.size(), -1), std::vector<int>(m.work.size(), 0)};
    for (size_t i = 0; i < its.iterations.size(); ++i) {
        const Iteration& it = its.iterations[i];
        for (size_t w = it.first_work; w < it.end_work && w < m.work.size(); ++w)
            if (m.work[w].process == it.process) result.step[w] = static_cast<int>(i);
    }
    for (size_t start : micro_batch_starts(m, its)) {
        if (start >= m.work.size() || result.step[start] < 0) continue;
        const Iteration& it = its.iterations[size_t(result.step[start])];
        for (size_t w = start; w < it.end_work && w < m.work.size(); ++w)
            if (m.work[w].process == it.process) ++result.micro[w];
    }
    return result;
}

// Whether `u`'s byte count is the size of the tensor at its address. A copy or set writing it, a
// recorded operand extent: yes. A copy reading N bytes from it says only that the tensor holds at
// least N (a slice may be copied out): a lower bound, like a GEMM operand's shape.
bool exact_size(const TraceModel& m, const PointerUse& u) {
    return u.exact && !(u.access == Access::Read && m.work[u.work].kind != WorkItem::Kind::Kernel);
}

void add(const TraceModel& m, Instance& instance, const PointerUse& u, size_t index) {
    if (instance.uses.empty()) instance.first = u.work;
    instance.uses.push_back(index);
    instance.first = std::min(instance.first, u.work);
    instance.last = std::max(instance.last, u.work);
    if (exact_size(m, u))
        instance.exact_bytes = std::max(instance.exact_bytes, u.bytes);
    else
        instance.bound_bytes = std::max(instance.bound_bytes, u.bytes);
}

// True when `u` is the workspace operand of its work's library call.
bool workspace_use(const TraceModel& m, const PointerUse& u) {
    const int32_t call = m.work[u.work].library_call;
    if (call == kNone) return false;
    return u.operand_of_call.workspace;
}

// A library call overwrites the address after other work used what it held: the call's result is a
// tensor of its own (a caching allocator gives the space of activations freed in backward to the
// weight gradient a GEMM writes next). Not when the earlier use wrote it by a set or copy (zeroed or
// filled for the call to accumulate into, were beta 1) or was a library call writing it too (a chain
// of accumulating calls, one per micro-batch).
bool overwritten_by_library(const TraceModel& m, const PointerUse& previous, const PointerUse& u) {
    if (u.work == previous.work || !library_overwrite(m, u)) return false;
    const WorkItem& before = m.work[previous.work];
    if (previous.access == Access::Write && before.kind != WorkItem::Kind::Kernel) return false;
    return !(before.library_call != kNone && previous.access == Access::Write);
}

// Whether `u`, a device copy writing fewer bytes than the set that `previous` (the address's last use)
// zeroed, fills a slice of the zeroed tensor rather than starting a tensor of its own.
bool fills_zeroed_slice(const TraceModel& m, const PointerUse& previous, const PointerUse& u) {
    const WorkItem::Kind kind = m.work[u.work].kind;
    return m.work[previous.work].kind == WorkItem::Kind::Set && previous.exact &&
           (kind == WorkItem::Kind::CopyDtoD || kind == WorkItem::Kind::CopyHtoD) && u.exact &&
           u.access == Access::Write && u.bytes > 0 && u.bytes < previous.bytes;
}

// Whether `instance`, whose last use so far is work `previous`, is a tensor of that work's micro-batch
// that `u`, the first use in a later micro-batch of the same step, cannot find carried over: it was
// made in the micro-batch (its first use there writes it) and read there, and `u` writes it before
// reading it. Its value was consumed, and the later micro-batch makes a new one from its own batch
// (a caching allocator gives the space of the activations the micro-batch before released to the
// next one's). The read: by work that certainly reads (a pointer to const, a library call's input,
// a copy's source), and `u` no such read; or through a kernel's parameter word that never starts a
// value (`outputs`, output_slots.h: an elementwise kernel consuming a backward GEMM's product), and
// `u` writes through an output word and no other (not in place: an add into a gradient passes it in
// two words). A gradient accumulated over the micro-batches is written in each and read by nothing
// before the update, so it stays one tensor.
bool micro_batch_tensor(const TraceModel& m, const WorkSteps& steps, const std::vector<bool>& outputs,
                        const Instance& instance, uint32_t previous, const PointerUse& u) {
    const int step = steps.step[previous];
    const int micro = steps.micro[previous];
    if (step < 0 || steps.step[u.work] != step || steps.micro[u.work] == micro || instance.uses.empty() ||
        u.access == Access::Read)
        return false;
    const PointerUse& first = m.pointer_uses[instance.uses.front()];
    if (steps.step[first.work] != step || steps.micro[first.work] != micro || first.access == Access::Read)
        return false;
    auto read_by = [&](auto&& reads) {
        return std::any_of(instance.uses.begin(), instance.uses.end(),
                           [&](size_t index) { return reads(m.pointer_uses[index]); });
    };
    if (read_by([](const PointerUse& r) { return r.access == Access::Read; })) return true;
    const bool writes_anew = u.slot < m.kernel_slots && u.slot < outputs.size() && outputs[u.slot];
    return writes_anew && read_by([&](const PointerUse& r) { return reads_value(m, outputs, r); });
}

// One address over time: a new tensor starts where the contents cannot have been carried over.
// `shared_space`: the allocation is addressed at several starts (a segment whose space the allocator
// hands out anew); one used only from its start is a buffer the program planned and refills (an
// im2col buffer a GEMM writes into in backward), whose reuse as a library call's output is no new
// tensor.
// `returned`: per pointer use, a copy bringing its address's own value back (round_trips.h).
// `outputs`: per kernel parameter word, whether it starts values (output_slots.h).
// `carried`: what shows a kernel reading through a writable word (carried_reads.h).
// `slices`: per pointer use, a library call's read of a slice of a value just made below it
// (slice_reads.h).
// `spans`: the segment's library workspaces (workspace_barriers.h).
void split_address(const TraceModel& m, const WorkSteps& steps, const std::vector<bool>& returned,
                   const std::vector<bool>& outputs, const CarriedReads& carried, const std::vector<bool>& slices,
                   const std::vector<WorkspaceSpan>& spans, const std::vector<size_t>& uses, bool shared_space,
                   std::vector<Instance>& out) {
    Instance* current = nullptr;
    const PointerUse* previous = nullptr;
    for (size_t index : uses) {
        const PointerUse& u = m.pointer_uses[index];
        bool start = current == nullptr;
        bool rewritten = false;
        if (!start) {
            // A copy or set wrote it whole: whatever it held before is gone. Not a copy of fewer bytes
            // into a tensor a set has just zeroed and nothing used since: it fills a slice of it (a
            // tensor assembled from slices, as the backward of a split or a narrow makes one). Nor a
            // copy of the address's own value, summed over the ranks on its way through a bucket: the
            // value derives from the one before, one tensor updated through an intermediary.
            const bool slice = fills_zeroed_slice(m, *previous, u);
            bool replaced =
                u.exact && u.access == Access::Write && u.work != previous->work && !slice && !returned[index];
            // A library's workspace is scratch of that one call: other work after it, or another
            // call given it as workspace, holds a tensor of its own (a caching allocator hands the
            // space of a per-call GEMM workspace to the next tensor).
            // Nor is anything carried into a call's workspace: handed to a library call as scratch
            // after other work used the address, it starts a tensor of its own (a caching allocator
            // gives the space of a freed activation to the next call's workspace), also in a segment
            // whose tensors all began at its start (the call overwrites its scratch without reading
            // it, whoever planned the space).
            replaced = replaced || ((workspace_use(m, *previous) || workspace_use(m, u)) &&
                                    m.work[u.work].library_call != m.work[previous->work].library_call);
            // Written before being read in a later step (or before the first step): a new tensor.
            // So is a slice of a value just made below it, read first (slice_reads.h): what the
            // address held before was not carried in. Not a parameter's conversion for the step's
            // products (carried_reads.h).
            bool new_step = steps.step[u.work] != steps.step[previous->work] &&
                            (u.access != Access::Read || slices[index]) &&
                            !carried_over(m, outputs, carried, m.pointer_uses[current->uses.front()], *previous, u);
            // Or in a later micro-batch of the step, in space a caching allocator hands out anew, when
            // what it held was made and consumed in the micro-batch before (micro_batch_tensor).
            new_step = new_step || (shared_space && micro_batch_tensor(m, steps, outputs, *current, previous->work, u));
            // Sizes that cannot belong to one tensor.
            int64_t exact = current->exact_bytes;
            bool other_size = !slice && exact && u.bytes && (exact_size(m, u) ? u.bytes != exact : u.bytes > exact);
            // (Cut only where the tensor before has size evidence: without any, it would run to the
            // next start in use and cover its neighbours, a worse error than one tensor too many. A
            // tenant a rewrite cut began counts the evidence of those before it at its start: uncut,
            // it was part of their piece, which such a call cut.)
            const bool sized = current->known_bytes() > 0 || current->before_rewrite_bytes > 0;
            start = replaced || new_step || other_size ||
                    (shared_space && sized && overwritten_by_library(m, *previous, u));
            // Or a kernel writes a new value where other work just read the one there: the value was
            // consumed, its block freed and given to the next tenant (change 45; before any slices).
            rewritten = shared_space && rewrites_read_value(m, outputs, *previous, u);
            start = start || rewritten;
            // Or a call's workspace held the address in between: no value is carried through scratch.
            start = start || workspace_between(m, spans, u.offset, previous->work, u.work);
        }
        if (start) {
            const int64_t before_bytes = current == nullptr           ? 0
                                         : current->known_bytes() > 0 ? current->known_bytes()
                                                                      : current->before_rewrite_bytes;
            out.push_back({});
            current = &out.back();
            current->offset = u.offset;
            current->after_rewrite = rewritten;
            if (rewritten) current->before_rewrite_bytes = before_bytes;
        }
        // The size evidence so far, or the one `u` brings, measures one tenant only (outlived_bounds.h).
        if (!start && shared_space &&
            bound_of_one_tenant(m, outputs, m.pointer_uses[current->uses.front()], *previous, u,
                                current->known_bytes() > 0))
            current->bound_of_one_tenant = true;
        add(m, *current, u, index);
        previous = &u;
    }
}

// Whether a use of `instance` is a library call's workspace: scratch the call overwrites whole,
// which no tensor in use can contain (a GEMM's lower bound on the tensor before it, taken as its
// size, reached into the space the allocator had freed and given to the next call's workspace).
bool holds_workspace(const TraceModel& m, const Instance& instance) {
    return std::any_of(instance.uses.begin(), instance.uses.end(),
                       [&](size_t index) { return workspace_use(m, m.pointer_uses[index]); });
}

// Pointers inside a tensor of known size while it is in use (a time step's slice of a sequence, a
// head of a batched GEMM operand) are that tensor, not tensors of their own; a call's workspace
// never is (holds_workspace). After its last use the
// allocator may already have handed the space to a smaller tensor, so a pointer inside it then is
// not absorbed: in use means between its first and last use at its own start (growing as it
// absorbs).
// A tensor a copy or set filled whole, and that the same copy refills later (a batch buffer planned
// once), holds its contents until that refill: pointers into it until then that only read (one
// image of the batch) are slices of it. One that writes there after the tensor's own last use is a
// tensor the allocator placed in the freed space (a gradient zeroed at the same address by a set of
// the same size every step, held that long, took in the next step's activations placed inside it).
bool reads_only(const TraceModel& m, const Instance& instance) {
    return std::all_of(instance.uses.begin(), instance.uses.end(),
                       [&](size_t index) { return m.pointer_uses[index].access == Access::Read; });
}

// The work items that read and wrote the bytes at `instance`'s start in place, as one call with
// recorded extents (an all-reduce of a bucket: send and receive buffer one), each with the bytes it
// both read and wrote from there. An instance's own uses are in derive_subranges' order (by work, a
// work item's read before its write), so such a call's two uses are neighbours: one pass.
struct InPlaceUse {
    uint32_t work = 0;
    int64_t bytes = 0;
};

bool exact_use_at(const PointerUse& u, uint64_t offset, Access access) {
    return u.offset == offset && u.access == access && u.exact && u.bytes > 0;
}

std::vector<InPlaceUse> in_place_uses(const TraceModel& m, const Instance& instance) {
    std::vector<InPlaceUse> found;
    for (size_t k = 0; k + 1 < instance.uses.size(); ++k) {
        const PointerUse& read = m.pointer_uses[instance.uses[k]];
        const PointerUse& write = m.pointer_uses[instance.uses[k + 1]];
        if (write.work == read.work && m.work[read.work].library_call != kNone &&
            exact_use_at(read, instance.offset, Access::Read) && exact_use_at(write, instance.offset, Access::Write))
            found.push_back({read.work, std::min(read.bytes, write.bytes)});
    }
    return found;
}

// Whether `inner` was in use across a call that read and wrote its bytes in place from `outer`'s start
// (used before the call and after it): while it held its value, the call summed or rewrote those
// bytes as part of the tensor at outer's start, so it is that tensor, whichever of its uses fall
// inside outer's other ones. (DDP's first step all-reduces one bucket of the whole model: the slots
// are filled from its end, the one at its start last, and copied back from its start first, so each
// other slot is used only before and after the life of the piece at the start.)
bool live_across_in_place(const Instance& inner, const Instance& outer, const std::vector<InPlaceUse>& calls) {
    return std::any_of(calls.begin(), calls.end(), [&](const InPlaceUse& call) {
        return inner.first < call.work && call.work < inner.last && inner.offset < outer.offset + uint64_t(call.bytes);
    });
}

// Where an inner instance absorbed for its uses inside `outer`'s life stops being that tensor: at its
// first use after that life that does not read (index into inner.uses; inner.uses.size(): none).
// Past the outer tensor's last use at its own start the allocator may have handed its bytes on, and
// work that writes there then carries nothing of it: a new tensor (the update's temporaries that a
// caching allocator puts in the space of a gradient freed in backward). A read there may still be
// of the outer tensor's value (a slice read late) and stays with it.
size_t first_write_after(const TraceModel& m, const Instance& inner, const Instance& outer) {
    for (size_t k = 0; k < inner.uses.size(); ++k) {
        const PointerUse& u = m.pointer_uses[inner.uses[k]];
        if (u.work > outer.last && u.access != Access::Read) return k;
    }
    return inner.uses.size();
}

// The first work of the next tensor at instances[i]'s start (UINT32_MAX: none): once another tensor
// holds a block's start the one before was freed, and no later pointer inside is its (change 45).
uint32_t next_tenant_at_start(const std::vector<Instance>& instances, size_t i) {
    const bool next = i + 1 < instances.size() && instances[i + 1].offset == instances[i].offset;
    return next && !instances[i + 1].uses.empty() ? instances[i + 1].first : UINT32_MAX;
}

// Index into inner.uses of its first use by work `work` or later (inner.uses.size(): none).
size_t first_use_from(const TraceModel& m, const Instance& inner, uint32_t work) {
    for (size_t k = 0; k < inner.uses.size(); ++k)
        if (m.pointer_uses[inner.uses[k]].work >= work) return k;
    return inner.uses.size();
}

// The uses of `inner` from index `from` on, as an instance of their own at inner's offset.
Instance rest_of(const TraceModel& m, const Instance& inner, size_t from) {
    Instance rest;
    rest.offset = inner.offset;
    for (size_t k = from; k < inner.uses.size(); ++k) add(m, rest, m.pointer_uses[inner.uses[k]], inner.uses[k]);
    return rest;
}

// The first `count` uses of `inner`, as an instance of their own at inner's offset.
Instance uses_before(const TraceModel& m, const Instance& inner, size_t count) {
    Instance head;
    head.offset = inner.offset;
    for (size_t k = 0; k < count && k < inner.uses.size(); ++k)
        add(m, head, m.pointer_uses[inner.uses[k]], inner.uses[k]);
    return head;
}

// Where `inner` shows that `outer`'s value was gone: inner begins with a library call overwriting
// bytes inside outer's size evidence, while outer is in use, with an output (or a workspace, scratch
// the call overwrites whole) that runs past outer's end. No slice of outer reaches past it, so the
// call did not write into outer while it held that value: the bytes had been handed on (a caching
// allocator gives a freed GEMM output's space to a smaller tensor and, past it, to the next GEMM's
// output). The work from which outer's uses are another tensor: the call's (a new value written at
// outer's start after the sized one was read already began an instance of its own: split_address,
// rewrites_read_value). UINT32_MAX: no sign.
uint32_t gone_before(const TraceModel& m, const Instance& inner, const Instance& outer) {
    if (inner.empty || inner.uses.empty() || inner.offset <= outer.offset || !used_within(m, inner, outer))
        return UINT32_MAX;
    const PointerUse& first = m.pointer_uses[inner.uses.front()];
    if (first.offset != inner.offset || !(library_overwrite(m, first) || workspace_use(m, first))) return UINT32_MAX;
    const uint64_t end = outer.offset + uint64_t(outer.known_bytes());
    if (first.bytes <= 0 || inner.offset + uint64_t(first.bytes) <= end) return UINT32_MAX;
    return inner.first;
}

// Cuts each sized instance where a later instance inside its size shows its value gone (gone_before):
// its uses from then on are a new tensor at the address, whose extent its own evidence sets. Without
// the cut, the one instance would either absorb the later tensor or, capped by it, lose the earlier
// value's bytes. Instances stay ordered by offset, then time.
void cut_rewritten(const TraceModel& m, std::vector<Instance>& instances) {
    for (size_t i = 0; i < instances.size(); ++i) {
        const Instance& outer = instances[i];
        if (outer.empty || outer.known_bytes() <= 0) continue;
        const uint64_t end = outer.offset + uint64_t(outer.known_bytes());
        uint32_t cut = UINT32_MAX;
        for (size_t j = i + 1; j < instances.size() && instances[j].offset < end && cut == UINT32_MAX; ++j)
            cut = gone_before(m, instances[j], outer);
        size_t from = 0;
        while (from < outer.uses.size() && m.pointer_uses[outer.uses[from]].work < cut) ++from;
        if (from == 0 || from == outer.uses.size()) continue;
        Instance late = rest_of(m, outer, from);
        instances[i] = uses_before(m, outer, from);
        instances.insert(instances.begin() + std::ptrdiff_t(i) + 1, std::move(late));
    }
}

// `segment_bytes`: the allocation's size. A tensor written whole across all of it (an arena zeroed
// at once) is the allocation itself, whose parts other work goes on using after its start's last use
// (an update going tensor by tensor through a gradient arena): first_write_after does not apply.
void absorb_interior(const TraceModel& m, std::vector<Instance>& instances, int64_t segment_bytes) {
    for (size_t i = 0; i < instances.size(); ++i) {
        if (instances[i].empty || instances[i].known_bytes() <= 0) continue;
        uint64_t end = instances[i].offset + uint64_t(instances[i].known_bytes());
        const Instance own = instances[i];
        const std::vector<InPlaceUse> in_place = in_place_uses(m, own);
        Instance held = own;
        if (own.exact_bytes > 0 && i + 1 < instances.size() && instances[i + 1].offset == own.offset &&
            instances[i + 1].exact_bytes == own.exact_bytes && instances[i + 1].first > 0)
            held.last = std::max(own.last, instances[i + 1].first - 1);
        const uint32_t next_tenant = next_tenant_at_start(instances, i);
        for (size_t j = i + 1; j < instances.size() && instances[j].offset < end; ++j) {
            Instance& inner = instances[j];
            if (inner.empty || inner.offset == own.offset || holds_workspace(m, inner)) continue;
            const bool across_in_place = live_across_in_place(inner, own, in_place);
            const bool within = used_within(m, inner, own);
            if (!within && !(used_within(m, inner, held) && reads_only(m, inner)) && !across_in_place) continue;
            // (A slot of an in-place call's buffer is that buffer before and after the call.)
            const bool whole = own.exact_bytes >= segment_bytes;
            // Not inner's uses before own's life: the space held another tensor then (a caching allocator
            // gives an earlier micro-batch's space to a later, larger tensor; change 48). Nor those once
            // the next tenant holds own's start (change 45).
            const size_t from = across_in_place || whole || !within ? 0 : first_use_from(m, inner, own.first);
            const size_t keep =
                across_in_place || whole
                    ? inner.uses.size()
                    : std::max(from, std::min(first_write_after(m, inner, own), first_use_from(m, inner, next_tenant)));
            for (size_t k = from; k < keep; ++k) {
                const PointerUse& u = m.pointer_uses[inner.uses[k]];
                instances[i].uses.push_back(inner.uses[k]);
                instances[i].first = std::min(instances[i].first, u.work);
                instances[i].last = std::max(instances[i].last, u.work);
            }
            const bool all_kept = keep == inner.uses.size();
            if (from == 0 && all_kept) {
                inner.uses.clear();
                inner.empty = true;
                continue;
            }
            // What stays of inner: the uses before `from` and those from `keep` on, as two tensors.
            Instance rest = rest_of(m, inner, keep);
            if (from == 0)
                inner = std::move(rest);
            else
                inner = uses_before(m, inner, from);
            if (from > 0 && !all_kept) instances.insert(instances.begin() + std::ptrdiff_t(++j), std::move(rest));
        }
    }
}

// Only ever used from its start, and no evidence of anything smaller: one tensor (a library's own
// workspace, a buffer allocated by itself in a pooled program), tagged as a whole as before. A pool
// segment holding a single tensor at a time still shows a smaller size from copies, sets or GEMMs.
bool whole_allocation(const std::vector<Instance>& instances, int64_t bytes) {
    for (const Instance& instance : instances) {
        if (instance.empty) continue;
        if (instance.offset != 0 || (instance.known_bytes() > 0 && instance.known_bytes() < bytes)) return false;
    }
    return true;
}

}  // namespace

SubRangeSet derive_subranges(const TraceModel& m, const IterationSet& its) {
    SubRangeSet set;
    set.owner.assign(m.pointer_uses.size(), kNone);
    if (!m.pooled || m.pointer_uses.empty()) return set;
    const WorkSteps steps = work_steps(m, its);
    // Uses that name no allocation, no work item, or a point outside their allocation are dropped.
    std::vector<size_t> order;
    for (size_t i = 0; i < m.pointer_uses.size(); ++i) {
        const PointerUse& u = m.pointer_uses[i];
        if (u.allocation >= 0 && size_t(u.allocation) < m.allocations.size() && u.work < m.work.size() &&
            u.offset < uint64_t(std::max<int64_t>(m.allocations[size_t(u.allocation)].bytes, 1)))
            order.push_back(i);
    }
    // One work item's uses of one address: its reads first. An in-place call (an all-reduce of a
    // bucket: send and receive buffer one) reads what it then writes; taken write first, its write
    // would replace the bucket's contents and cut the tensor there. (The order of such ties was
    // left to the sort before: DDP's buckets were cut at the all-reduce in some steps and not in
    // others.)
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const PointerUse& x = m.pointer_uses[a];
        const PointerUse& y = m.pointer_uses[b];
        if (x.allocation != y.allocation) return x.allocation < y.allocation;
        if (x.offset != y.offset) return x.offset < y.offset;
        if (x.work != y.work) return x.work < y.work;
        if ((x.access == Access::Read) != (y.access == Access::Read)) return x.access == Access::Read;
        return a < b;
    });
    const std::vector<bool> returned = returned_values(m, order, steps.step);
    set.output_words = output_slots(m);
    const std::vector<bool>& outputs = set.output_words;
    const CarriedReads carried = carried_reads(m, outputs, steps.step);
    const std::vector<bool> slices = slices_of_new_values(m, order, outputs);
    for (size_t begin = 0; begin < order.size();) {
        int32_t segment = m.pointer_uses[order[begin]].allocation;
        size_t end = begin;
        while (end < order.size() && m.pointer_uses[order[end]].allocation == segment) ++end;
        std::vector<Instance> instances;
        bool several_starts = false;
        for (size_t at = begin + 1; at < end && !several_starts; ++at)
            several_starts = m.pointer_uses[order[at]].offset != m.pointer_uses[order[begin]].offset;
        const std::vector<WorkspaceSpan> spans = workspace_spans(
            m, std::vector<size_t>(order.begin() + std::ptrdiff_t(begin), order.begin() + std::ptrdiff_t(end)));
        for (size_t at = begin; at < end;) {
            uint64_t offset = m.pointer_uses[order[at]].offset;
            std::vector<size_t> uses;
            for (; at < end && m.pointer_uses[order[at]].offset == offset; ++at) uses.push_back(order[at]);
            split_address(m, steps, returned, outputs, carried, slices, spans, uses, several_starts, instances);
        }
        cut_rewritten(m, instances);
        absorb_interior(m, instances, m.allocations[size_t(segment)].bytes);
        if (whole_allocation(instances, m.allocations[size_t(segment)].bytes)) {
            begin = end;
            continue;
        }
        for (const Instance& instance : instances) {
            if (instance.empty) continue;
            auto index = static_cast<int32_t>(set.ranges.size());
            set.ranges.push_back({segment, instance.offset, 0, instance.first, instance.last, instance.known_bytes(),
                                  instance.exact_bytes > 0, false, 0, instance.after_rewrite});
            set.ranges.back().bound_of_one_tenant = instance.bound_of_one_tenant;
            for (size_t use : instance.uses) set.owner[use] = index;
        }
        begin = end;
    }
    cap_rewritten_tenants(set);
    record_reach(m, set);
    assign_extents(m, set);
    return set;
}

namespace {

// merge_subranges without moving the uses: whether `second`'s extent and life went into `first`.
bool merge_fields(SubRangeSet& set, size_t first, size_t second) {
    if (first == second || first >= set.ranges.size() || second >= set.ranges.size()) return false;
    SubRange& a = set.ranges[first];
    SubRange& b = set.ranges[second];
    if (a.segment != b.segment || a.merged || b.merged) return false;
    a.first_work = std::min(a.first_work, b.first_work);
    a.last_work = std::max(a.last_work, b.last_work);
    a.known_bytes = std::max(a.known_bytes, b.known_bytes);
    a.reach_bytes = std::max(a.reach_bytes, b.reach_bytes);
    a.exact = a.exact && b.exact;
    b.merged = true;
    b.bytes = 0;
    return true;
}

}  // namespace

void merge_subranges(SubRangeSet& set, size_t first, size_t second) {
    if (!merge_fields(set, first, second)) return;
    for (int32_t& owner : set.owner)
        if (owner == static_cast<int32_t>(second)) owner = static_cast<int32_t>(first);
}

size_t merge_into_previous(SubRangeSet& set, const std::vector<bool>& join) {
    std::vector<int32_t> root(set.ranges.size());
    std::vector<bool> joined(set.ranges.size(), false);
    size_t count = 0;
    for (size_t j = std::min(join.size(), set.ranges.size()); j-- > 1;)  // last first: chains fold
        if (join[j] && merge_fields(set, j - 1, j)) joined[j] = true, ++count;
    for (size_t j = 0; j < root.size(); ++j) root[j] = joined[j] ? root[j - 1] : static_cast<int32_t>(j);
    if (count > 0)
        for (int32_t& owner : set.owner)
            if (owner >= 0 && size_t(owner) < root.size()) owner = root[size_t(owner)];
    return count;
}

bool split_subrange(const TraceModel& m, SubRangeSet& set, size_t index, uint32_t from_work) {
    if (index >= set.ranges.size() || set.ranges[index].merged) return false;
    const auto self = static_cast<int32_t>(index);
    size_t before = 0, after = 0;
    for (size_t u = 0; u < set.owner.size(); ++u)
        if (set.owner[u] == self) ++(m.pointer_uses[u].work < from_work ? before : after);
    if (before == 0 || after == 0) return false;
    // Each part as derive_subranges makes one: size evidence from the uses at its own start (an
    // interior pointer's size is a slice's), the largest exact size, else the largest lower bound.
    Instance parts[2];
    int64_t reach_bytes[2] = {0, 0};  // each part's own floor (record_reach), not the whole's
    for (size_t u = 0; u < set.owner.size(); ++u) {
        if (set.owner[u] > self) ++set.owner[u];
        if (set.owner[u] != self) continue;
        const PointerUse& use = m.pointer_uses[u];
        const bool late = use.work >= from_work;
        Instance& part = parts[late ? 1 : 0];
        if (part.uses.empty()) part.first = part.last = use.work;
        if (use.offset == set.ranges[index].offset) {
            add(m, part, use, u);
        } else {
            reach_bytes[late ? 1 : 0] =
                std::max<int64_t>(reach_bytes[late ? 1 : 0], int64_t(use.offset - set.ranges[index].offset + 1));
            part.uses.push_back(u);
            part.first = std::min(part.first, use.work);
            part.last = std::max(part.last, use.work);
        }
        if (late) set.owner[u] = self + 1;
    }
    SubRange head = set.ranges[index];
    SubRange tail = head;
    tail.after_rewrite = false;
    head.reach_bytes = reach_bytes[0];
    tail.reach_bytes = reach_bytes[1];
    for (auto [range, part] : {std::pair{&head, &parts[0]}, std::pair{&tail, &parts[1]}}) {
        range->first_work = part->first;
        range->last_work = part->last;
        range->known_bytes = part->known_bytes();
        range->exact = part->exact_bytes > 0;
        // A part without size evidence of its own is no larger than the piece it was cut from in
        // time: without this bound it would grow to the next tensor in use, over space the piece
        // never covered.
        if (range->known_bytes <= 0 && set.ranges[index].bytes > 0) range->known_bytes = set.ranges[index].bytes;
    }
    set.ranges[index] = head;
    set.ranges.insert(set.ranges.begin() + std::ptrdiff_t(index) + 1, tail);
    return true;
}

size_t peel_interior(const TraceModel& m, SubRangeSet& set, size_t index, const std::vector<bool>& stays) {
    if (index >= set.ranges.size() || set.ranges[index].merged) return SIZE_MAX;
    const SubRange& whole = set.ranges[index];
    const auto self = static_cast<int32_t>(index);
    uint64_t from = UINT64_MAX;
    auto peels = [&](size_t u) {
        const PointerUse& use = m.pointer_uses[u];
        return set.owner[u] == self && use.offset > whole.offset && !(use.work < stays.size() && stays[use.work]);
    };
    for (size_t u = 0; u < set.owner.size(); ++u)
        if (peels(u)) from = std::min(from, m.pointer_uses[u].offset);
    if (from == UINT64_MAX) return SIZE_MAX;
    // The peeled piece as derive_subranges makes one: size evidence from the uses at its start.
    Instance kept, peeled;
    int64_t peeled_reach = 0;
    int64_t kept_reach = 0;
    std::vector<bool> moved(set.owner.size(), false);
    for (size_t u = 0; u < set.owner.size(); ++u) {
        if (set.owner[u] != self) continue;
        const PointerUse& use = m.pointer_uses[u];
        moved[u] = use.offset >= from && peels(u);
        Instance& part = moved[u] ? peeled : kept;
        const uint64_t start = moved[u] ? from : whole.offset;
        if (part.uses.empty()) part.first = part.last = use.work;
        if (use.offset == start) {
            add(m, part, use, u);
            continue;
        }
        part.uses.push_back(u);
        part.first = std::min(part.first, use.work);
        part.last = std::max(part.last, use.work);
        int64_t& reach = moved[u] ? peeled_reach : kept_reach;
        reach = std::max<int64_t>(reach, int64_t(use.offset - start + 1));
    }
    SubRange head = whole, tail = whole;
    head.first_work = kept.first;
    head.last_work = kept.last;
    head.reach_bytes = kept_reach;
    tail.offset = from;
    tail.after_rewrite = false;
    tail.first_work = peeled.first;
    tail.last_work = peeled.last;
    tail.known_bytes = peeled.known_bytes();
    tail.exact = peeled.exact_bytes > 0;
    tail.reach_bytes = peeled_reach;
    set.ranges[index] = head;
    // Sorted by segment, then offset, then time (next_live_start and with_subranges scan in order).
    size_t at = index + 1;
    while (at < set.ranges.size() && set.ranges[at].segment == tail.segment &&
           (set.ranges[at].offset < tail.offset ||
            (set.ranges[at].offset == tail.offset && set.ranges[at].first_work <= tail.first_work)))
        ++at;
    for (int32_t& owner : set.owner)
        if (owner >= int32_t(at)) ++owner;
    for (size_t u = 0; u < set.owner.size(); ++u)
        if (moved[u]) set.owner[u] = int32_t(at);
    set.ranges.insert(set.ranges.begin() + std::ptrdiff_t(at), tail);
    return at;
}

namespace {

// The model with each sub-range of `set` as an allocation of its own: which model allocation each
// sub-range became, and the pointer counts that tell how far a use reaches.
struct SubRangeModel {
    const TraceModel& m;
    const SubRangeSet& set;
    std::vector<int32_t>& virtual_index;  // per sub-range: its allocation in v, kNone when it has none
    TraceModel v = {};
    // Sub-ranges of each segment, [first, end) of set.ranges (sorted by segment, then offset).
    std::vector<std::pair<size_t, size_t>> of_segment = {};
    std::unordered_map<uint64_t, uint32_t> pointers = {};  // per (work, allocation): pointers into it
    std::unordered_map<uint32_t, int> starts_only = {};    // per work item: segment starts, or -1 when it points inside
};

// Adds an allocation per sub-range with work in the model's range; returns the segments replaced.
std::vector<bool> add_subrange_allocations(SubRangeModel& s) {
    const TraceModel& m = s.m;
    s.virtual_index.assign(s.set.ranges.size(), kNone);
    std::vector<bool> replaced(m.allocations.size(), false);
    for (size_t i = 0; i < s.set.ranges.size(); ++i) {
        const SubRange& r = s.set.ranges[i];
        if (r.bytes <= 0 || r.first_work >= m.work.size() || r.last_work >= m.work.size()) continue;
        const Allocation& segment = m.allocations[size_t(r.segment)];
        Allocation a;
        a.id = -1 - static_cast<int64_t>(i);
        a.process = segment.process;
        a.address = segment.address + r.offset;
        a.bytes = r.bytes;
        a.alloc_ns = m.work[r.first_work].launch_ns;
        a.free_ns = std::max(m.work[r.last_work].launch_ns, a.alloc_ns) + 1;
        a.stack = segment.stack;
        a.distinct_offsets = 1;
        s.virtual_index[i] = static_cast<int32_t>(s.v.allocations.size());
        s.v.allocations.push_back(std::move(a));
        replaced[size_t(r.segment)] = true;
    }
    return replaced;
}

void add_touch(WorkItem& w, int32_t target, Access access) {
    auto same =
        std::find_if(w.touches.begin(), w.touches.end(), [&](const Touch& t) { return t.allocation == target; });
    if (same == w.touches.end())
        w.touches.push_back({target, access});
    else if (access == Access::Write || (access == Access::Unknown && same->access == Access::Read))
        same->access = access;
}

uint64_t pointer_key(const PointerUse& u) {
    return (uint64_t(u.work) << 24) ^ uint64_t(uint32_t(u.allocation));
}

// How many pointers each work item has into each segment: a kernel whose only pointer into an
// arena is its start may address the whole arena (an update over all parameters at once).
// Such a kernel (a fused update) points at the starts of several arenas and inside none: a
// kernel with a pointer inside a segment, or at a single segment's start, means one tensor.
void count_pointers(SubRangeModel& s) {
    s.of_segment.assign(s.m.allocations.size(), {0, 0});
    for (size_t i = 0; i < s.set.ranges.size();) {
        size_t j = i;
        while (j < s.set.ranges.size() && s.set.ranges[j].segment == s.set.ranges[i].segment) ++j;
        s.of_segment[size_t(s.set.ranges[i].segment)] = {i, j};
        i = j;
    }
    for (const PointerUse& use : s.m.pointer_uses) {
        ++s.pointers[pointer_key(use)];
        // A use of an allocation the model does not hold (a malformed trace) has no sub-ranges.
        const bool known = use.allocation >= 0 && size_t(use.allocation) < s.of_segment.size();
        bool split = known && s.of_segment[size_t(use.allocation)].second > 0;
        int& n = s.starts_only[use.work];
        if (use.offset != 0 && split) n = -1;
        else if (use.offset == 0 && n >= 0) ++n;
    }
}

// A use that covers more than its own tensor (`owner`) reaches the tensors inside that extent that
// are in use at the time: a copy or set of a known size spanning several tensors, or a plain
// kernel's only pointer into the segment, at its start, of unknown extent.
void touch_covered_subranges(SubRangeModel& s, const PointerUse& use, int32_t owner, WorkItem& w) {
    uint64_t extent = 0;
    if (use.exact && use.bytes > 0)
        extent = uint64_t(use.bytes);
    else if (w.kind == WorkItem::Kind::Kernel && w.library_call == kNone && use.offset == 0 && use.bytes == 0 &&
             s.pointers[pointer_key(use)] == 1 && s.starts_only[use.work] >= 2)
        extent = uint64_t(s.m.allocations[size_t(use.allocation)].bytes);
    if (extent <= uint64_t(std::max<int64_t>(s.set.ranges[size_t(owner)].bytes, 0))) return;
    auto [first, end] = s.of_segment[size_t(use.allocation)];
    for (size_t r = first; r < end; ++r) {
        const SubRange& other = s.set.ranges[r];
        if (other.offset >= use.offset + extent) break;
        if (int32_t(r) == owner || other.offset < use.offset || s.virtual_index[r] == kNone ||
            other.first_work > use.work || other.last_work < use.work)
            continue;
        add_touch(w, s.virtual_index[r], use.access);
    }
}

// The library's roles (GEMM operand, workspace) move from the segment to the sub-range `target`.
void move_library_roles(SubRangeModel& s, const PointerUse& use, int32_t target, int32_t library_call) {
    LibraryCall& call = s.v.library_calls[size_t(library_call)];
    if (use.operand_of_call.a) call.a = target;
    if (use.operand_of_call.b) call.b = target;
    if (use.operand_of_call.c) call.c = target;
    if (use.operand_of_call.workspace) call.workspace = target;
}

}  // namespace

TraceModel with_subranges(const TraceModel& m, const SubRangeSet& set, std::vector<int32_t>& virtual_index) {
    SubRangeModel s{m, set, virtual_index};
    s.v.allocations = m.allocations;
    s.v.work = m.work;
    s.v.library_calls = m.library_calls;
    s.v.ranges = m.ranges;
    s.v.has_argument_info = m.has_argument_info;
    s.v.pooled = m.pooled;
    const std::vector<bool> replaced = add_subrange_allocations(s);
    for (WorkItem& w : s.v.work) w.touches.erase_if([&](const Touch& t) { return replaced[size_t(t.allocation)]; });
    count_pointers(s);
    for (size_t u = 0; u < m.pointer_uses.size(); ++u) {
        const PointerUse& use = m.pointer_uses[u];
        int32_t owner = set.owner[u];
        if (owner == kNone || virtual_index[size_t(owner)] == kNone) continue;
        int32_t target = virtual_index[size_t(owner)];
        WorkItem& w = s.v.work[use.work];
        const bool known =
            std::any_of(w.touches.begin(), w.touches.end(), [&](const Touch& t) { return t.allocation == target; });
        add_touch(w, target, use.access);
        for (Touch& t : w.touches)  // Touch::inside: no pointer of this work at the tensor's start
            if (t.allocation == target)
                t.inside = (!known || t.inside) && use.offset > set.ranges[size_t(owner)].offset;
        touch_covered_subranges(s, use, owner, w);
        if (w.library_call != kNone) move_library_roles(s, use, target, w.library_call);
    }
    mark_input_word_writes(m, set, virtual_index, s.v);
    mark_reads_beside_output(m, set, virtual_index, s.v);
    return std::move(s.v);
}

}  // namespace tbdprof::tagger
