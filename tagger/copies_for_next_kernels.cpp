#include "copies_for_next_kernels.h"

#include "forward_values.h"

#include <algorithm>

namespace tbdprof::tagger::rules {
namespace {

// The one other buffer work item `w` fills buffer `a` from, when it touches nothing else: a plain
// kernel with two operands (PyTorch's copy kernel making a tensor contiguous, a layout change);
// kNone otherwise. Not a device copy (cudaMemcpy*): frameworks move slices with those to assemble a
// tensor from pieces (a concatenation, a split's backward), whose result is the next operation's.
int32_t copied_from(const WorkItem& w, int32_t a) {
    if (w.kind != WorkItem::Kind::Kernel || w.library_call != kNone) return kNone;
    int32_t source = kNone;
    for (const Touch& t : w.touches) {
        if (t.allocation == a) continue;
        if (source != kNone && source != t.allocation) return kNone;
        source = t.allocation;
    }
    return source;
}

// The next work item of `w`'s process within kCopyReadersSpan items after `w`, or c.m.work.size().
// Bounded because a reader farther away fails the span test anyway, and a process whose work has
// ended would otherwise send the search to the end of the other processes' work.
size_t next_of_process(const Context& c, size_t w) {
    const size_t stop = std::min(c.m.work.size(), w + 1 + kCopyReadersSpan);
    for (size_t n = w + 1; n < stop; ++n)
        if (c.m.work[n].process == c.m.work[w].process) return n;
    return c.m.work.size();
}

// Whether work of `process` in (from, to] touches `buffer` (the copy's source) and nothing that the
// work between from and it touched besides that source and `copy`, the copy's buffer. Work that also
// takes in an intermediate the readers made (a reduction of the copy) is a step of their operation
// using its input twice, not another operation.
bool touched_in(const Context& c, int32_t process, int32_t buffer, int32_t copy, size_t from, size_t to) {
    std::vector<int32_t> made_between;
    for (size_t w = from + 1; w <= to && w < c.m.work.size(); ++w) {
        const WorkItem& item = c.m.work[w];
        if (item.process != process) continue;
        auto has = [&](int32_t a) {
            return std::any_of(item.touches.begin(), item.touches.end(),
                               [&](const Touch& t) { return t.allocation == a; });
        };
        const bool chained = std::any_of(made_between.begin(), made_between.end(), has);
        if (has(buffer) && !chained) return true;
        for (const Touch& t : item.touches)
            if (t.allocation != buffer && t.allocation != copy) made_between.push_back(t.allocation);
    }
    return false;
}

// Whether every work item of `process` after `copy` and before `last` touches a buffer that the
// copy or a work item after it touched: the operation's own chain of work around its private
// buffers (a product of the copy, its reduction, a copy of that), as the shared temporaries'
// used_inside_one_operation asks. Work on buffers none of them touched is another operation's, and
// the copy's readers then are two operations.
bool chained_between(const Context& c, int32_t process, size_t copy, size_t last) {
    std::vector<int32_t> seen;
    auto note = [&](const WorkItem& item) {
        for (const Touch& t : item.touches) seen.push_back(t.allocation);
    };
    note(c.m.work[copy]);
    for (size_t w = copy + 1; w < last && w < c.m.work.size(); ++w) {
        const WorkItem& item = c.m.work[w];
        if (item.process != process) continue;
        if (std::none_of(item.touches.begin(), item.touches.end(), [&](const Touch& t) {
                return std::find(seen.begin(), seen.end(), t.allocation) != seen.end();
            }))
            return false;
        note(item);
    }
    return true;
}

bool copy_for_next_kernels(const Context& c, const std::vector<bool>& forward, size_t a) {
    const FlowFacts& f = c.flow.buffers[a];
    if (c.m.allocations[a].id >= 0 || c.facts[a].lifetime != Lifetime::Transient || f.touches.size() < 3) return false;
    // Not in forward: there a value the next kernels read and drop is an operator's output
    // (forward_values.h); an operation's copies of its input are backward's.
    if (forward_pooled_value(c, forward, a)) return false;
    const FlowTouch& made = f.touches.front();
    const WorkItem& maker = c.m.work[made.work];
    const int32_t source = copied_from(maker, int32_t(a));
    if (!writes(made.use) || source == kNone || f.touches[1].work != next_of_process(c, made.work)) return false;
    for (size_t i = 1; i < f.touches.size(); ++i) {
        const FlowTouch& t = f.touches[i];
        if (t.work == f.touches[i - 1].work || t.work - made.work > kCopyReadersSpan) return false;
        const WorkItem& reader = c.m.work[t.work];
        if (reader.kind != WorkItem::Kind::Kernel || reader.library_call != kNone) return false;
    }
    // The readers' operation sees its input only through the copy: work that uses the source (or its
    // space, given to a new value) among the readers belongs to other operations, and the "copy" was
    // one operation's result handed to the next (a softmax's output, which the loss reads). Where
    // the copy read from inside the source's piece (Touch::inside: a slice, or tensors the extents
    // joined), other work touching that piece need not touch what was copied: no evidence either way.
    const bool source_sliced = std::any_of(maker.touches.begin(), maker.touches.end(),
                                           [&](const Touch& t) { return t.allocation == source && t.inside; });
    return (source_sliced || !touched_in(c, maker.process, source, int32_t(a), made.work, f.touches.back().work)) &&
           chained_between(c, maker.process, made.work, f.touches.back().work);
}

}  // namespace

void tag_copies_for_next_kernels(Context& c) {
    const std::vector<bool> forward = forward_work(c);
    for (size_t a = 0; a < c.tags.size(); ++a) {
        if (!c.tags[a].category.empty() || !copy_for_next_kernels(c, forward, a)) continue;
        c.tags[a] = {"workspace",
                     0.7,
                     "copy-for-next-kernels",
                     "a copy of one buffer made for the kernels right after it, which alone read it, while nothing "
                     "else uses the original: scratch of their operation (the contiguous copy an attention or "
                     "normalization backward makes of its input)",
                     {}};
    }
}

}  // namespace tbdprof::tagger::rules
