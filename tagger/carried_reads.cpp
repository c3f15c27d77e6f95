#include "carried_reads.h"

#include <unordered_set>

namespace tbdprof::tagger {
namespace {

// The most pointer words into the examined allocations a kernel of one operation holds (a batch
// norm's backward: input, output gradient, weight, statistics, three results).
constexpr uint32_t kMaxOperandWords = 10;

bool plain_kernel_word(const TraceModel& m, const PointerUse& u) {
    if (u.work >= m.work.size() || u.slot >= m.kernel_slots) return false;
    const WorkItem& w = m.work[u.work];
    return w.kind == WorkItem::Kind::Kernel && w.library_call == kNone;
}

}  // namespace

std::vector<bool> output_word_writers(const TraceModel& m, const std::vector<bool>& outputs) {
    std::vector<bool> writers(m.work.size(), false);
    std::vector<uint32_t> words(m.work.size(), 0);
    auto output = [&](uint32_t slot) { return slot < m.kernel_slots && slot < outputs.size() && outputs[slot]; };
    for (const PointerUse& u : m.pointer_uses) {
        if (u.work >= m.work.size() || m.work[u.work].kind != WorkItem::Kind::Kernel ||
            m.work[u.work].library_call != kNone)
            continue;
        // An operand in place sits in several words, its output word among them (an add into the
        // convolution's result that reads the bias from a third word).
        const auto& list = m.several_word_slots;
        if (u.slot == kSeveralSlots && u.several_at < list.size() &&
            list.size() - u.several_at - 1 >= list[u.several_at]) {
            words[u.work] += list[u.several_at];
            for (uint32_t k = 1; k <= list[u.several_at]; ++k)
                writers[u.work] = writers[u.work] || output(list[u.several_at + k]);
            continue;
        }
        if (u.slot >= m.kernel_slots) continue;
        ++words[u.work];
        writers[u.work] = writers[u.work] || output(u.slot);
    }
    // A multi-tensor kernel (PyTorch's foreach update) lists many tensors in one struct, its words
    // taking different tensors from launch to launch: one that starts a value in some launch says
    // nothing of the others. An operation of a few operands (an elementwise kernel, a normalization's
    // forward or backward) keeps its words' roles.
    for (size_t w = 0; w < writers.size(); ++w) writers[w] = writers[w] && words[w] <= kMaxOperandWords;
    return writers;
}

bool reads_beside_output(const TraceModel& m, const std::vector<bool>& outputs, const std::vector<bool>& writers,
                         const PointerUse& u) {
    if (u.access == Access::Read) return false;  // a pointer to const: the flow knows it already
    return plain_kernel_word(m, u) && u.slot < outputs.size() && !outputs[u.slot] && u.work < writers.size() &&
           writers[u.work];
}

CarriedReads carried_reads(const TraceModel& m, const std::vector<bool>& outputs, const std::vector<int>& step) {
    CarriedReads c{output_word_writers(m, outputs), std::vector<bool>(m.work.size(), false)};
    std::vector<size_t> last_product;  // per step: one past its last product call, 0 for none
    for (size_t w = 0; w < m.work.size() && w < step.size(); ++w) {
        const WorkItem& item = m.work[w];
        if (step[w] < 0 || item.library_call == kNone || m.library_calls[size_t(item.library_call)].b == kNone)
            continue;
        if (last_product.size() <= size_t(step[w])) last_product.resize(size_t(step[w]) + 1, 0);
        last_product[size_t(step[w])] = w + 1;
    }
    for (size_t w = 0; w < m.work.size() && w < step.size(); ++w) {
        const WorkItem& item = m.work[w];
        c.after_products[w] = step[w] >= 0 && size_t(step[w]) < last_product.size() &&
                              last_product[size_t(step[w])] > 0 && w >= last_product[size_t(step[w])] &&
                              item.kind == WorkItem::Kind::Kernel && item.library_call == kNone;
    }
    return c;
}

bool carried_over(const TraceModel& m, const std::vector<bool>& outputs, const CarriedReads& carried,
                  const PointerUse& first, const PointerUse& previous, const PointerUse& u) {
    return previous.work < carried.after_products.size() && carried.after_products[previous.work] &&
           reads_beside_output(m, outputs, carried.writers, u) &&
           reads_beside_output(m, outputs, carried.writers, first);
}

void mark_reads_beside_output(const TraceModel& m, const SubRangeSet& set, const std::vector<int32_t>& virtual_index,
                              TraceModel& v) {
    if (set.output_words.empty()) return;
    const std::vector<bool> writers = output_word_writers(m, set.output_words);
    // Per (work item, tensor of v): a use that reads beside an output, and any other.
    auto key = [](uint32_t work, int32_t target) { return (uint64_t(work) << 32) | uint32_t(target); };
    std::unordered_set<uint64_t> reading, other;
    for (size_t u = 0; u < m.pointer_uses.size() && u < set.owner.size(); ++u) {
        const PointerUse& use = m.pointer_uses[u];
        const int32_t owner = set.owner[u];
        if (owner == kNone || virtual_index[size_t(owner)] == kNone) continue;
        const bool reads = reads_beside_output(m, set.output_words, writers, use);
        (reads ? reading : other).insert(key(use.work, virtual_index[size_t(owner)]));
    }
    for (size_t w = 0; w < v.work.size(); ++w)
        for (Touch& t : v.work[w].touches) {
            const uint64_t k = key(uint32_t(w), t.allocation);
            t.reads_first = t.access == Access::Write && reading.count(k) && !other.count(k);
        }
}

}  // namespace tbdprof::tagger
