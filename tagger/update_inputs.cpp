#include "update_inputs.h"

#include <algorithm>
#include <cstdint>

namespace tbdprof::tagger::rules {
namespace {

// Whether the update of the step before `it` touched buffer `b` (or one at its address of its
// size: a tensor inside a pool, cut into one piece per step where each step's first use may write
// it) in a kernel that writes the weights, and no other work used those bytes from then until `w`:
// state the update holds from step to step, such as Adam's first moments. Not what the update
// makes anew in each step at an address that forward and backward use in between (the per-tensor
// norms gradient clipping computes, whose address the closing kernels' unused words keep).
bool held_since_previous_update(const Context& c, int32_t b, int it, size_t w) {
    if (it <= 0 || size_t(it) > c.its.iterations.size()) return false;
    const Iteration& before = c.its.iterations[size_t(it - 1)];
    const Allocation& mine = c.m.allocations[size_t(b)];
    auto same = [&](int32_t a) {
        const Allocation& other = c.m.allocations[size_t(a)];
        return a == b || (other.address == mine.address && other.bytes == mine.bytes);
    };
    auto overlaps = [&](int32_t a) {
        const Allocation& other = c.m.allocations[size_t(a)];
        return other.address < mine.address + uint64_t(mine.bytes) &&
               mine.address < other.address + uint64_t(other.bytes);
    };
    size_t last = SIZE_MAX;  // the previous update's last touch of it by a kernel writing the weights
    for (size_t k = before.first_work; k < before.end_work && k < c.optimizer_work.size(); ++k) {
        if (!c.optimizer_work[k] || c.flow.work_iteration[k] != it - 1) continue;
        const TouchList& touches = c.m.work[k].touches;
        const bool closing =
            std::any_of(touches.begin(), touches.end(), [&](const Touch& t) { return is_weight(c, t.allocation); });
        if (closing && std::any_of(touches.begin(), touches.end(), [&](const Touch& t) { return same(t.allocation); }))
            last = k;
    }
    if (last == SIZE_MAX) return false;
    for (size_t k = last + 1; k < w; ++k) {
        if (c.optimizer_work[k]) continue;
        const TouchList& touches = c.m.work[k].touches;
        if (std::any_of(touches.begin(), touches.end(), [&](const Touch& t) { return overlaps(t.allocation); }))
            return false;
    }
    return true;
}

// The work item that first touches buffer `b` in step `it`, but a set or copy that is its first
// touch ever (initialising state made lazily: Adam's moments, zeroed in the first step, as in
// joins_update); SIZE_MAX when none.
size_t first_touch(const Context& c, int32_t b, int it) {
    const FlowFacts& g = c.flow.buffers[size_t(b)];
    auto [begin, end] = touches_in(c, g, it);
    if (begin < end && begin == 0 && c.m.work[g.touches[0].work].kind != WorkItem::Kind::Kernel) ++begin;
    return begin < end ? g.touches[begin].work : SIZE_MAX;
}

// Whether buffer `b` is first touched in step `it` by the update as tried from `start`, no later
// than kernel `w`: nothing of the step before the update touched it (what backward makes, a bias
// gradient first touched by the reduction that writes it, is not the update's).
bool first_touched_by_update(const Context& c, int32_t b, int it, size_t start, size_t w) {
    const size_t first = first_touch(c, b, it);
    return first != SIZE_MAX && first >= start && first <= w;
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

// Whether buffer `b` is the update's own state as kernel `w` sees it (update_inputs.h): first
// touched by the update before `w`, or by `w` itself when the update of the step before touched it
// too or a set or copy of this step initialised it and it outlives the step (state carried from
// step to step, or made for it in the first step; not a value `w` makes for this step alone).
bool update_state_at(const Context& c, int32_t b, int it, size_t start, size_t w, size_t first) {
    if (!first_touched_by_update(c, b, it, start, w)) return false;
    const FlowFacts& g = c.flow.buffers[size_t(b)];
    const bool initialised_here = c.facts[size_t(b)].lifetime != Lifetime::Transient && !g.touches.empty() &&
                                  c.flow.work_iteration[g.touches[0].work] == it &&
                                  c.m.work[g.touches[0].work].kind != WorkItem::Kind::Kernel;
    if (first_touch(c, b, it) == w && !initialised_here && !held_since_previous_update(c, b, it, w)) return false;
    return carried_to_weights(c, b, it, start, w, first);
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
