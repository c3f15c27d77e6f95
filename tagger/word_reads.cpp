#include "word_reads.h"

#include "carried_reads.h"

#include <unordered_map>
#include <unordered_set>

namespace tbdprof::tagger {

namespace {

// Per allocation: the first work item, in launch order, that touched it at all. A copy, a set or a
// library call that came first gave it a value, which a kernel's word may then read.
std::vector<uint32_t> first_touches(const TraceModel& m) {
    std::vector<uint32_t> first(m.allocations.size(), UINT32_MAX);
    for (size_t w = m.work.size(); w-- > 0;)
        for (const Touch& t : m.work[w].touches)
            if (t.allocation >= 0 && size_t(t.allocation) < first.size()) first[size_t(t.allocation)] = uint32_t(w);
    return first;
}

// Whether `u` is a plain kernel's word that points into an allocation nothing touched before it.
bool starts_allocation(const TraceModel& m, const std::vector<uint32_t>& first, const PointerUse& u) {
    if (u.work >= m.work.size() || u.slot >= m.kernel_slots || u.allocation < 0) return false;
    const WorkItem& w = m.work[u.work];
    return w.kind == WorkItem::Kind::Kernel && w.library_call == kNone && first[size_t(u.allocation)] == u.work;
}

}  // namespace

std::vector<bool> first_use_output_words(const TraceModel& m) {
    const std::vector<uint32_t> first = first_touches(m);
    std::vector<bool> outputs(m.kernel_slots, false);
    for (const PointerUse& u : m.pointer_uses)
        if (starts_allocation(m, first, u)) outputs[u.slot] = true;
    return outputs;
}

void AggregateWords::add(const trace::KernelEdgeRow& row, uint32_t slot) {
    if (row.kernel != kernel_ || row.param != param_) flush();
    kernel_ = row.kernel;
    param_ = row.param;
    group_.push_back(slot);
    if (row.param_word != 0) inside_.push_back(slot);
}

void AggregateWords::flush() {
    if (group_.size() > 1) inside_.insert(inside_.end(), group_.begin(), group_.end());
    group_.clear();
}

std::vector<bool> AggregateWords::finish(size_t slots) {
    flush();
    std::vector<bool> aggregate(slots, false);
    for (uint32_t slot : inside_)
        if (slot < slots) aggregate[slot] = true;
    return aggregate;
}

void mark_unpooled_reads_beside_output(TraceModel& m, const std::vector<bool>& aggregate) {
    if (m.pooled || m.pointer_uses.empty()) return;
    const std::vector<bool> outputs = first_use_output_words(m);
    std::vector<bool> writers = output_word_writers(m, outputs);
    // Only a function that fills a new allocation in every launch converts: its words that never start
    // a value are its sources. An update in place (a weight and its momentum in one struct) fills the
    // momentum new in its first launch only, and writes the weight through a word like a source's.
    const std::vector<uint32_t> first = first_touches(m);
    std::vector<bool> fills_new(m.work.size(), false);
    for (const PointerUse& u : m.pointer_uses)
        if (starts_allocation(m, first, u)) fills_new[u.work] = true;
    std::unordered_map<int32_t, bool> always_fills_new;  // per function of a plain kernel
    for (size_t w = 0; w < m.work.size(); ++w) {
        const WorkItem& item = m.work[w];
        if (item.kind != WorkItem::Kind::Kernel || item.library_call != kNone) continue;
        auto [at, added] = always_fills_new.try_emplace(item.function, true);
        at->second = at->second && fills_new[w];
    }
    for (size_t w = 0; w < writers.size(); ++w) writers[w] = writers[w] && always_fills_new[m.work[w].function];
    // Per (work item, allocation): a use that reads beside an output, and any other use.
    auto key = [](uint32_t work, int32_t target) { return (uint64_t(work) << 32) | uint32_t(target); };
    std::unordered_set<uint64_t> reading, other;
    for (const PointerUse& u : m.pointer_uses) {
        if (u.allocation < 0) continue;
        const bool in_aggregate = u.slot < aggregate.size() && aggregate[u.slot];
        (in_aggregate && reads_beside_output(m, outputs, writers, u) ? reading : other)
            .insert(key(u.work, u.allocation));
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
