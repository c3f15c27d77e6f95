#include "slice_reads.h"

#include <algorithm>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

// A library call's read of an operand whose extent the trace recorded.
bool sized_call_read(const TraceModel& m, const PointerUse& u) {
    return m.work[u.work].library_call != kNone && u.access == Access::Read && u.exact && u.bytes > 0;
}

// Whether the use before `position` in `order` at the same address, by other work, is a plain
// kernel writing a new value of unknown size there (output_slots.h: a word that starts values).
bool just_written_by_kernel(const TraceModel& m, const std::vector<size_t>& order, const std::vector<bool>& outputs,
                            size_t position) {
    const PointerUse& u = m.pointer_uses[order[position]];
    for (size_t k = position; k-- > 0;) {
        const PointerUse& before = m.pointer_uses[order[k]];
        if (before.allocation != u.allocation || before.offset != u.offset) return false;
        if (before.work == u.work) continue;
        const WorkItem& w = m.work[before.work];
        return w.kind == WorkItem::Kind::Kernel && w.library_call == kNone && before.access == Access::Write &&
               before.bytes == 0 && before.slot < outputs.size() && outputs[before.slot];
    }
    return false;
}

}  // namespace

std::vector<bool> slices_of_new_values(const TraceModel& m, const std::vector<size_t>& order,
                                       const std::vector<bool>& outputs) {
    std::vector<bool> slice(m.pointer_uses.size(), false);
    // Per library call's work item: its sized reads, as positions in `order` (by allocation, offset).
    std::unordered_map<uint32_t, std::vector<size_t>> reads;
    for (size_t position = 0; position < order.size(); ++position)
        if (sized_call_read(m, m.pointer_uses[order[position]]))
            reads[m.pointer_uses[order[position]].work].push_back(position);
    for (auto& [work, positions] : reads) {
        if (positions.size() < 2) continue;
        std::sort(positions.begin(), positions.end());
        // Whether each operand so far holds part of a value just made below or at it (a new value
        // at its own start, or a slice of one).
        std::vector<bool> part_of_new(positions.size(), false);
        for (size_t k = 0; k < positions.size(); ++k) {
            const PointerUse& u = m.pointer_uses[order[positions[k]]];
            bool above_new = false;
            for (size_t j = 0; j < k && !above_new; ++j) {
                const PointerUse& below = m.pointer_uses[order[positions[j]]];
                above_new = part_of_new[j] && below.allocation == u.allocation &&
                            below.offset + uint64_t(below.bytes) == u.offset;
            }
            slice[order[positions[k]]] = above_new;
            part_of_new[k] = above_new || just_written_by_kernel(m, order, outputs, positions[k]);
        }
    }
    return slice;
}

}  // namespace tbdprof::tagger
