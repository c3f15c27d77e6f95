// The phases of each iteration: forward, backward and optimizer, from the program's named ranges or
// from the tags (backward begins with the first write of a gradient, the optimizer with the update
// and the work just before it that only serves it).
#include "rules_context.h"

namespace tbdprof::tagger::rules {
namespace {

// Phases the program itself marked with NVTX ranges named like forward/backward/optimizer
// (PyTorch's "## backward ##", "Optimizer.step#SGD.step" included). True when all three were found.
bool phases_from_ranges(const Context& c, size_t index, TagResult& result) {
    const Iteration& it = c.its.iterations[index];
    const char* kinds[] = {"forward", "backward", "optimizer"};
    int64_t begin[3] = {-1, -1, -1}, end[3] = {-1, -1, -1};
    for (const Range& r : c.m.ranges) {
        if (r.process != it.process || r.begin_ns < it.begin_ns || r.end_ns > it.end_ns) continue;
        const std::string name = lower_case(r.name);
        for (int k = 0; k < 3; ++k) {
            if (name.find(kinds[k]) == std::string::npos) continue;
            if (begin[k] < 0 || r.begin_ns < begin[k]) begin[k] = r.begin_ns;
            end[k] = std::max(end[k], r.end_ns);
            break;
        }
    }
    if (begin[0] < 0 || begin[1] < 0 || begin[2] < 0) return false;
    for (int k = 0; k < 3; ++k) result.phases.push_back({index, kinds[k], begin[k], end[k]});
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
            if (t.work <= w || c.work_iteration[t.work] != iteration) continue;
            if (t.use == Use::Overwrite) break;
            if (t.work < from) return false;
        }
        return true;
    };
    size_t start = first_update;
    for (size_t w = first_update; w-- > begin;) {
        if (c.work_iteration[w] != iteration) continue;
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
            if (c.work_iteration[w] != iteration) continue;
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
    while (start < first_update && c.work_iteration[start] != iteration) ++start;
    return start;
}

}  // namespace

void find_phases(Context& c, TagResult& result) {
    for (size_t i = 0; i < c.its.iterations.size(); ++i) {
        if (phases_from_ranges(c, i, result)) continue;
        const Iteration& it = c.its.iterations[i];
        int64_t backward = -1, optimizer = -1, optimizer_end = -1;
        for (size_t w = it.first_work; w < it.end_work && w < c.m.work.size(); ++w) {
            const WorkItem& item = c.m.work[w];
            if (c.work_iteration[w] != static_cast<int>(i)) continue;
            if (c.optimizer_work[w]) {
                if (optimizer < 0)
                    optimizer = c.m.work[update_prologue(c, static_cast<int>(i), it.first_work, w)].launch_ns;
                optimizer_end = item.launch_ns + 1;
                continue;
            }
            if (backward >= 0 || item.kind == WorkItem::Kind::Set) continue;
            for (const Touch& t : item.touches)
                if (c.tags[size_t(t.allocation)].category == "gradients" && is_write(item, t.access))
                    backward = item.launch_ns;
        }
        if (backward < 0 || optimizer < 0 || optimizer < backward) continue;
        // Forward begins with the step's first kernel (the batch copy and the zeroing of gradients
        // before it are not forward work); the update ends with its last launch.
        result.phases.push_back({i, "forward", std::min(it.core_begin_ns, backward), backward});
        result.phases.push_back({i, "backward", backward, optimizer});
        result.phases.push_back({i, "optimizer", optimizer, optimizer_end});
    }
}

}  // namespace tbdprof::tagger::rules
