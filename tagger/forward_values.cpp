#include "forward_values.h"

#include <algorithm>
#include <unordered_set>

namespace tbdprof::tagger::rules {
namespace {

bool product_call(const Context& c, const WorkItem& item) {
    return item.library_call != kNone && c.m.library_calls[size_t(item.library_call)].b != kNone;
}

// Step `i`'s first gradient write: a weight gradient a product call (a GEMM, a convolution's filter
// gradient) writes; else a write a library call or a copy shows; else a plain kernel's pointer
// that may write (as phases.cpp: a kernel's writable word is no proof, a bias add in forward takes
// the bias so; and a normalization's forward writes its statistics, which stale words make look
// like the update's inputs). The step's end_work for none.
size_t first_gradient_write(const Context& c, size_t i) {
    const Iteration& it = c.its.iterations[i];
    size_t product = it.end_work, shown = it.end_work, any = it.end_work;
    for (size_t w = it.first_work; w < it.end_work && w < c.m.work.size() && product == it.end_work; ++w) {
        const WorkItem& item = c.m.work[w];
        if (c.flow.work_iteration[w] != static_cast<int>(i) || item.kind == WorkItem::Kind::Set) continue;
        const bool plain = item.kind == WorkItem::Kind::Kernel && item.library_call == kNone;
        for (const Touch& t : item.touches) {
            if (c.tags[size_t(t.allocation)].category != "gradients" || !writes(use_of(c.m, item, t))) continue;
            if (product_call(c, item)) product = w;
            if (!plain && shown == it.end_work) shown = w;
            if (any == it.end_work) any = w;
        }
    }
    return product < it.end_work ? product : shown < it.end_work ? shown : any;
}

// The weight whose copy buffer `a` is, when a plain kernel of step `i` made it from that weight
// alone: the kernel touches the two, writes `a` first of anything and reads the weight (autocast's
// cast of an FP32 parameter for the step's products, docs/tagging.md change 38). kNone otherwise. A
// kernel with more operands (a batch norm's backward: the weight, the batch, the output's gradient)
// is an operation of its own, not a conversion.
int32_t converted_weight(const Context& c, size_t i, int32_t a) {
    const FlowFacts& f = c.flow.buffers[size_t(a)];
    if (f.touches.empty()) return kNone;
    const size_t maker = f.touches.front().work;
    const WorkItem& item = c.m.work[maker];
    if (c.flow.work_iteration[maker] != static_cast<int>(i) || item.kind != WorkItem::Kind::Kernel ||
        item.library_call != kNone || item.touches.size() != 2 || !writes(f.touches.front().use))
        return kNone;
    for (const Touch& t : item.touches)
        if (t.allocation != a && is_weight(c, t.allocation) && (t.reads_first || use_of(c.m, item, t) == Use::Read))
            return t.allocation;
    return kNone;
}

// One past the product call that reads the last of step `i`'s weights to be read by one, itself or
// through the copy a conversion made of it (converted_weight): forward reads every weight a product
// uses before backward begins, so everything up to there is forward, whatever a stray gradient
// write says. Under autocast the products read only the copies, and a copy's piece can look like a
// gradient: the caching allocator hands its block to a gradient late in backward, the update reads
// that, and nothing cuts the piece (no product call reads the copy: cuDNN's kernels are plain). The
// cast's write of it then is the step's first gradient write, its second kernel. The step's first
// work for none.
size_t after_weights_first_products(const Context& c, size_t i) {
    const Iteration& it = c.its.iterations[i];
    std::unordered_set<int32_t> read;
    size_t end = it.first_work;
    for (size_t w = it.first_work; w < it.end_work && w < c.m.work.size(); ++w) {
        const WorkItem& item = c.m.work[w];
        if (c.flow.work_iteration[w] != static_cast<int>(i) || !product_call(c, item)) continue;
        for (const Touch& t : item.touches) {
            if (use_of(c.m, item, t) != Use::Read) continue;
            const int32_t weight = is_weight(c, t.allocation) ? t.allocation : converted_weight(c, i, t.allocation);
            if (weight != kNone && read.insert(weight).second) end = w + 1;
        }
    }
    return end;
}

}  // namespace

std::vector<bool> forward_work(const Context& c) {
    std::vector<bool> forward(c.m.work.size(), false);
    for (size_t i = 0; i < c.its.iterations.size(); ++i) {
        const Iteration& it = c.its.iterations[i];
        const size_t gradient = first_gradient_write(c, i);
        if (gradient == it.end_work) continue;
        const size_t end = std::max(gradient, after_weights_first_products(c, i));
        for (size_t w = it.first_work; w < end; ++w) forward[w] = c.flow.work_iteration[w] == static_cast<int>(i);
    }
    return forward;
}

bool forward_pooled_value(const Context& c, const std::vector<bool>& forward, size_t a) {
    const FlowFacts& f = c.flow.buffers[a];
    return c.m.allocations[a].id < 0 && !f.touches.empty() && f.touches.front().work < forward.size() &&
           forward[f.touches.front().work];
}

}  // namespace tbdprof::tagger::rules
