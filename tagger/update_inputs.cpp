#include "update_inputs.h"

namespace tbdprof::tagger::rules {
namespace {

// Whether buffer `b` is the update's own state as kernel `w` sees it (update_inputs.h): first touched
// in step `it` at or after `start` and before `w`, and touched by a kernel from `first` on. The first
// condition keeps out what backward makes (a bias gradient first touched by the reduction that
// writes it is not state of the update that reads it later), the second what the update never
// carries to the weights.
bool update_state_before(const Context& c, int32_t b, int it, size_t start, size_t w, size_t first) {
    const FlowFacts& g = c.flow.buffers[size_t(b)];
    auto [begin, end] = touches_in(c, g, it);
    if (begin == end || g.touches[begin].work < start || g.touches[begin].work >= w) return false;
    for (size_t j = begin; j < end; ++j)
        if (g.touches[j].work >= first && c.m.work[g.touches[j].work].kind == WorkItem::Kind::Kernel) return true;
    return false;
}

}  // namespace

bool read_into_update_state(const Context& c, size_t a, int it, size_t start, size_t first) {
    const FlowFacts& f = c.flow.buffers[a];
    auto [begin, end] = touches_in(c, f, it);
    bool any = false;
    for (size_t i = begin; i < end; ++i) {
        const size_t w = f.touches[i].work;
        if (w < start || w >= first) continue;
        bool folds = false;
        for (const Touch& t : c.m.work[w].touches)
            folds |= size_t(t.allocation) != a && !is_weight(c, t.allocation) &&
                     update_state_before(c, t.allocation, it, start, w, first);
        if (!folds) return false;
        any = true;
    }
    return any;
}

}  // namespace tbdprof::tagger::rules
