#include "output_slots.h"

#include "dataflow.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace tbdprof::tagger {
namespace {

// A plain kernel's pointer in one word of its parameters (not a library call's, not in place). A use
// of work the model does not hold (a damaged trace; derive_subranges drops it later) is none.
bool one_word_of_plain_kernel(const TraceModel& m, const PointerUse& u) {
    if (u.work >= m.work.size()) return false;
    const WorkItem& w = m.work[u.work];
    return w.kind == WorkItem::Kind::Kernel && w.library_call == kNone && u.slot < m.kernel_slots;
}

// Whether a plain kernel held `u`'s pointer only in words that never start a value: one such word,
// or several (an in-place operand has its output word among them; stale copies of one address left
// in a struct's unused words do not). Unknown words (a damaged trace, a list not kept) are not.
bool only_input_words(const TraceModel& m, const std::vector<bool>& outputs, const PointerUse& u) {
    auto input = [&](uint32_t slot) { return slot < m.kernel_slots && slot < outputs.size() && !outputs[slot]; };
    if (u.work >= m.work.size()) return false;
    const WorkItem& w = m.work[u.work];
    if (w.kind != WorkItem::Kind::Kernel || w.library_call != kNone) return false;
    if (u.slot != kSeveralSlots) return input(u.slot);
    const auto& list = m.several_word_slots;
    if (u.several_at >= list.size() || list.size() - u.several_at - 1 < list[u.several_at]) return false;
    for (uint32_t k = 1; k <= list[u.several_at]; ++k)
        if (!input(list[u.several_at + k])) return false;
    return true;
}

}  // namespace

bool reads_value(const TraceModel& m, const std::vector<bool>& outputs, const PointerUse& u) {
    if (u.access == Access::Read) return true;
    return one_word_of_plain_kernel(m, u) && u.slot < outputs.size() && !outputs[u.slot];
}

bool rewrites_read_value(const TraceModel& m, const std::vector<bool>& outputs, const PointerUse& previous,
                         const PointerUse& u) {
    // (A pointer to const writes nothing, whatever its word's other launches show.)
    if (previous.work == u.work || u.access == Access::Read || !one_word_of_plain_kernel(m, u) ||
        u.slot >= outputs.size() || !outputs[u.slot])
        return false;
    return reads_value(m, outputs, previous);
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

void mark_input_word_writes(const TraceModel& m, const SubRangeSet& set, const std::vector<int32_t>& virtual_index,
                            TraceModel& v) {
    if (set.output_words.empty()) return;
    // Per (work item, tensor of v): a write through an input word, and one through any other word.
    auto key = [](uint32_t work, int32_t target) { return (uint64_t(work) << 32) | uint32_t(target); };
    std::unordered_set<uint64_t> input_word, other_word;
    for (size_t u = 0; u < m.pointer_uses.size() && u < set.owner.size(); ++u) {
        const PointerUse& use = m.pointer_uses[u];
        const int32_t owner = set.owner[u];
        if (owner == kNone || virtual_index[size_t(owner)] == kNone || use.access != Access::Write) continue;
        const bool input = only_input_words(m, set.output_words, use);
        (input ? input_word : other_word).insert(key(use.work, virtual_index[size_t(owner)]));
    }
    std::vector<uint8_t> writes(v.allocations.size(), 0);  // bit 0: through input words; bit 1: otherwise
    for (size_t w = 0; w < v.work.size(); ++w) {
        const WorkItem& item = v.work[w];
        if (item.kind != WorkItem::Kind::Kernel) continue;
        for (const Touch& t : item.touches) {
            const Use use = use_of(v, item, t);
            if (use != Use::Modify && use != Use::Overwrite) continue;
            // A touch no use of its own explains (a copy's extent over several tensors) is a write.
            const uint64_t k = key(uint32_t(w), t.allocation);
            const bool input = item.library_call == kNone && input_word.count(k) && !other_word.count(k);
            writes[size_t(t.allocation)] |= input ? 1 : 2;
        }
    }
    for (size_t a = 0; a < v.allocations.size(); ++a)
        v.allocations[a].written_only_through_input_words = writes[a] == 1;
}

}  // namespace tbdprof::tagger
