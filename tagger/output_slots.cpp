#include "output_slots.h"

#include <algorithm>
#include <map>

namespace tbdprof::tagger {
namespace {

// A plain kernel's pointer in one word of its parameters (not a library call's, not in place). A use
// of work the model does not hold (a damaged trace; derive_subranges drops it later) is none.
bool one_word_of_plain_kernel(const TraceModel& m, const PointerUse& u) {
    if (u.work >= m.work.size()) return false;
    const WorkItem& w = m.work[u.work];
    return w.kind == WorkItem::Kind::Kernel && w.library_call == kNone && u.slot < m.kernel_slots;
}

}  // namespace

bool reads_value(const TraceModel& m, const std::vector<bool>& outputs, const PointerUse& u) {
    if (u.access == Access::Read) return true;
    return one_word_of_plain_kernel(m, u) && u.slot < outputs.size() && !outputs[u.slot];
}

std::vector<bool> output_slots(const TraceModel& m) {
    std::vector<bool> outputs(m.kernel_slots, false);
    // Per address (allocation, offset): the first work item that used it.
    std::map<std::pair<int32_t, uint64_t>, uint32_t> first;
    for (const PointerUse& u : m.pointer_uses) {
        auto [at, added] = first.try_emplace({u.allocation, u.offset}, u.work);
        if (!added) at->second = std::min(at->second, u.work);
    }
    for (const PointerUse& u : m.pointer_uses)
        if (one_word_of_plain_kernel(m, u) && first[{u.allocation, u.offset}] == u.work) outputs[u.slot] = true;
    return outputs;
}

std::vector<uint32_t> rewrite_cuts(const TraceModel& m, const TagResult& r, const std::vector<bool>& outputs,
                                   const std::vector<size_t>& uses) {
    if (uses.empty()) return {};
    uint64_t start = UINT64_MAX;
    for (size_t index : uses) start = std::min(start, m.pointer_uses[index].offset);
    std::vector<size_t> at_start;
    for (size_t index : uses)
        if (m.pointer_uses[index].offset == start) at_start.push_back(index);
    if (at_start.size() != uses.size()) return {};
    std::sort(at_start.begin(), at_start.end(), [&](size_t a, size_t b) {
        const PointerUse& x = m.pointer_uses[a];
        const PointerUse& y = m.pointer_uses[b];
        if (x.work != y.work) return x.work < y.work;
        return x.access == Access::Read && y.access != Access::Read;  // one work's reads first
    });
    std::vector<uint32_t> cuts;
    for (size_t k = 1; k < at_start.size(); ++k) {
        const PointerUse& before = m.pointer_uses[at_start[k - 1]];
        const PointerUse& u = m.pointer_uses[at_start[k]];
        if (before.work == u.work || !one_word_of_plain_kernel(m, u) || !outputs[u.slot] || r.optimizer_work[u.work])
            continue;
        if (reads_value(m, outputs, before)) cuts.push_back(u.work);
    }
    return cuts;
}

}  // namespace tbdprof::tagger
