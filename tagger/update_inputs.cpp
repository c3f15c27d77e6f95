#include "update_inputs.h"

namespace tbdprof::tagger::rules {
namespace {

// Whether buffer `b` is first touched in step `it` by the update as tried from `start`, no later
// than kernel `w`: nothing of the step before the update touched it (what backward makes, a bias
// gradient first touched by the reduction that writes it, is not the update's). A set or copy that
// is the buffer's first touch ever initialises state made lazily (Adam's moments, zeroed in the
// first step), as in joins_update.
bool first_touched_by_update(const Context& c, int32_t b, int it, size_t start, size_t w) {
    const FlowFacts& g = c.flow.buffers[size_t(b)];
    auto [begin, end] = touches_in(c, g, it);
    if (begin < end && begin == 0 && c.m.work[g.touches[0].work].kind != WorkItem::Kind::Kernel) ++begin;
    return begin < end && g.touches[begin].work >= start && g.touches[begin].work <= w;
}

bool touched_from(const Context& c, int32_t b, int it, size_t from) {
    const FlowFacts& g = c.flow.buffers[size_t(b)];
    auto [begin, end] = touches_in(c, g, it);
    for (size_t j = begin; j < end; ++j)
        if (g.touches[j].work >= from && c.m.work[g.touches[j].work].kind == WorkItem::Kind::Kernel) return true;
    return false;
}

// Whether the update carries buffer `b` on to the weights: a kernel from `first` on (the closing
// kernels) touches it, or a kernel of the update after `w` touches it together with a buffer the
// update made in the step that the closing kernels touch (Adam's second moments become the square
// roots the closing kernel divides by; only the roots reach it).
bool carried_to_weights(const Context& c, int32_t b, int it, size_t start, size_t w, size_t first) {
    if (touched_from(c, b, it, first)) return true;
    const FlowFacts& g = c.flow.buffers[size_t(b)];
    auto [begin, end] = touches_in(c, g, it);
    for (size_t j = begin; j < end; ++j) {
        const size_t x = g.touches[j].work;
        if (x <= w || x >= first || c.m.work[x].kind != WorkItem::Kind::Kernel) continue;
        for (const Touch& t : c.m.work[x].touches)
            if (t.allocation != b && !is_weight(c, t.allocation) &&
                first_touched_by_update(c, t.allocation, it, start, x) && touched_from(c, t.allocation, it, first))
                return true;
    }
    return false;
}

// Whether buffer `b` is the update's own state as kernel `w` sees it (update_inputs.h).
bool update_state_at(const Context& c, int32_t b, int it, size_t start, size_t w, size_t first) {
    return first_touched_by_update(c, b, it, start, w) && carried_to_weights(c, b, it, start, w, first);
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
                     update_state_at(c, t.allocation, it, start, w, first);
        if (!folds) return false;
        any = true;
    }
    return any;
}

}  // namespace tbdprof::tagger::rules
