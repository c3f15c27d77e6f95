#include "temporaries.h"

#include <algorithm>

namespace tbdprof::tagger {
namespace {

size_t distinct_allocations(const WorkItem& w) {
    std::vector<int32_t> seen;
    for (const Touch& t : w.touches)
        if (std::find(seen.begin(), seen.end(), t.allocation) == seen.end()) seen.push_back(t.allocation);
    return seen.size();
}

bool is_device_copy(const WorkItem& w) {
    return w.kind == WorkItem::Kind::CopyDtoD;
}

// Same kind and same buffers: consecutive pieces of one data movement (a strided copy issued as one
// cudaMemcpy2DAsync per head or per column block).
bool same_movement(const WorkItem& a, const WorkItem& b) {
    if (!is_device_copy(a) || !is_device_copy(b) || a.touches.size() != b.touches.size()) return false;
    for (size_t i = 0; i < a.touches.size(); ++i)
        if (a.touches[i].allocation != b.touches[i].allocation || a.touches[i].access != b.touches[i].access)
            return false;
    return true;
}

// Work items launched while the buffer was allocated: an operation's temporaries live across few.
// Consecutive pieces of one copy count once.
size_t work_alive(const TraceModel& m, const Allocation& a) {
    auto by_launch = [](const WorkItem& w, int64_t t) { return w.launch_ns < t; };
    auto begin = std::lower_bound(m.work.begin(), m.work.end(), a.alloc_ns, by_launch);
    auto end = std::lower_bound(begin, m.work.end(), *a.free_ns, by_launch);
    size_t n = 0;
    const WorkItem* previous = nullptr;
    for (auto w = begin; w != end && n <= kMaxOperationWork; ++w) {
        if (w->process != a.process) continue;
        n += previous == nullptr || !same_movement(*previous, *w);
        previous = &*w;
    }
    return n;
}

// The one buffer device copy `w` reads from into `a`, or kNone.
int32_t copy_source(const WorkItem& w, int32_t a) {
    int32_t source = kNone;
    for (const Touch& t : w.touches) {
        if (t.allocation == a) continue;
        if (t.access != Access::Read || (source != kNone && source != t.allocation)) return kNone;
        source = t.allocation;
    }
    return source;
}

// How many of `f`'s first touches fill it from one other buffer: one kernel that touches only the two,
// or device copies all from the same buffer (a column block gathered one head at a time); 0 if not so.
size_t filled_from_one_buffer(const TraceModel& m, const FlowFacts& f, int32_t a) {
    const WorkItem& writer = m.work[f.touches.front().work];
    if (f.touches.front().use == Use::Read) return 0;
    if (writer.kind == WorkItem::Kind::Kernel)
        return writer.library_call == kNone && distinct_allocations(writer) == 2 ? 1 : 0;
    if (!is_device_copy(writer)) return 0;
    int32_t source = copy_source(writer, a);
    if (source == kNone) return 0;
    size_t n = 1;
    while (n < f.touches.size() && is_device_copy(m.work[f.touches[n].work]) && f.touches[n].use != Use::Read &&
           copy_source(m.work[f.touches[n].work], a) == source)
        ++n;
    return n;
}

// Freed before the next operation starts: the work launched between its last use and its free
// touches only buffers that existed at that last use (the rest of the same operation, which
// allocated what it needs up front). An operation's input is freed by its caller after the whole
// operation, by which time the next ones have allocated their own buffers.
bool freed_with_its_operation(const TraceModel& m, const FlowFacts& f, int32_t a) {
    const Allocation& alloc = m.allocations[size_t(a)];
    uint32_t last = f.touches.back().work;
    int64_t last_launch = m.work[last].launch_ns;
    for (size_t w = last + 1; w < m.work.size() && m.work[w].launch_ns < *alloc.free_ns; ++w) {
        const WorkItem& item = m.work[w];
        if (item.process != alloc.process) continue;
        if (item.library_call != kNone && item.library_call == m.work[last].library_call) continue;
        for (const Touch& t : item.touches)
            if (t.allocation != a && m.allocations[size_t(t.allocation)].alloc_ns > last_launch) return false;
    }
    return true;
}

// A packed copy made for library calls: one kernel, or device copies, fill it from one other
// buffer, and only library calls read it (as an input operand), then it is gone.
bool is_packed_copy(const TraceModel& m, const FlowFacts& f, int32_t a) {
    if (f.touches.size() < 2) return false;
    size_t filled = filled_from_one_buffer(m, f, a);
    if (filled == 0 || filled >= f.touches.size()) return false;
    for (size_t i = filled; i < f.touches.size(); ++i) {
        const WorkItem& reader = m.work[f.touches[i].work];
        if (reader.library_call == kNone) return false;
        const LibraryCall& call = m.library_calls[size_t(reader.library_call)];
        if (call.a != a && call.b != a) return false;
        if (call.c == a || call.workspace == a) return false;
    }
    return true;
}

bool touches_other_known(const WorkItem& w, int32_t a, const std::vector<bool>& known) {
    return std::any_of(w.touches.begin(), w.touches.end(),
                       [&](const Touch& t) { return t.allocation != a && known[size_t(t.allocation)]; });
}

// Its uses lie inside one operation: every work item launched between its first and its last use
// uses it or another of the operation's temporaries, or only operands of the operation's library
// calls (those that use such a temporary): a softmax in place on the scores a GEMM of packed copies
// wrote. An operation is work launched back to back around its private buffers; a value kept for
// backward spans work that touches none of them.
bool used_inside_one_operation(const TraceModel& m, const FlowFacts& f, int32_t a, const std::vector<bool>& known) {
    int32_t process = m.work[f.touches.front().work].process;
    auto own = [&](const Touch& t) { return t.allocation == a || known[size_t(t.allocation)]; };
    std::vector<int32_t> operands;  // of the library calls in the window that use a temporary
    for (uint32_t w = f.touches.front().work; w <= f.touches.back().work; ++w) {
        const WorkItem& item = m.work[w];
        if (item.process != process || item.library_call == kNone) continue;
        if (std::any_of(item.touches.begin(), item.touches.end(), own))
            for (const Touch& t : item.touches) operands.push_back(t.allocation);
    }
    auto operand = [&](const Touch& t) {
        return std::find(operands.begin(), operands.end(), t.allocation) != operands.end();
    };
    for (uint32_t w = f.touches.front().work + 1; w < f.touches.back().work; ++w) {
        const WorkItem& item = m.work[w];
        if (item.process != process) continue;
        bool inside = std::any_of(item.touches.begin(), item.touches.end(), own) ||
                      (!item.touches.empty() && std::all_of(item.touches.begin(), item.touches.end(), operand));
        if (!inside) return false;
    }
    return true;
}

// Made inside an operation already known to have temporaries: its producer uses one of them, every
// library call reading it uses another, and it is freed no later than the step-local buffers its
// producer takes from outside (the operation's inputs, which its caller frees after it).
bool joins_known_operation(const TraceModel& m, const FlowFacts& f, int32_t a, const std::vector<bool>& known,
                           const std::vector<bool>& step_local) {
    const WorkItem& producer = m.work[f.touches.front().work];
    if (!touches_other_known(producer, a, known) || !used_inside_one_operation(m, f, a, known)) return false;
    for (size_t i = 1; i < f.touches.size(); ++i) {
        const WorkItem& reader = m.work[f.touches[i].work];
        if (reader.library_call != kNone && !touches_other_known(reader, a, known)) return false;
    }
    return freed_before_inputs(m, producer, a, known, step_local);
}

}  // namespace

bool freed_before_inputs(const TraceModel& m, const WorkItem& producer, int32_t a, const std::vector<bool>& known,
                         const std::vector<bool>& step_local) {
    int64_t free_ns = *m.allocations[size_t(a)].free_ns;
    for (const Touch& t : producer.touches) {
        size_t x = size_t(t.allocation);
        // Inputs existed before it; buffers allocated after it are the operation's own or its outputs.
        if (t.allocation == a || known[x] || !step_local[x]) continue;
        if (m.allocations[x].alloc_ns > m.allocations[size_t(a)].alloc_ns) continue;
        if (free_ns > *m.allocations[x].free_ns) return false;
    }
    return true;
}

bool freed_before_producer_inputs(const TraceModel& m, const DataFlow& flow, int32_t a,
                                  const std::vector<bool>& step_local) {
    const Allocation& alloc = m.allocations[size_t(a)];
    // A tensor inside a pooled segment (id < 0) has no free of its own; its life ends at its last use,
    // and so do its maker's inputs': an output handed to the next operation is still used after the
    // inputs its maker consumed, a temporary is not (change 27).
    if (!step_local[size_t(a)] || !alloc.free_ns) return true;  // no free: no evidence
    // Every touch lies inside the buffer's life: the builder resolved each pointer at its launch.
    const FlowFacts& f = flow.buffers[size_t(a)];
    if (f.touches.empty()) return true;
    return freed_before_inputs(m, m.work[f.touches.front().work], a, std::vector<bool>(m.allocations.size()),
                               step_local);
}

std::vector<bool> find_operation_temporaries(const TraceModel& m, const DataFlow& flow,
                                             const std::vector<bool>& step_local, const std::vector<bool>& candidate,
                                             std::vector<bool> known) {
    std::vector<int32_t> open;
    const std::vector<FlowFacts>& life = flow.buffers;
    for (size_t a = 0; a < m.allocations.size(); ++a) {
        if (known[a] || !candidate[a] || !step_local[a] || m.allocations[a].id < 0 || !m.allocations[a].free_ns)
            continue;
        const FlowFacts& f = life[a];
        if (f.touches.empty() || f.touches.front().use == Use::Read) continue;
        if (work_alive(m, m.allocations[a]) > kMaxOperationWork) continue;
        if (!freed_with_its_operation(m, f, int32_t(a))) continue;
        open.push_back(int32_t(a));
    }
    std::vector<int32_t> packed;
    for (int32_t a : open)
        if (is_packed_copy(m, life[size_t(a)], a) &&
            freed_before_inputs(m, m.work[life[size_t(a)].touches.front().work], a, known, step_local))
            known[size_t(a)] = true, packed.push_back(a);
    // A packed copy, too, is used inside one operation (the copies made for the same GEMM count).
    for (bool dropped = true; dropped;) {
        dropped = false;
        for (int32_t a : packed)
            if (known[size_t(a)] && !used_inside_one_operation(m, life[size_t(a)], a, known))
                known[size_t(a)] = false, dropped = true;
    }
    // Grow the known temporaries to a fixpoint: each found may let another join its operation.
    for (bool changed = true; changed;) {
        changed = false;
        for (int32_t a : open) {
            if (known[size_t(a)] || !joins_known_operation(m, life[size_t(a)], a, known, step_local)) continue;
            known[size_t(a)] = true;
            changed = true;
        }
    }
    return known;
}

}  // namespace tbdprof::tagger
