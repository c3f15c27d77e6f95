#include "forward_values.h"

namespace tbdprof::tagger::rules {

std::vector<bool> forward_work(const Context& c) {
    std::vector<bool> forward(c.m.work.size(), false);
    for (size_t i = 0; i < c.its.iterations.size(); ++i) {
        const Iteration& it = c.its.iterations[i];
        // A weight gradient a product call (a GEMM, a convolution's filter gradient) writes; else a
        // write a library call or a copy shows; else a plain kernel's pointer that may write (as
        // phases.cpp: a kernel's writable word is no proof, a bias add in forward takes the bias
        // so; and a normalization's forward writes its statistics, which stale words make look
        // like the update's inputs).
        size_t product = it.end_work, shown = it.end_work, any = it.end_work;
        for (size_t w = it.first_work; w < it.end_work && w < c.m.work.size() && product == it.end_work; ++w) {
            const WorkItem& item = c.m.work[w];
            if (c.flow.work_iteration[w] != static_cast<int>(i) || item.kind == WorkItem::Kind::Set) continue;
            const bool plain = item.kind == WorkItem::Kind::Kernel && item.library_call == kNone;
            const bool product_call =
                item.library_call != kNone && c.m.library_calls[size_t(item.library_call)].b != kNone;
            for (const Touch& t : item.touches) {
                if (c.tags[size_t(t.allocation)].category != "gradients" || !writes(use_of(c.m, item, t))) continue;
                if (product_call) product = w;
                if (!plain && shown == it.end_work) shown = w;
                if (any == it.end_work) any = w;
            }
        }
        const size_t end = product < it.end_work ? product : shown < it.end_work ? shown : any;
        if (end == it.end_work) continue;
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
