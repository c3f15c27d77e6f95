#include "echoed_words.h"

#include <unordered_map>

namespace tbdprof::tagger {
namespace {

bool plain_kernel(const TraceModel& m, uint32_t work) {
    return work < m.work.size() && m.work[work].kind == WorkItem::Kind::Kernel && m.work[work].library_call == kNone;
}

// Whether use `u`'s list of words (several_word_slots) is whole: its count and every slot in range.
bool list_whole(const TraceModel& m, const PointerUse& u) {
    const auto& list = m.several_word_slots;
    return u.slot == kSeveralSlots && u.several_at < list.size() &&
           list.size() - u.several_at - 1 >= list[u.several_at];
}

// Per slot: whether its word held a pointer into a recorded allocation in every launch of its
// function. Counted from the uses: a word holds one pointer per launch, so one use lists it.
std::vector<bool> every_launch_slots(const TraceModel& m) {
    std::unordered_map<int32_t, uint32_t> launches;  // per function of a plain kernel
    for (size_t w = 0; w < m.work.size(); ++w)
        if (plain_kernel(m, uint32_t(w))) ++launches[m.work[w].function];
    std::vector<uint32_t> held(m.kernel_slots, 0);
    std::vector<int32_t> function(m.kernel_slots, kNone);
    auto count = [&](uint32_t slot, uint32_t work) {
        if (slot >= held.size()) return;
        ++held[slot];
        function[slot] = m.work[work].function;
    };
    for (const PointerUse& u : m.pointer_uses) {
        if (!plain_kernel(m, u.work)) continue;
        if (u.slot < m.kernel_slots) count(u.slot, u.work);
        if (!list_whole(m, u)) continue;
        for (uint32_t k = 1; k <= m.several_word_slots[u.several_at]; ++k)
            count(m.several_word_slots[u.several_at + k], u.work);
    }
    std::vector<bool> every(m.kernel_slots, false);
    for (size_t s = 0; s < every.size(); ++s) every[s] = held[s] > 0 && held[s] == launches[function[s]];
    return every;
}

}  // namespace

void drop_echoed_words(TraceModel& m) {
    if (!m.pooled || m.pointer_uses.empty()) return;
    const std::vector<bool> every = every_launch_slots(m);
    auto regular = [&](uint32_t slot) { return slot < every.size() && every[slot]; };
    for (PointerUse& u : m.pointer_uses) {
        if (!plain_kernel(m, u.work) || !list_whole(m, u)) continue;
        uint32_t* list = &m.several_word_slots[u.several_at];
        uint32_t kept = 0;
        for (uint32_t k = 1; k <= list[0]; ++k) kept += regular(list[k]) ? 1 : 0;
        if (kept == 0 || kept == list[0]) continue;  // no operand's word among them, or no echo
        // The list keeps its place; its count shrinks to the regular words, moved to its front.
        uint32_t at = 0;
        for (uint32_t k = 1; k <= list[0]; ++k)
            if (regular(list[k])) list[++at] = list[k];
        list[0] = kept;
        if (kept > 1) continue;
        u.slot = list[1];
        u.several_at = kNoSlot;
    }
}

}  // namespace tbdprof::tagger
