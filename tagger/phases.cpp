// The phases of each iteration: forward, backward and optimizer, from the program's named ranges or
// from the tags (backward begins with the first write of a gradient, the optimizer with the update
// and the work just before it that only serves it).
#include "rules_context.h"

#include <algorithm>
#include <limits>

namespace tbdprof::tagger::rules {
namespace {

// A range whose name marks a phase (forward, backward or optimizer), found once per range: the
// phase search below visits only these, and only those that begin inside the iteration.
struct PhaseMark {
    int32_t process = 0;
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    int kind = 0;  // index into kPhaseKinds
};

constexpr const char* kPhaseKinds[] = {"forward", "backward", "optimizer"};

struct PhaseMarks {
    std::vector<PhaseMark> by_begin;  // sorted by (process, begin_ns)
    std::vector<PhaseMark> inverted;  // end before begin (no trace tbdprof writes has them)
};

// The ranges named like a phase (PyTorch's "## backward ##", "Optimizer.step#SGD.step" included),
// each lowered and matched once: matching every range again for every iteration made tagging an
// import with millions of operator ranges quadratic (docs/benchmarks.md, "Tagging a large import").
PhaseMarks phase_marks(const std::vector<Range>& ranges) {
    PhaseMarks marks;
    LoweredName lowered;
    for (const Range& r : ranges) {
        const std::string_view name = lowered(r.name);
        for (int k = 0; k < 3; ++k) {
            if (name.find(kPhaseKinds[k]) == std::string_view::npos) continue;
            (r.end_ns < r.begin_ns ? marks.inverted : marks.by_begin).push_back({r.process, r.begin_ns, r.end_ns, k});
            break;
        }
    }
    std::sort(marks.by_begin.begin(), marks.by_begin.end(), [](const PhaseMark& a, const PhaseMark& b) {
        return std::pair(a.process, a.begin_ns) < std::pair(b.process, b.begin_ns);
    });
    return marks;
}

// Phases the program itself marked with ranges inside the iteration. True when all three were found.
// A range inside begins inside; iterations do not overlap, so all iterations together visit each
// mark about once.
bool phases_from_ranges(const PhaseMarks& marks, size_t index, const Iteration& it, TagResult& result) {
    int64_t begin[3] = {-1, -1, -1}, end[3] = {-1, -1, -1};
    auto take = [&](const PhaseMark& r) {
        if (r.process != it.process || r.begin_ns < it.begin_ns || r.end_ns > it.end_ns) return;
        if (begin[r.kind] < 0 || r.begin_ns < begin[r.kind]) begin[r.kind] = r.begin_ns;
        end[r.kind] = std::max(end[r.kind], r.end_ns);
    };
    auto first = std::lower_bound(marks.by_begin.begin(), marks.by_begin.end(), std::pair(it.process, it.begin_ns),
                                  [](const PhaseMark& m, const std::pair<int32_t, int64_t>& key) {
                                      return std::pair(m.process, m.begin_ns) < key;
                                  });
    for (auto r = first; r != marks.by_begin.end() && r->process == it.process && r->begin_ns <= it.end_ns; ++r)
        take(*r);
    for (const PhaseMark& r : marks.inverted) take(r);
    if (begin[0] < 0 || begin[1] < 0 || begin[2] < 0) return false;
    for (int k = 0; k < 3; ++k) result.phases.push_back({index, kPhaseKinds[k], begin[k], end[k]});
    return true;
}

// Where the optimizer phase begins: the update's first work, extended backwards over the work just
// before it that only serves the update, such as gradient clipping's norm (PyTorch counts
// clip_grad_norm_ as part of the step's optimizer work). Such work reads only gradients (backward's
// results, which the update consumes) or what earlier work of this stretch made; what it writes is
// read by nothing but this stretch and the update (directly, or by a read-back to the host whose
// scale the update takes as an argument); and it writes no gradient or weight (backward's kernels
// write gradients, so none is pulled in).
size_t update_prologue(const Context& c, int iteration, size_t begin, size_t first_update) {
    auto category = [&](int32_t a) -> const std::string& { return c.tags[size_t(a)].category; };
    // Whether every reader of `a` after work `w` in this iteration (until it is written again) is
    // at or after `from`: work of the stretch or the update.
    auto read_only_from = [&](int32_t a, size_t w, size_t from) {
        for (const FlowTouch& t : c.flow.buffers[size_t(a)].touches) {
            if (t.work <= w || c.flow.work_iteration[t.work] != iteration) continue;
            if (t.use == Use::Overwrite) break;
            if (t.work < from) return false;
        }
        return true;
    };
    size_t start = first_update;
    for (size_t w = first_update; w-- > begin;) {
        if (c.flow.work_iteration[w] != iteration) continue;
        const WorkItem& item = c.m.work[w];
        if (item.kind == WorkItem::Kind::CopyHtoD || c.optimizer_work[w]) break;
        bool serves_update = true;
        for (const Touch& t : item.touches) {
            if (!is_write(item, t.access)) continue;
            const std::string& cat = category(t.allocation);
            serves_update &= cat != "gradients" && cat != "weights" && read_only_from(t.allocation, w, start);
        }
        if (!serves_update) break;
        start = w;
    }
    // Its inputs: gradients, or what the stretch made before. Work reading anything else (an
    // activation) is not the update's; the stretch then begins after it.
    for (bool shrunk = true; shrunk && start < first_update;) {
        shrunk = false;
        std::vector<int32_t> made;
        for (size_t w = start; w < first_update && !shrunk; ++w) {
            if (c.flow.work_iteration[w] != iteration) continue;
            const WorkItem& item = c.m.work[w];
            for (const Touch& t : item.touches) {
                if (is_write(item, t.access)) continue;
                bool ok = category(t.allocation) == "gradients" ||
                          std::find(made.begin(), made.end(), t.allocation) != made.end();
                if (!ok) {
                    start = w + 1, shrunk = true;
                    break;
                }
            }
            for (const Touch& t : item.touches)
                if (is_write(item, t.access)) made.push_back(t.allocation);
        }
    }
    while (start < first_update && c.flow.work_iteration[start] != iteration) ++start;
    return start;
}

// Whether what work `w` writes into buffer `a` can reach the update: it is not read and then
// overwritten (by a kernel, a set or a library call) before the update touches `a`. A tensor of the
// caching pool whose block a gradient takes later in the step (an MLP's logits) is written in
// forward, read, and overwritten in backward: that write is no gradient's. Without the read, an
// accumulating GEMM (its beta unrecorded: an overwrite) keeps the first write; copies and
// collectives do not overwrite a gradient's value away (DDP's bucket round trip, an in-place
// all-reduce).
bool reaches_update(const Context& c, int32_t a, size_t w, int iteration) {
    bool read = false;
    for (const FlowTouch& t : c.flow.buffers[size_t(a)].touches) {
        if (t.work <= w || c.flow.work_iteration[t.work] != iteration) continue;
        if (c.optimizer_work[t.work]) return true;
        const WorkItem& item = c.m.work[t.work];
        const bool copy = item.kind != WorkItem::Kind::Kernel && item.kind != WorkItem::Kind::Set;
        const bool collective =
            item.library_call != kNone && c.m.library_calls[size_t(item.library_call)].collective != Collective::None;
        if (read && t.use == Use::Overwrite && !copy && !collective) return false;
        read |= t.use == Use::Read;
    }
    return true;
}

// The device span of the work the iteration's process launched in the phase's host span: the band a
// timeline draws over the device rows (on the host, DDP's backward can span nearly the whole step
// while its kernels run in a part of it).
void add_device_span(const TraceModel& m, const Iteration& it, Phase& phase) {
    const auto first = std::lower_bound(m.work.begin() + std::ptrdiff_t(it.first_work),
                                        m.work.begin() + std::ptrdiff_t(std::min(it.end_work, m.work.size())),
                                        phase.begin_ns, [](const WorkItem& w, int64_t t) { return w.launch_ns < t; });
    int64_t device_begin = std::numeric_limits<int64_t>::max(), device_end = 0;
    for (auto w = first; w != m.work.end() && w->launch_ns < phase.end_ns; ++w) {
        if (w->process != it.process) continue;
        device_begin = std::min(device_begin, w->start_ns);
        device_end = std::max(device_end, w->end_ns);
    }
    if (device_end > 0) phase.device_begin_ns = device_begin, phase.device_end_ns = device_end;
}

// The phases in host time, from the program's ranges or from the tags.
void find_host_phases(Context& c, TagResult& result) {
    const PhaseMarks marks = phase_marks(c.m.ranges);
    for (size_t i = 0; i < c.its.iterations.size(); ++i) {
        const Iteration& it = c.its.iterations[i];
        if (phases_from_ranges(marks, i, it, result)) continue;
        int64_t optimizer = -1, optimizer_end = -1;
        // Backward's first gradient write: one a copy or a library call's output operand shows,
        // else (no such write in the step) the first kernel pointer that may write one. A kernel's
        // pointer word is no proof of a write: PyTorch's argument structs hold stale words (a
        // gradient's address in a forward bias add), and a mangled signature marks every word of a
        // by-value struct writable.
        int64_t known_write = -1, unknown_write = -1;
        for (size_t w = it.first_work; w < it.end_work && w < c.m.work.size(); ++w) {
            const WorkItem& item = c.m.work[w];
            if (c.flow.work_iteration[w] != static_cast<int>(i)) continue;
            if (c.optimizer_work[w]) {
                if (optimizer < 0)
                    optimizer = c.m.work[update_prologue(c, static_cast<int>(i), it.first_work, w)].launch_ns;
                optimizer_end = item.launch_ns + 1;
                continue;
            }
            if (known_write >= 0 || item.kind == WorkItem::Kind::Set) continue;
            for (const Touch& t : item.touches) {
                if (c.tags[size_t(t.allocation)].category != "gradients" ||
                    !reaches_update(c, t.allocation, w, static_cast<int>(i)))
                    continue;
                const Use use = use_of(c.m, item, t);
                const bool shown = item.kind != WorkItem::Kind::Kernel || item.library_call != kNone;
                if (shown && (use == Use::Overwrite || use == Use::Modify)) known_write = item.launch_ns;
                if (unknown_write < 0 && is_write(item, t.access)) unknown_write = item.launch_ns;
            }
        }
        const int64_t backward = known_write >= 0 ? known_write : unknown_write;
        if (backward < 0 || optimizer < 0 || optimizer < backward) continue;
        // Forward begins with the step's first kernel (the batch copy and the zeroing of gradients
        // before it are not forward work); the update ends with its last launch.
        result.phases.push_back({i, "forward", std::min(it.core_begin_ns, backward), backward});
        result.phases.push_back({i, "backward", backward, optimizer});
        result.phases.push_back({i, "optimizer", optimizer, optimizer_end});
    }
}

}  // namespace

void find_phases(Context& c, TagResult& result) {
    find_host_phases(c, result);
    for (Phase& phase : result.phases) add_device_span(c.m, c.its.iterations[phase.iteration], phase);
}

}  // namespace tbdprof::tagger::rules
