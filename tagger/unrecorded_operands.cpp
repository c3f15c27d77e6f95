#include "unrecorded_operands.h"

#include <algorithm>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

// Per work item of a library call: the indices of its pointer uses (the call's operands).
std::unordered_map<uint32_t, std::vector<size_t>> uses_by_work(const TraceModel& m) {
    std::unordered_map<uint32_t, std::vector<size_t>> by_work;
    for (size_t i = 0; i < m.pointer_uses.size(); ++i) {
        const PointerUse& u = m.pointer_uses[i];
        if (u.work < m.work.size() && m.work[u.work].library_call != kNone) by_work[u.work].push_back(i);
    }
    return by_work;
}

// Whether the call's operands at this work item include an exact extent: only then do they say
// which bytes the call touches (a GEMM's operands are lower bounds, and its kernels' pointers into
// them, a split's partial sums, are no tensors of their own).
bool records_extents(const TraceModel& m, const std::vector<size_t>& uses) {
    return std::any_of(uses.begin(), uses.end(), [&](size_t i) { return m.pointer_uses[i].exact; });
}

// Whether `p` falls inside one of the call's operands (its start, or within a known extent).
bool inside_operand(const TraceModel& m, const std::vector<size_t>& uses, const LibraryKernelPointer& p) {
    return std::any_of(uses.begin(), uses.end(), [&](size_t i) {
        const PointerUse& u = m.pointer_uses[i];
        return u.allocation == p.allocation && p.offset >= u.offset &&
               p.offset < u.offset + uint64_t(std::max<int64_t>(u.bytes, 1));
    });
}

}  // namespace

void add_unrecorded_operands(TraceModel& m, const std::vector<LibraryKernelPointer>& pointers) {
    if (!m.pooled || pointers.empty()) return;
    const auto by_work = uses_by_work(m);
    std::vector<PointerUse> added;
    for (const LibraryKernelPointer& p : pointers) {
        // (A library's own allocation, its handle's workspace, holds no tensor of the program.)
        if (m.allocations[size_t(p.allocation)].made_by_library_handle) continue;
        const auto call = by_work.find(p.work);
        if (call == by_work.end() || !records_extents(m, call->second) || inside_operand(m, call->second, p)) continue;
        added.push_back({p.work, p.allocation, p.offset, 0, false, p.access});
    }
    m.pointer_uses.insert(m.pointer_uses.end(), added.begin(), added.end());
}

}  // namespace tbdprof::tagger
