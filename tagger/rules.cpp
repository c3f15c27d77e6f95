#include "rules.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace tbdprof::tagger {
namespace {

enum class Lifetime { Persistent, Transient, Setup, Teardown, Between, Unknown };

struct Facts {
    Lifetime lifetime = Lifetime::Unknown;
    int iteration = -1;  // Transient: the iteration it lives in
    std::vector<std::pair<size_t, Access>> touches;  // (work index, access), in launch order
    int h2d_iterations = 0;
    bool first_touch_h2d = false;
    bool gemm_read = false;      // A or B of a library call inside an iteration
    bool library_workspace = false;
};

struct Context {
    const TraceModel& m;
    const IterationSet& its;
    std::vector<int> work_iteration;  // iteration of each work item, -1 outside
    std::vector<Facts> facts;
    std::vector<bool> optimizer_work;
    std::vector<Tag> tags;
};

bool is_write(const WorkItem& w, Access a) {
    return a == Access::Write || (w.kind == WorkItem::Kind::Kernel && a == Access::Unknown);
}

void assign_iterations(Context& c) {
    c.work_iteration.assign(c.m.work.size(), -1);
    for (size_t i = 0; i < c.its.iterations.size(); ++i) {
        const Iteration& it = c.its.iterations[i];
        for (size_t w = it.first_work; w < it.end_work && w < c.m.work.size(); ++w)
            if (c.m.work[w].process == it.process) c.work_iteration[w] = static_cast<int>(i);
    }
}

void gather_facts(Context& c) {
    const auto& its = c.its.iterations;
    c.facts.resize(c.m.allocations.size());
    for (size_t a = 0; a < c.m.allocations.size(); ++a) {
        const Allocation& alloc = c.m.allocations[a];
        Facts& f = c.facts[a];
        int64_t free_ns = alloc.free_ns.value_or(std::numeric_limits<int64_t>::max());
        int overlapped = 0, last = -1;
        for (size_t i = 0; i < its.size(); ++i) {
            if (its[i].process != alloc.process) continue;
            if (alloc.alloc_ns < its[i].end_ns && free_ns > its[i].core_begin_ns) {
                ++overlapped;
                last = static_cast<int>(i);
            }
        }
        if (its.empty()) f.lifetime = Lifetime::Unknown;
        else if (overlapped >= 2) f.lifetime = Lifetime::Persistent;
        else if (overlapped == 1) f.lifetime = Lifetime::Transient, f.iteration = last;
        else if (free_ns <= its.front().core_begin_ns) f.lifetime = Lifetime::Setup;
        else if (alloc.alloc_ns >= its.back().end_ns) f.lifetime = Lifetime::Teardown;
        else f.lifetime = Lifetime::Between;
    }
    std::vector<int> last_h2d_iteration(c.m.allocations.size(), -2);
    for (size_t w = 0; w < c.m.work.size(); ++w) {
        const WorkItem& item = c.m.work[w];
        for (const Touch& t : item.touches) {
            Facts& f = c.facts[size_t(t.allocation)];
            bool h2d = item.kind == WorkItem::Kind::CopyHtoD && t.access == Access::Write;
            if (f.touches.empty()) f.first_touch_h2d = h2d;
            f.touches.push_back({w, t.access});
            int it = c.work_iteration[w];
            if (h2d && it >= 0 && last_h2d_iteration[size_t(t.allocation)] != it) {
                ++f.h2d_iterations;
                last_h2d_iteration[size_t(t.allocation)] = it;
            }
            if (item.library_call != kNone && it >= 0) {
                const LibraryCall& call = c.m.library_calls[size_t(item.library_call)];
                if (t.allocation == call.a || t.allocation == call.b) f.gemm_read = true;
                if (t.allocation == call.workspace) f.library_workspace = true;
            }
        }
    }
    for (const LibraryCall& call : c.m.library_calls)
        if (call.workspace != kNone) c.facts[size_t(call.workspace)].library_workspace = true;
}

void set(Context& c, size_t a, const char* category, double confidence, const char* rule, std::string reason) {
    if (!c.tags[a].category.empty()) return;
    c.tags[a] = {category, confidence, rule, std::move(reason)};
}

bool kernel_writes_transient(const Context& c, const WorkItem& w) {
    for (const Touch& t : w.touches)
        if (is_write(w, t.access) && c.facts[size_t(t.allocation)].lifetime == Lifetime::Transient) return true;
    return false;
}

// Weights to start from: persistent buffers that GEMMs read next to per-step data, or that kernels
// read (pointer to const) while producing per-step data.
void seed_weights(Context& c) {
    for (size_t a = 0; a < c.facts.size(); ++a) {
        const Facts& f = c.facts[a];
        if (f.lifetime != Lifetime::Persistent || !c.tags[a].category.empty()) continue;
        if (f.gemm_read) {
            set(c, a, "weights", 0.9, "gemm-operand-persistent",
                "persistent across iterations and read as a GEMM operand inside them");
            continue;
        }
        for (const auto& [w, access] : f.touches) {
            const WorkItem& item = c.m.work[w];
            if (c.work_iteration[w] >= 0 && item.kind == WorkItem::Kind::Kernel && access == Access::Read &&
                kernel_writes_transient(c, item)) {
                set(c, a, "weights", 0.8, "read-to-produce-step-data",
                    "persistent, and read (as const) by kernels that produce per-iteration data");
                break;
            }
        }
    }
}

// Optimizer work updates weights in place and touches no per-step data other than gradients.
void find_optimizer_work(Context& c) {
    c.optimizer_work.assign(c.m.work.size(), false);
    for (size_t w = 0; w < c.m.work.size(); ++w) {
        const WorkItem& item = c.m.work[w];
        if (item.kind != WorkItem::Kind::Kernel || item.library_call != kNone || c.work_iteration[w] < 0) continue;
        // Without access information (extern "C" kernels, pointers inside structs): a plain kernel
        // that touches a GEMM's weight matrix is the optimizer, since forward and backward use weight
        // matrices through the library; or one that touches only persistent buffers.
        bool writes_weight = false, all_persistent = true, unknown_access = false, gemm_weight = false;
        for (const Touch& t : item.touches) {
            const Tag& tag = c.tags[size_t(t.allocation)];
            bool weight = tag.category == "weights";
            writes_weight |= weight && t.access == Access::Write;
            unknown_access |= weight && t.access == Access::Unknown;
            gemm_weight |= weight && t.access == Access::Unknown && tag.rule == "gemm-operand-persistent";
            all_persistent &= c.facts[size_t(t.allocation)].lifetime == Lifetime::Persistent;
        }
        c.optimizer_work[w] = writes_weight || (unknown_access && (all_persistent || gemm_weight));
    }
}

// Among buffers the optimizer touches: gradients are produced elsewhere in the step, optimizer state
// only ever by the optimizer, and more weights (biases) are only read elsewhere.
void tag_optimizer_operands(Context& c) {
    for (size_t a = 0; a < c.facts.size(); ++a) {
        if (!c.tags[a].category.empty()) continue;
        const Facts& f = c.facts[a];
        bool by_optimizer = false, written_elsewhere = false, read_elsewhere = false, unknown_elsewhere = false;
        int64_t first_elsewhere = -1;
        int elsewhere_iteration = -1;
        for (const auto& [w, access] : f.touches) {
            if (c.work_iteration[w] < 0) continue;
            const WorkItem& item = c.m.work[w];
            if (c.optimizer_work[w]) {
                by_optimizer = true;
                continue;
            }
            // Copies and sets say nothing about roles: optimizer state is zeroed when created,
            // gradients every step, and both may be read back by the host.
            if (item.kind != WorkItem::Kind::Kernel) continue;
            if (first_elsewhere < 0) {
                first_elsewhere = item.launch_ns;
                elsewhere_iteration = c.work_iteration[w];
            }
            if (access == Access::Write) written_elsewhere = true;
            else if (access == Access::Read) read_elsewhere = true;
            else unknown_elsewhere = true;
        }
        if (!by_optimizer) continue;
        if (written_elsewhere) {
            set(c, a, "gradients", 0.9, "written-in-step-read-by-optimizer",
                "written by backward work in the iteration and read by the kernels that update the weights");
        } else if (f.lifetime == Lifetime::Persistent && !read_elsewhere && !unknown_elsewhere) {
            set(c, a, "optimizer_state", 0.85, "optimizer-only-persistent",
                "persistent and touched inside iterations only by the kernels that update the weights");
        } else if (f.lifetime == Lifetime::Persistent && read_elsewhere && !unknown_elsewhere) {
            set(c, a, "weights", 0.8, "updated-by-optimizer-read-in-step",
                "updated in place by the optimizer and only read by the rest of the iteration");
        } else if (unknown_elsewhere && elsewhere_iteration >= 0) {
            // No access information: forward work comes early in a step, backward work late.
            const Iteration& it = c.its.iterations[size_t(elsewhere_iteration)];
            bool early = first_elsewhere - it.core_begin_ns < (it.end_ns - it.core_begin_ns) / 2;
            if (f.lifetime == Lifetime::Persistent && early)
                set(c, a, "weights", 0.6, "optimizer-updated-used-early",
                    "updated by the optimizer and used early in the iteration (forward)");
            else
                set(c, a, "gradients", 0.6, "optimizer-read-produced-late",
                    "read by the optimizer and produced late in the iteration (backward)");
        }
    }
}

// A short-lived buffer only one or two neighbouring operations use, none of them a library call.
bool is_temporary(const Context& c, const Facts& f) {
    if (f.touches.size() > 2) return false;
    for (const auto& [w, access] : f.touches)
        if (c.m.work[w].library_call != kNone) return false;
    if (f.touches.size() < 2) return true;
    size_t kernels_between = 0;
    for (size_t w = f.touches.front().first + 1; w < f.touches.back().first; ++w)
        kernels_between += c.m.work[w].kind == WorkItem::Kind::Kernel;
    return kernels_between == 0;
}

// Capture control: an allocation whose whole life lies outside every capture window was never seen
// in use; nothing can be said about it beyond that.
bool outside_capture_windows(const Context& c, const Allocation& a) {
    if (c.m.capture_windows.empty()) return false;
    const int64_t end = a.free_ns.value_or(INT64_MAX);
    for (const Range& w : c.m.capture_windows)
        if (w.process == a.process && a.alloc_ns <= w.end_ns && end >= w.begin_ns) return false;
    return true;
}

void tag_remaining(Context& c) {
    for (size_t a = 0; a < c.facts.size(); ++a) {
        if (!c.tags[a].category.empty()) continue;
        if (outside_capture_windows(c, c.m.allocations[a])) {
            set(c, a, "other", 0.5, "outside-capture-window",
                "allocated and freed outside the capture windows: no recorded work could use it");
            continue;
        }
        const Facts& f = c.facts[a];
        switch (f.lifetime) {
        case Lifetime::Transient:
        case Lifetime::Between:
            if (is_temporary(c, f))
                set(c, a, "workspace", 0.7, "short-lived-temporary",
                    "lives within one iteration and only one or two adjacent operations use it");
            else
                set(c, a, "activations", 0.85, "step-local-data",
                    "allocated and freed within one iteration and used across several of its operations");
            break;
        case Lifetime::Persistent:
            if (f.touches.empty())
                set(c, a, "other", 0.5, "persistent-unused", "persistent, but no recorded work touched it");
            else
                set(c, a, "other", 0.4, "persistent-unexplained",
                    "persistent, but neither read as a weight, produced as a gradient nor optimizer-only");
            break;
        case Lifetime::Setup:
        case Lifetime::Teardown:
            if (is_temporary(c, f))
                set(c, a, "workspace", 0.6, "setup-temporary", "a short-lived buffer outside the iterations");
            else
                set(c, a, "other", 0.5, "outside-iterations", "allocated and freed outside the training iterations");
            break;
        case Lifetime::Unknown:
            set(c, a, "other", 0.3, "no-iterations",
                "no training iterations were found, so lifetimes cannot be related to steps");
            break;
        }
    }
}

// Without iterations, only the strongest evidence counts.
void tag_without_iterations(Context& c) {
    for (size_t a = 0; a < c.facts.size(); ++a) {
        const Facts& f = c.facts[a];
        if (f.library_workspace) {
            set(c, a, "workspace", 0.9, "library-workspace", "handed to a library as its workspace");
            continue;
        }
        bool gemm_read_only = !f.touches.empty(), first_h2d = f.first_touch_h2d;
        for (const auto& [w, access] : f.touches) {
            const WorkItem& item = c.m.work[w];
            if (item.kind == WorkItem::Kind::CopyHtoD) continue;
            gemm_read_only &= item.library_call != kNone && access == Access::Read;
        }
        if (first_h2d && gemm_read_only && !c.m.allocations[a].free_ns)
            set(c, a, "weights", 0.5, "loaded-and-read-by-gemm",
                "copied in from the host, then only read as a GEMM operand, and never freed");
    }
    tag_remaining(c);
}

// Phases the program itself marked with NVTX ranges named like forward/backward/optimizer
// (PyTorch's "## backward ##", "Optimizer.step#SGD.step" included). True when all three were found.
bool phases_from_ranges(const Context& c, size_t index, TagResult& result) {
    const Iteration& it = c.its.iterations[index];
    const char* kinds[] = {"forward", "backward", "optimizer"};
    int64_t begin[3] = {-1, -1, -1}, end[3] = {-1, -1, -1};
    for (const Range& r : c.m.ranges) {
        if (r.process != it.process || r.begin_ns < it.begin_ns || r.end_ns > it.end_ns) continue;
        std::string name = r.name;
        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
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

// Traces without any data flow (imported profiler traces: no pointer arguments, no library roles)
// leave lifetimes and named ranges only. Weaker evidence, lower confidence.
bool inside_range_named(const Context& c, int32_t process, int64_t t, const char* word) {
    for (const Range& r : c.m.ranges) {
        if (r.process != process || t < r.begin_ns || t > r.end_ns) continue;
        std::string name = r.name;
        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (name.find(word) != std::string::npos) return true;
    }
    return false;
}

void tag_from_lifetimes_only(Context& c) {
    const auto& its = c.its.iterations;
    for (size_t a = 0; a < c.facts.size(); ++a) {
        const Allocation& alloc = c.m.allocations[a];
        const Facts& f = c.facts[a];
        if (f.lifetime == Lifetime::Persistent) {
            if (alloc.alloc_ns < its.front().begin_ns)
                set(c, a, "weights", 0.5, "lifetime-before-training",
                    "persistent and allocated before the first iteration (no data flow in this trace)");
            else if (inside_range_named(c, alloc.process, alloc.alloc_ns, "optimizer"))
                set(c, a, "optimizer_state", 0.5, "lifetime-created-by-optimizer",
                    "persistent and first allocated inside an optimizer range (no data flow in this trace)");
            else
                set(c, a, "gradients", 0.4, "lifetime-created-in-step",
                    "persistent and first allocated during a step, outside the optimizer (no data flow)");
        } else if (f.lifetime == Lifetime::Transient && alloc.free_ns) {
            const Iteration& it = its[size_t(f.iteration)];
            bool brief = *alloc.free_ns - alloc.alloc_ns < (it.end_ns - it.begin_ns) / 50;
            if (brief)
                set(c, a, "workspace", 0.4, "lifetime-brief",
                    "alive for under 2% of its iteration (no data flow in this trace)");
            else
                set(c, a, "activations", 0.5, "lifetime-step-local",
                    "allocated and freed within one iteration (no data flow in this trace)");
        }
    }
    tag_remaining(c);
}

void find_phases(Context& c, TagResult& result) {
    for (size_t i = 0; i < c.its.iterations.size(); ++i) {
        if (phases_from_ranges(c, i, result)) continue;
        const Iteration& it = c.its.iterations[i];
        int64_t backward = -1, optimizer = -1;
        for (size_t w = it.first_work; w < it.end_work && w < c.m.work.size(); ++w) {
            const WorkItem& item = c.m.work[w];
            if (c.work_iteration[w] != static_cast<int>(i)) continue;
            if (c.optimizer_work[w]) {
                if (optimizer < 0) optimizer = item.launch_ns;
                continue;
            }
            if (backward >= 0 || item.kind == WorkItem::Kind::Set) continue;
            for (const Touch& t : item.touches)
                if (c.tags[size_t(t.allocation)].category == "gradients" && is_write(item, t.access))
                    backward = item.launch_ns;
        }
        if (backward < 0 || optimizer < 0 || optimizer < backward) continue;
        result.phases.push_back({i, "forward", it.begin_ns, backward});
        result.phases.push_back({i, "backward", backward, optimizer});
        result.phases.push_back({i, "optimizer", optimizer, it.end_ns});
    }
}

}  // namespace

TagResult tag_allocations(const TraceModel& model, const IterationSet& iterations) {
    Context c{model, iterations, {}, {}, {}, std::vector<Tag>(model.allocations.size())};
    assign_iterations(c);
    gather_facts(c);
    TagResult result;
    if (iterations.iterations.empty()) {
        c.optimizer_work.assign(model.work.size(), false);
        tag_without_iterations(c);
        result.tags = std::move(c.tags);
        result.optimizer_work = std::move(c.optimizer_work);
        return result;
    }
    if (!model.has_argument_info && model.library_calls.empty()) {
        c.optimizer_work.assign(model.work.size(), false);
        tag_from_lifetimes_only(c);
        find_phases(c, result);
        result.tags = std::move(c.tags);
        result.optimizer_work = std::move(c.optimizer_work);
        return result;
    }
    for (size_t a = 0; a < c.facts.size(); ++a) {
        const Facts& f = c.facts[a];
        bool kernel_written = false;
        for (const auto& [w, access] : f.touches)
            kernel_written |= model.work[w].kind == WorkItem::Kind::Kernel && is_write(model.work[w], access);
        if (f.library_workspace)
            set(c, a, "workspace", 0.95, "library-workspace", "handed to a library (cuBLAS) as its workspace");
        else if (!kernel_written && ((f.lifetime == Lifetime::Persistent && f.h2d_iterations >= 2) ||
                                     (f.lifetime == Lifetime::Transient && f.first_touch_h2d)))
            set(c, a, "input", 0.9, "copied-in-each-step",
                "filled from the host in each iteration and only read by kernels");
    }
    seed_weights(c);
    find_optimizer_work(c);
    tag_optimizer_operands(c);
    tag_remaining(c);
    find_phases(c, result);
    result.tags = std::move(c.tags);
    result.optimizer_work = std::move(c.optimizer_work);
    return result;
}

}  // namespace tbdprof::tagger
