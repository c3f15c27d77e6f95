#include "evidence.h"

#include <array>
#include <cstdio>

namespace tbdprof::tagger {

const char* phase_name(WorkPhase phase) {
    switch (phase) {
        case WorkPhase::Optimizer:
            return "optimizer";
        case WorkPhase::Step:
            return "step";
        case WorkPhase::Forward:
            return "forward";
        case WorkPhase::Backward:
            return "backward";
        case WorkPhase::OutsideSteps:
            break;
    }
    return "outside steps";
}

WorkPhases::WorkPhases(const TraceModel& m, const DataFlow& flow, const std::vector<Phase>& phases,
                       const std::vector<bool>& optimizer_work)
    : m_(m), flow_(flow), optimizer_work_(optimizer_work), backward_begin_ns_(flow.deciding.size(), -1) {
    for (const Phase& p : phases)
        if (p.kind == "backward" && p.iteration < backward_begin_ns_.size())
            backward_begin_ns_[p.iteration] = p.begin_ns;
}

WorkPhase WorkPhases::operator[](size_t work) const {
    const int it = flow_.work_iteration[work];
    if (it < 0) return WorkPhase::OutsideSteps;
    if (work < optimizer_work_.size() && optimizer_work_[work]) return WorkPhase::Optimizer;
    const int64_t backward_ns = backward_begin_ns_[size_t(it)];
    if (backward_ns < 0) return WorkPhase::Step;
    return m_.work[work].launch_ns < backward_ns ? WorkPhase::Forward : WorkPhase::Backward;
}

std::string describe_flow(const TraceModel& m, const DataFlow& flow, const WorkPhases& phase, size_t allocation) {
    const FlowFacts& f = flow.buffers[allocation];
    if (f.touches.empty()) return "no recorded work used it";
    // (phase, read|wrote, kernel|library call|copy|set) -> count, phases in order of first use.
    constexpr const char* kKinds[] = {"kernel", "library call", "copy", "set"};
    struct Counts {
        const char* phase;
        std::array<std::array<unsigned, 4>, 2> n{};
    };
    std::vector<Counts> counts;
    for (const FlowTouch& t : f.touches) {
        const WorkItem& w = m.work[t.work];
        const char* p = phase_name(phase[t.work]);
        auto it = counts.begin();
        while (it != counts.end() && it->phase != p) ++it;
        if (it == counts.end()) it = counts.insert(counts.end(), Counts{p, {}});
        size_t kind = w.kind == WorkItem::Kind::Set      ? 3
                      : w.kind != WorkItem::Kind::Kernel ? 2
                      : w.library_call != kNone          ? 1
                                                         : 0;
        bool wrote = writes(t.use);
        ++it->n[wrote ? 1 : 0][kind];
    }
    char head[200];
    std::snprintf(head, sizeof head, "used in %u deciding steps; first use in the step a read (value carried in) in %u",
                  f.iterations_used, f.carried_in);
    std::string out = head;
    if (f.updated_after_read) out += ", rewritten after that read in " + std::to_string(f.updated_after_read);
    if (f.temp_episodes) out += "; " + std::to_string(f.temp_episodes) + " write-then-read-at-once episodes";
    for (const Counts& c : counts) {
        out += std::string("; ") + c.phase + ":";
        const char* sep = " ";
        for (int wrote = 0; wrote < 2; ++wrote)
            for (size_t k = 0; k < 4; ++k) {
                if (!c.n[wrote][k]) continue;
                out += sep + std::string(wrote ? "written by " : "read by ") + std::to_string(c.n[wrote][k]) + " " +
                       kKinds[k] + (c.n[wrote][k] > 1 ? "s" : "");
                sep = ", ";
            }
    }
    return out;
}

}  // namespace tbdprof::tagger
