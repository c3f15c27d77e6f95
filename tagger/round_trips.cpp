#include "round_trips.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

struct Context {
    const TraceModel& m;
    const std::vector<size_t>& order;                         // valid pointer uses by allocation, offset, work
    const std::vector<int>& step;                             // per work item; -1 outside the steps
    std::unordered_map<uint32_t, size_t> copy_source = {};    // per device-to-device copy: its read use
    std::map<uint32_t, std::vector<size_t>> reductions = {};  // per in-place reduction's work: its uses

    const PointerUse& use_at(size_t position) const { return m.pointer_uses[order[position]]; }
};

bool same_address(const PointerUse& a, const PointerUse& b) {
    return a.allocation == b.allocation && a.offset == b.offset;
}

// An all-reduce (or another reduction across ranks) whose send and receive buffers are one: it sums
// what the buffer holds over the ranks and leaves the sum in place.
bool in_place_reduction(const TraceModel& m, uint32_t work) {
    const WorkItem& w = m.work[work];
    if (w.kind != WorkItem::Kind::Kernel || w.library_call == kNone) return false;
    const LibraryCall& call = m.library_calls[size_t(w.library_call)];
    return call.collective == Collective::Reduction && call.a == call.c && call.a != kNone;
}

Context context_of(const TraceModel& m, const std::vector<size_t>& order, const std::vector<int>& step) {
    Context c{m, order, step};
    for (size_t i : order) {
        const PointerUse& u = m.pointer_uses[i];
        if (m.work[u.work].kind == WorkItem::Kind::CopyDtoD && u.access == Access::Read)
            c.copy_source.emplace(u.work, i);
        else if (in_place_reduction(m, u.work))
            c.reductions[u.work].push_back(i);
    }
    return c;
}

// The position in `order` of the first use at `address`'s allocation and offset by work `work` or later.
size_t first_at(const Context& c, const PointerUse& address, uint32_t work) {
    const auto key = std::tuple{address.allocation, address.offset, work};
    auto it = std::lower_bound(c.order.begin(), c.order.end(), key, [&](size_t index, const auto& wanted) {
        const PointerUse& u = c.m.pointer_uses[index];
        return std::tuple{u.allocation, u.offset, u.work} < wanted;
    });
    return size_t(it - c.order.begin());
}

// Whether an in-place reduction launched after work `after` and before work `before` covered the
// `bytes` at `source`: it points into source's allocation at or before it, its extent (where
// recorded) reaching over them. A bucket is reduced from its start, its gradients lie inside.
bool reduced_between(const Context& c, const PointerUse& source, int64_t bytes, uint32_t after, uint32_t before) {
    for (auto it = c.reductions.upper_bound(after); it != c.reductions.end() && it->first < before; ++it)
        for (size_t index : it->second) {
            const PointerUse& u = c.m.pointer_uses[index];
            if (u.allocation == source.allocation && u.offset <= source.offset &&
                (u.bytes <= 0 || source.offset + uint64_t(bytes) <= u.offset + uint64_t(u.bytes)))
                return true;
        }
    return false;
}

// Whether work `fill` used the address `back` writes (it took the value there: a copy into the
// bucket, or a kernel scaling the gradient into it) and no other work wrote that address between
// `fill` and back's copy (reads may).
bool took_value(const Context& c, const PointerUse& back, uint32_t fill) {
    size_t at = first_at(c, back, fill);
    if (at == c.order.size() || !same_address(c.use_at(at), back) || c.use_at(at).work != fill) return false;
    for (; at < c.order.size() && same_address(c.use_at(at), back) && c.use_at(at).work < back.work; ++at)
        if (c.use_at(at).work != fill && c.use_at(at).access != Access::Read) return false;
    return true;
}

// Whether the copy write `back` brings its address's own value back (returned_values).
bool returns_own_value(const Context& c, const PointerUse& back) {
    if (back.access != Access::Write || !back.exact || back.bytes <= 0 ||
        c.m.work[back.work].kind != WorkItem::Kind::CopyDtoD)
        return false;
    auto found = c.copy_source.find(back.work);
    if (found == c.copy_source.end()) return false;
    const PointerUse& source = c.m.pointer_uses[found->second];
    if (same_address(source, back)) return false;
    // The source's last write before the copy, the reductions aside: what filled it.
    const size_t begin = first_at(c, source, 0);
    for (size_t at = first_at(c, source, back.work); at-- > begin;) {
        const PointerUse& u = c.use_at(at);
        if (c.step[u.work] != c.step[back.work]) return false;
        if (u.access == Access::Read || in_place_reduction(c.m, u.work)) continue;
        return reduced_between(c, source, back.bytes, u.work, back.work) && took_value(c, back, u.work);
    }
    return false;
}

}  // namespace

std::vector<bool> returned_values(const TraceModel& m, const std::vector<size_t>& order, const std::vector<int>& step) {
    std::vector<bool> returned(m.pointer_uses.size(), false);
    const Context c = context_of(m, order, step);
    if (c.reductions.empty()) return returned;  // nothing was summed across ranks
    for (size_t i : order) returned[i] = returns_own_value(c, m.pointer_uses[i]);
    return returned;
}

}  // namespace tbdprof::tagger
