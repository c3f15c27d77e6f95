#include "refilled_scratch.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_set>

namespace tbdprof::tagger::rules {
namespace {

// Where a tensor lives in time, for grouping the tensors at one address: its process, and the step
// of its first touch, or for work outside the steps the stretch after the last step begun before it
// (-2 - that step's index; -1 before the first), so that a validation pass between two steps counts
// apart from both.
using Key = std::tuple<int32_t, uint64_t, int64_t>;  // process, address, step or stretch

int64_t span_of(const Context& c, uint32_t w) {
    const int it = c.flow.work_iteration[w];
    if (it >= 0) return it;
    int64_t begun = 0;
    for (const Iteration& s : c.its.iterations) begun += s.first_work <= w;
    return -1 - begun;
}

struct AtAddress {
    uint32_t refills = 0;  // temporary episodes of tensors that have no other, made anew
    uint32_t others = 0;   // every episode of the other tensors at the address, and refills made from the one before
};

bool may_write(const WorkItem& w, const Touch& t) {
    return t.access == Access::Write || (w.kind == WorkItem::Kind::Kernel && t.access == Access::Unknown);
}

// Whether work `writer`, which fills `a`'s address anew, is made from what `reader` (the last work
// that used the value before at that address) produced, through the work between them: what the
// reader writes, and what work reading that writes in turn, reaches the writer. A recurrence (an
// LSTM's gradient through time: the cell kernel reads it and writes the gates' gradient, from which
// a GEMM writes the next value at the same place) carries data from one fill to the next; a scratch
// is filled from elsewhere each time (im2col reads the next image, not the GEMM's output).
bool made_from_before(const TraceModel& m, int32_t a, uint32_t reader, uint32_t writer) {
    std::unordered_set<int32_t> made;
    for (const Touch& t : m.work[reader].touches)
        if (t.allocation != a && may_write(m.work[reader], t)) made.insert(t.allocation);
    // A plain kernel may read through any of its pointers: a struct of writable words (PyTorch's
    // elementwise kernels) passes its inputs as writable too. A library call writes its output.
    const auto reads_made = [&](const WorkItem& w) {
        const bool plain_kernel = w.kind == WorkItem::Kind::Kernel && w.library_call == kNone;
        return std::any_of(w.touches.begin(), w.touches.end(), [&](const Touch& t) {
            return t.allocation != a && (t.access != Access::Write || plain_kernel) && made.count(t.allocation) > 0;
        });
    };
    for (uint32_t w = reader + 1; w < writer && !made.empty(); ++w) {
        if (!reads_made(m.work[w])) continue;
        for (const Touch& t : m.work[w].touches)
            if (t.allocation != a && may_write(m.work[w], t)) made.insert(t.allocation);
    }
    return reads_made(m.work[writer]);
}

// Per tensor of a pooled segment: whether its writer is made from the tensor before it at the same
// address (made_from_before), for the addresses `wanted` marks (a tensor of each). Tensors at one
// address follow one another in launch order.
std::vector<bool> refilled_from_before(const Context& c, const std::vector<bool>& wanted) {
    std::map<std::pair<int32_t, uint64_t>, std::vector<size_t>> by_address;
    for (size_t a = 0; a < wanted.size(); ++a)
        if (c.m.allocations[a].id < 0 && !c.flow.buffers[a].touches.empty())
            by_address[{c.m.allocations[a].process, c.m.allocations[a].address}].push_back(a);
    std::vector<bool> from_before(wanted.size(), false);
    for (auto& [where, tensors] : by_address) {
        if (std::none_of(tensors.begin(), tensors.end(), [&](size_t a) { return wanted[a]; })) continue;
        const auto first_work = [&](size_t a) { return c.flow.buffers[a].touches.front().work; };
        std::sort(tensors.begin(), tensors.end(), [&](size_t x, size_t y) { return first_work(x) < first_work(y); });
        for (size_t i = 1; i < tensors.size(); ++i) {
            const uint32_t reader = c.flow.buffers[tensors[i - 1]].touches.back().work;
            if (reader < first_work(tensors[i]))
                from_before[tensors[i]] = made_from_before(c.m, int32_t(tensors[i]), reader, first_work(tensors[i]));
        }
    }
    return from_before;
}

std::map<Key, AtAddress> count_at_addresses(const std::vector<Key>& key, const std::vector<WriteEpisodes>& episodes,
                                            const std::vector<bool>& candidate, const std::vector<bool>& from_before,
                                            const std::vector<bool>& piece) {
    std::map<Key, AtAddress> at;
    for (size_t a = 0; a < key.size(); ++a) {
        if (!piece[a]) continue;
        AtAddress& here = at[key[a]];
        if (candidate[a] && !from_before[a])
            here.refills += episodes[a].temporary;
        else
            here.others += episodes[a].temporary + episodes[a].other;
    }
    return at;
}

bool many_refills(const AtAddress& here) {
    // (A use or two besides, such as the scratch's zeroing, does not change that.)
    return here.refills >= kManyRefills && here.others * kManyRefills <= here.refills;
}

}  // namespace

void tag_refilled_scratch(Context& c) {
    const size_t n = c.m.allocations.size();
    std::vector<WriteEpisodes> episodes(n);
    std::vector<bool> candidate(n, false), piece(n, false);
    std::vector<Key> key(n);
    for (size_t a = 0; a < n; ++a) {
        const FlowFacts& f = c.flow.buffers[a];
        if (c.m.allocations[a].id >= 0 || f.touches.empty()) continue;
        const uint32_t first = f.touches.front().work;
        piece[a] = true;
        key[a] = {c.m.work[first].process, c.m.allocations[a].address, span_of(c, first)};
        // Over all its touches, inside the steps and out (a validation pass refills the scratch as the
        // steps do); dataflow.cpp counts them in the deciding steps only.
        episodes[a] = count_write_episodes(c.m, f.touches, 0, f.touches.size());
        candidate[a] = episodes[a].temporary > 0 && episodes[a].other == 0;
    }
    // Where the fills alone would be enough, whether each was made from the one before.
    const std::map<Key, AtAddress> all = count_at_addresses(key, episodes, candidate, std::vector<bool>(n), piece);
    std::vector<bool> wanted(n, false);
    for (size_t a = 0; a < n; ++a) wanted[a] = candidate[a] && many_refills(all.at(key[a]));
    const std::map<Key, AtAddress> at =
        count_at_addresses(key, episodes, candidate, refilled_from_before(c, wanted), piece);
    for (size_t a = 0; a < n; ++a) {
        if (!candidate[a] || !c.tags[a].category.empty() || !many_refills(at.at(key[a]))) continue;
        c.tags[a] = {"workspace",
                     0.75,
                     "refilled-scratch",
                     "filled and consumed at once, again and again at one address in the step (" +
                         std::to_string(at.at(key[a]).refills) +
                         " fills there, each read only by the work right after its writer and made from other "
                         "data than the fill before): the scratch an operation refills for each call (im2col "
                         "columns), not a value handed on between operations",
                     {}};
    }
}

}  // namespace tbdprof::tagger::rules
