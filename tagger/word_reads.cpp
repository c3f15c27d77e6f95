#include "word_reads.h"

#include "carried_reads.h"

#include <unordered_set>

namespace tbdprof::tagger {

std::vector<bool> first_use_output_words(const TraceModel& m) {
    // Per allocation: the first work item, in launch order, that touched it at all. A copy, a set or
    // a library call that came first gave it a value, which a kernel's word may then read.
    std::vector<uint32_t> first(m.allocations.size(), UINT32_MAX);
    for (size_t w = m.work.size(); w-- > 0;)
        for (const Touch& t : m.work[w].touches)
            if (t.allocation >= 0 && size_t(t.allocation) < first.size()) first[size_t(t.allocation)] = uint32_t(w);
    std::vector<bool> outputs(m.kernel_slots, false);
    for (const PointerUse& u : m.pointer_uses) {
        if (u.work >= m.work.size() || u.slot >= m.kernel_slots || u.allocation < 0) continue;
        const WorkItem& w = m.work[u.work];
        if (w.kind == WorkItem::Kind::Kernel && w.library_call == kNone && first[size_t(u.allocation)] == u.work)
            outputs[u.slot] = true;
    }
    return outputs;
}

void mark_unpooled_reads_beside_output(TraceModel& m) {
    if (m.pooled || m.pointer_uses.empty()) return;
    const std::vector<bool> outputs = first_use_output_words(m);
    const std::vector<bool> writers = output_word_writers(m, outputs);
    // Per (work item, allocation): a use that reads beside an output, and any other use.
    auto key = [](uint32_t work, int32_t target) { return (uint64_t(work) << 32) | uint32_t(target); };
    std::unordered_set<uint64_t> reading, other;
    for (const PointerUse& u : m.pointer_uses) {
        if (u.allocation < 0) continue;
        (reads_beside_output(m, outputs, writers, u) ? reading : other).insert(key(u.work, u.allocation));
    }
    for (size_t w = 0; w < m.work.size(); ++w) {
        WorkItem& item = m.work[w];
        if (item.kind != WorkItem::Kind::Kernel || item.library_call != kNone) continue;
        for (Touch& t : item.touches) {
            const uint64_t k = key(uint32_t(w), t.allocation);
            t.reads_first = t.access == Access::Write && reading.count(k) && !other.count(k);
        }
    }
    // The model keeps pointer uses for pooled segments only (the sub-ranges' evidence).
    m.pointer_uses.clear();
    m.pointer_uses.shrink_to_fit();
    m.several_word_slots.clear();
    m.several_word_slots.shrink_to_fit();
}

}  // namespace tbdprof::tagger
