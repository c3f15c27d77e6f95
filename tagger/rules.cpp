#include "rules.h"

#include "rules_context.h"

#include "collectives.h"
#include "copies_for_next_kernels.h"
#include "dataflow.h"
#include "evidence.h"
#include "forward_values.h"
#include "named_ranges.h"
#include "refilled_scratch.h"
#include "temporaries.h"
#include "update_inputs.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>

namespace tbdprof::tagger {
namespace rules {
namespace {

// The steps of one process, in order, for counting the steps an allocation's lifetime overlaps.
struct ProcessSteps {
    std::vector<size_t> index;  // into IterationSet::iterations
    bool ordered = true;        // end_ns and core_begin_ns never decrease along `index`
};

std::map<int32_t, ProcessSteps> steps_by_process(const std::vector<Iteration>& its) {
    std::map<int32_t, ProcessSteps> by_process;
    for (size_t i = 0; i < its.size(); ++i) {
        ProcessSteps& p = by_process[its[i].process];
        if (!p.index.empty()) {
            const Iteration& before = its[p.index.back()];
            p.ordered &= before.end_ns <= its[i].end_ns && before.core_begin_ns <= its[i].core_begin_ns;
        }
        p.index.push_back(i);
    }
    return by_process;
}

// The steps of `p` that the lifetime [alloc_ns, free_ns) overlaps (allocated before the step ends,
// freed after its first kernel): how many, and the last. Steps in order make those that end after
// alloc_ns a suffix and those whose first kernel is before free_ns a prefix, so two binary searches
// replace a scan of every step per allocation (quadratic on an import with a step per operator).
std::pair<int, int> overlapped_steps(const std::vector<Iteration>& its, const ProcessSteps& p, int64_t alloc_ns,
                                     int64_t free_ns) {
    if (!p.ordered) {
        int overlapped = 0, last = -1;
        for (size_t i : p.index)
            if (alloc_ns < its[i].end_ns && free_ns > its[i].core_begin_ns) ++overlapped, last = static_cast<int>(i);
        return {overlapped, last};
    }
    auto first =
        std::partition_point(p.index.begin(), p.index.end(), [&](size_t i) { return its[i].end_ns <= alloc_ns; });
    auto end =
        std::partition_point(p.index.begin(), p.index.end(), [&](size_t i) { return its[i].core_begin_ns < free_ns; });
    if (end <= first) return {0, -1};
    return {static_cast<int>(end - first), static_cast<int>(*std::prev(end))};
}

void gather_facts(Context& c) {
    const auto& its = c.its.iterations;
    const std::map<int32_t, ProcessSteps> by_process = steps_by_process(its);
    c.facts.resize(c.m.allocations.size());
    for (size_t a = 0; a < c.m.allocations.size(); ++a) {
        const Allocation& alloc = c.m.allocations[a];
        Facts& f = c.facts[a];
        int64_t free_ns = alloc.free_ns.value_or(std::numeric_limits<int64_t>::max());
        const auto steps = by_process.find(alloc.process);
        const auto [overlapped, last] = steps == by_process.end()
                                            ? std::pair(0, -1)
                                            : overlapped_steps(its, steps->second, alloc.alloc_ns, free_ns);
        if (its.empty())
            f.lifetime = Lifetime::Unknown;
        else if (overlapped >= 2)
            f.lifetime = Lifetime::Persistent;
        else if (overlapped == 1)
            f.lifetime = Lifetime::Transient, f.iteration = last;
        else if (free_ns <= its.front().core_begin_ns)
            f.lifetime = Lifetime::Setup;
        else if (alloc.alloc_ns >= its.back().end_ns)
            f.lifetime = Lifetime::Teardown;
        else
            f.lifetime = Lifetime::Between;
    }
    std::vector<int> last_h2d_iteration(c.m.allocations.size(), -2);
    for (size_t w = 0; w < c.m.work.size(); ++w) {
        const WorkItem& item = c.m.work[w];
        for (const Touch& t : item.touches) {
            Facts& f = c.facts[size_t(t.allocation)];
            bool h2d = item.kind == WorkItem::Kind::CopyHtoD && t.access == Access::Write;
            if (f.touches.empty()) f.first_touch_h2d = h2d;
            f.touches.push_back({w, t.access});
            int it = c.flow.work_iteration[w];
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

// Why memory a math library allocated for itself is workspace, in words: which library, inside which
// of its functions, and that no tensor of the program owns it.
std::string library_own_reason(const Allocation& alloc) {
    const LibraryMade& made = alloc.made_by;
    const std::string library = made.library.empty() ? "a math library" : made.library;
    const std::string where = made.entry_point.empty() ? "" : " inside " + made.entry_point;
    return "allocated by " + library + " itself" + where +
           " (its call stack says so): the library's own memory for its handle (state and default workspace), "
           "which no tensor of the program owns";
}

void set(Context& c, size_t a, const char* category, double confidence, const char* rule, std::string reason) {
    if (!c.tags[a].category.empty()) return;
    c.tags[a] = {category, confidence, rule, std::move(reason), {}};
}

// A short-lived buffer only one or two neighbouring operations use, none of them a library call.
bool is_temporary(const Context& c, const Facts& f) {
    if (f.touches.size() > 2) return false;
    for (const auto& [w, access] : f.touches)
        if (c.m.work[w].library_call != kNone) return false;
    // A value written and then read by nothing the trace shows is no temporary that its operation
    // consumed: it is read through a pointer whose extent is not known (a whole-buffer read of
    // per-image slices) or kept without being read (a layer norm's statistics in a validation pass).
    if (f.touches.size() < 2) return f.touches.empty() || f.touches.front().second != Access::Write;
    // Between writer and reader no kernel, nor device copy (a slice copied into it is an operation).
    for (size_t w = f.touches.front().first + 1; w < f.touches.back().first; ++w)
        if (c.m.work[w].kind == WorkItem::Kind::Kernel || c.m.work[w].kind == WorkItem::Kind::CopyDtoD) return false;
    return true;
}

// ---- Roles from data flow (docs/tagging.md, "Roles") ----

// Weights: state carried into each step (its first use in the step reads it) and written later in
// the same step by a kernel (the update).
void tag_carried_state(Context& c) {
    for (size_t a = 0; a < c.facts.size(); ++a) {
        const FlowFacts& f = c.flow.buffers[a];
        if (!c.tags[a].category.empty() || f.iterations_used == 0 || f.h2d) continue;
        // A parameter outlives the steps that update it. A buffer (or a tensor inside an arena) in
        // use within one step of several, read first there, holds what a pass before that step left
        // (a validation pass's output), not a parameter.
        if (c.facts[a].lifetime == Lifetime::Transient && c.its.iterations.size() >= 2) continue;
        if (f.carried_in > 0 && f.carried_in * 2 >= f.iterations_used && f.updated_after_read > 0)
            set(c, a, "weights", 0.9, "read-then-updated",
                "read first in each step (its value comes from the step before) and rewritten later in the step by "
                "a kernel: a parameter, read by forward work and updated by the optimizer");
    }
}

// Whether buffer `f`, read by work in step `it`, was last written before `start` and then used by
// other work before `start`: data backward shares (an activation gradient a weight-gradient GEMM and
// a bias-gradient kernel both read), not the update's input. A gradient is written by backward and
// then read only by the update.
bool shared_before_update(const Context& c, const FlowFacts& f, int it, size_t start) {
    auto [begin, end] = touches_in(c, f, it);
    bool written = false, used_since = false;
    for (size_t i = begin; i < end && f.touches[i].work < start; ++i) {
        if (writes(f.touches[i].use))
            written = true, used_since = false;
        else if (c.m.work[f.touches[i].work].kind == WorkItem::Kind::Kernel)
            used_since = true;
    }
    return written && used_since;
}

// A set or copy that is the buffer's first touch ever initialises it (state allocated lazily, just
// before the first update, and zeroed): it is not a zeroing each step.
bool initialises(const Context& c, const FlowFacts& f, size_t touch) {
    return touch == 0 && c.m.work[f.touches[0].work].kind != WorkItem::Kind::Kernel;
}

// A library call that multiplies two input operands (a GEMM, a GEMV, a dot product) is a layer's
// computation; an update's library calls fold one operand into state (axpy, scal, copy).
bool is_product_call(const Context& c, const WorkItem& item) {
    return item.library_call != kNone && c.m.library_calls[size_t(item.library_call)].b != kNone;
}

// Whether the update, when it starts at `start` and its closing writes of the weights at `first`, may use a buffer made
// for step `it` alone. Yes when nothing before `start` in the step touched it (the update's own intermediate values:
// Adam's square roots of the second moments, made and freed inside the optimizer's step), or when backward's last touch
// before `start` wrote it and the update's closing kernels use it too (a gradient made anew each step, as PyTorch's
// `zero_grad(set_to_none=True)` does, read by a first step's Adam from its first kernel on). Not an intermediate of
// backward that its next kernel consumes and frees (a BF16 weight gradient cast to FP32 before it is accumulated): the
// closing kernels never see it. Not an activation gradient read by a weight-gradient GEMM before `start`: its last
// touch there is a read. Both refusals are about a value backward hands on. Not one that no device work wrote in the
// step before `start` (the batch, copied from the host; what an earlier step left): backward computes its values in the
// step, on the device. Nor one that no work of the step certainly reads (no pointer to const, no library input) and
// that a product call (a GEMM of backward) ran past untouched before `start`: PyTorch's foreach metadata keeps the
// addresses of earlier launches (the batch, forward's loss) in unused slots, and whether the update's kernels show them
// depends on what the host's memory held (with torch.profiler running, weights). A backward kernel after the last GEMM
// that reads what forward saved (an embedding's token ids, a norm's statistics) reads it through a pointer to const,
// and stays backward's; so does one whose certain read before `start` was followed by a write (forward's value, made
// after that read and kept for backward's tail: the plain transformer fell to 92.99% without this). A certain read that
// is the last touch before `start`, with a product call past it, consumed the value (an activation gradient max
// pooling's backward read, whose address the foreach metadata keeps in the next step's update, under expandable
// segments). A tensor whose kernel writes are all stale words of by-value structs (written_only_through_input_words:
// the batch's address in an elementwise kernel's unused words) was not written on the device. Backward's last write,
// read in the window by no pointer to const and only by kernels that fold it into the update's own state, is the
// update's input too (read_into_update_state: SGD's momentum on a real GPU, update_inputs.h).
bool update_step_local(const Context& c, size_t a, int it, size_t start, size_t first) {
    const FlowFacts& f = c.flow.buffers[a];
    auto [begin, end] = touches_in(c, f, it);
    bool before = false, last_writes = false, last_reads = false, at_update = false, written_on_device = false;
    bool read_in_window = false, read_before = false;
    const bool stale_writes = c.m.allocations[a].written_only_through_input_words;
    size_t last_before = 0;
    for (size_t i = begin; i < end; ++i) {
        const size_t w = f.touches[i].work;
        (w < start ? read_before : read_in_window) |= f.touches[i].use == Use::Read;
        if (w < start) {
            before = true, last_writes = writes(f.touches[i].use), last_before = w;
            last_reads = f.touches[i].use == Use::Read;
            written_on_device |= last_writes && c.m.work[w].kind != WorkItem::Kind::CopyHtoD && !stale_writes;
        }
        at_update |= w >= first && c.m.work[w].kind == WorkItem::Kind::Kernel;
    }
    if (!before || (last_writes && at_update) || !written_on_device) return true;
    if (last_writes && !read_in_window && read_into_update_state(c, a, it, start, first)) return true;
    if (read_in_window || (read_before && !last_reads)) return false;
    for (size_t w = start; w-- > last_before + 1;)
        if (c.flow.work_iteration[w] == it && is_product_call(c, c.m.work[w])) return true;
    return false;
}

// May work `k` (a kernel or a one-operand library call) belong to the update when the update of its
// step starts at `start` (<= k)? Its writes must be buffers only the update uses in the step
// (momenta, master copies, the update's own scratch; not zeroed by a set each step) or weights,
// unless everything it reads is a weight or the update's own state (then it writes the update's
// value, as a solver that copies its history into the gradient buffer does); what it reads must be
// weights, such buffers, or buffers backward wrote and nothing but the update used since
// (gradients); and it must write something the update goes on to use (a dead output does not make
// it the update's).
bool joins_update(const Context& c, size_t k, size_t start, size_t first) {
    const WorkItem& item = c.m.work[k];
    // A reduction across ranks (collectives.h) communicates backward's gradients: not the update.
    if (is_product_call(c, item) || is_reduction(c.m, item)) return false;
    int it = c.flow.work_iteration[k];
    bool feeds_update = false, reads_update_state = true;
    for (const Touch& t : item.touches) {
        if (!c.m.pooled && t.reads_first && c.tags[size_t(t.allocation)].category == "input")
            return false;  // nor one reading the batch (word_reads.h; a pool's stale words may hold it)
        if (is_weight(c, t.allocation) || writes(use_of(c.m, item, t))) continue;
        const FlowFacts& f = c.flow.buffers[size_t(t.allocation)];
        auto [begin, end] = touches_in(c, f, it);
        if (begin < end && initialises(c, f, begin)) ++begin;
        reads_update_state &= begin == end || f.touches[begin].work >= start;
        if (shared_before_update(c, f, it, start)) return false;
    }
    for (const Touch& t : item.touches) {
        if (is_weight(c, t.allocation)) continue;
        // A buffer made for this step is backward's (written here, a per-step gradient; read here,
        // an activation gradient a bias gradient is reduced from), unless the update made it or
        // takes it as its input (update_step_local).
        if (c.facts[size_t(t.allocation)].lifetime == Lifetime::Transient &&
            !update_step_local(c, size_t(t.allocation), it, start, first))
            return false;
        const FlowFacts& f = c.flow.buffers[size_t(t.allocation)];
        auto [begin, end] = touches_in(c, f, it);
        Use use = use_of(c.m, item, t);
        for (size_t i = begin; i < end; ++i) {
            uint32_t w = f.touches[i].work;
            bool kernel = c.m.work[w].kind == WorkItem::Kind::Kernel;
            if (writes(use) && w < start && (kernel || writes(f.touches[i].use)) && !initialises(c, f, i) &&
                !reads_update_state)
                return false;
            if (!kernel) continue;
            feeds_update |= w > k && writes(use);
        }
    }
    return feeds_update;
}

// The earliest start of the update such that every kernel from there to `first` joins it. Going
// back, a window can fail and a longer one pass again (a moment scaled, then accumulated: an Adam
// built from level-1 calls and generic kernels fails up to six windows in a row per parameter); a
// product call (a GEMM) ends the search, as do several failing windows in a row.
size_t update_start(const Context& c, const Iteration& step, int index, size_t first) {
    constexpr int kMisses = 12;
    constexpr size_t kMaxKernels = 256;
    size_t best = first, scanned = 0;
    int misses = 0;
    for (size_t s = first; s-- > step.first_work && misses < kMisses && scanned < kMaxKernels;) {
        const WorkItem& item = c.m.work[s];
        if (c.flow.work_iteration[s] != index || item.kind != WorkItem::Kind::Kernel) continue;
        if (is_product_call(c, item)) break;
        ++scanned;
        bool all = true;
        for (size_t k = s; k < first && all; ++k)
            if (c.flow.work_iteration[k] == index && c.m.work[k].kind == WorkItem::Kind::Kernel)
                all = joins_update(c, k, s, first);
        if (all)
            best = s, misses = 0;
        else
            ++misses;
    }
    return best;
}

// The update: kernels and library calls that write a weight (a solver's axpy into the weights), the
// work just before them that serves them (an Adam built from generic scale/add kernels or level-1
// calls), and every kernel and one-operand library call after the first of them.
void find_update(Context& c) {
    c.optimizer_work.assign(c.m.work.size(), false);
    for (size_t i = 0; i < c.its.iterations.size(); ++i) {
        const Iteration& step = c.its.iterations[i];
        // The update is the closing run of writers of each weight in the step: the kernels and
        // one-operand library calls that write it after anything last read it (a backward kernel may take a weight
        // through a non-const pointer and only read it; forward and backward read every weight). An arena holding every
        // parameter is written once per tensor by an update launched per tensor: all of those writes close its step,
        // not only the last. The update begins at the earliest such run.
        std::map<int32_t, size_t> closing_writes;  // weight -> first kernel of its closing run of writes
        // The same, counting only runs that begin after the step's last product call (a GEMM or a
        // convolution): forward and backward use the weights through such calls, so the update
        // cannot begin before the last of them. A kernel before it that seems to write a weight is
        // not the update (PyTorch's elementwise kernels carry stale operand pointers of earlier
        // operations in their argument structs, writable ones among them); the plain runs are
        // kept for steps whose last product call follows the update.
        std::map<int32_t, size_t> closing_after_products;
        for (size_t w = step.first_work; w < step.end_work; ++w) {
            const WorkItem& item = c.m.work[w];
            if (c.flow.work_iteration[w] != int(i) || item.kind != WorkItem::Kind::Kernel) continue;
            if (is_product_call(c, item)) closing_after_products.clear();
            for (const Touch& t : item.touches) {
                if (!is_weight(c, t.allocation)) continue;
                Use use = use_of(c.m, item, t);
                // A one-operand library call writes a weight as a kernel does (a solver's axpy).
                // Not a kernel that reads the weight beside its output (Touch::reads_first: a batch
                // norm's backward takes its weight in a writable struct and writes the gradients).
                bool update_write = writes(use) && use != Use::Workspace && !is_product_call(c, item) && !t.reads_first;
                if (!update_write) {
                    closing_writes.erase(t.allocation);
                    closing_after_products.erase(t.allocation);
                } else {
                    closing_writes.try_emplace(t.allocation, w);
                    closing_after_products.try_emplace(t.allocation, w);
                }
            }
        }
        size_t first = step.end_work;
        for (const auto& [weight, w] : closing_after_products.empty() ? closing_writes : closing_after_products)
            first = std::min(first, w);
        if (first == step.end_work) continue;
        size_t start = update_start(c, step, int(i), first);
        for (size_t w = start; w < step.end_work; ++w)
            c.optimizer_work[w] = c.flow.work_iteration[w] == int(i) && c.m.work[w].kind == WorkItem::Kind::Kernel &&
                                  !is_product_call(c, c.m.work[w]);
    }
}

// Without access hints a kernel's touch of a GEMM's weight matrix is the update (forward and
// backward use weight matrices through the library), as is one touching only persistent buffers.
void find_update_without_hints(Context& c) {
    for (size_t w = 0; w < c.m.work.size(); ++w) {
        const WorkItem& item = c.m.work[w];
        if (c.optimizer_work[w] || item.kind != WorkItem::Kind::Kernel || item.library_call != kNone ||
            c.flow.work_iteration[w] < 0)
            continue;
        bool all_persistent = !item.touches.empty(), unknown_weight = false;
        for (const Touch& t : item.touches) {
            unknown_weight |= is_weight(c, t.allocation) && t.access == Access::Unknown;
            all_persistent &= c.facts[size_t(t.allocation)].lifetime == Lifetime::Persistent;
        }
        c.optimizer_work[w] = unknown_weight && all_persistent;
    }
}

// Whether work `w` comes before every product call (a GEMM, a convolution) of its step: forward's
// first operations. A kernel there that makes a fresh buffer of the step from a parameter reads it
// for forward (an embedding's gather, through a pointer not marked const), whatever reads that
// buffer next; backward's kernels, which write gradients, come after products.
bool before_products(const Context& c, size_t w) {
    const int it = c.flow.work_iteration[w];
    for (size_t k = w; k-- > 0 && c.flow.work_iteration[k] == it;)
        if (is_product_call(c, c.m.work[k])) return false;
    return it >= 0;
}

// Whether kernel `w`'s touch of persistent buffer `a` converts it for a product call: the same kernel
// is the first ever to touch a buffer made for the step, which a product call (a GEMM) then reads as
// an input. That is a parameter cast to the precision a layer computes in (PyTorch's autocast
// copies an FP32 weight into a BF16 tensor for each GEMM that uses it, in forward and again when
// checkpointing recomputes the forward), read through a pointer the trace cannot call read-only.
bool converts_for_product(const Context& c, size_t w, int32_t a) {
    const WorkItem& item = c.m.work[w];
    if (item.kind != WorkItem::Kind::Kernel || item.library_call != kNone) return false;
    for (const Touch& t : item.touches) {
        if (t.allocation == a) continue;
        const Facts& made = c.facts[size_t(t.allocation)];
        const FlowFacts& flow = c.flow.buffers[size_t(t.allocation)];
        if (made.lifetime == Lifetime::Transient && (made.gemm_read || before_products(c, w)) &&
            !flow.touches.empty() && flow.touches.front().work == w)
            return true;
    }
    return false;
}

// A persistent buffer the update rewrites, which every other kernel in the deciding steps only
// converts for a product call (converts_for_product): a parameter, not a gradient. Backward's
// writes of a gradient are products' outputs, reductions of activation gradients, or zeroings; none
// of them makes a fresh operand for a GEMM out of the buffer.
bool converted_parameter(const Context& c, size_t a) {
    if (c.facts[a].lifetime != Lifetime::Persistent) return false;
    size_t conversions = 0;
    for (const FlowTouch& t : c.flow.buffers[a].touches) {
        const int it = c.flow.work_iteration[t.work];
        if (it < 0 || !c.flow.deciding[size_t(it)] || c.optimizer_work[t.work] ||
            c.m.work[t.work].kind != WorkItem::Kind::Kernel)
            continue;
        if (!converts_for_product(c, t.work, int32_t(a))) return false;
        ++conversions;
    }
    return conversions > 0;
}

// Buffers the update touches: optimizer state if nothing else in the steps does, gradients if other
// work of the step produces them; without access hints, position in the step decides.
void tag_update_operands(Context& c) {
    for (size_t a = 0; a < c.facts.size(); ++a) {
        if (!c.tags[a].category.empty()) continue;
        const FlowFacts& f = c.flow.buffers[a];
        bool by_update = false, written_elsewhere = false, read_elsewhere = false, unknown_elsewhere = false;
        int64_t first_elsewhere = -1;  // index of the first other kernel using it (order, not time: runs vary)
        int elsewhere_iteration = -1;
        for (const FlowTouch& t : f.touches) {
            int it = c.flow.work_iteration[t.work];
            const WorkItem& item = c.m.work[t.work];
            if (it < 0 || item.kind != WorkItem::Kind::Kernel) continue;  // copies and sets say nothing of roles
            if (c.optimizer_work[t.work]) {
                by_update = true;
                continue;
            }
            if (first_elsewhere < 0) first_elsewhere = int64_t(t.work), elsewhere_iteration = it;
            if (t.use == Use::Modify || t.use == Use::Overwrite)
                written_elsewhere = true;
            else if (t.use == Use::Read)
                read_elsewhere = true;
            else
                unknown_elsewhere = true;
        }
        if (!by_update) continue;
        if (written_elsewhere && converted_parameter(c, a)) {
            set(c, a, "weights", 0.7, "converted-for-products",
                "rewritten by the update; every other kernel in the steps makes from it a fresh operand of a GEMM "
                "(a parameter cast to the precision the layer computes in)");
        } else if (written_elsewhere) {
            set(c, a, "gradients", 0.9, "produced-in-step-read-by-update",
                "written by backward work in the step and read by the update (the kernels that rewrite the weights)");
        } else if (!read_elsewhere && !unknown_elsewhere) {
            // Made and freed within one step of several, it holds no state from step to step: the
            // update's own intermediate values (an Adam's square roots of the second moments), which
            // the step-local rules below tag as any operation's.
            if (c.facts[a].lifetime == Lifetime::Transient && c.its.iterations.size() >= 2) continue;
            set(c, a, "optimizer_state", 0.85, "update-only",
                "inside the steps only the update uses it, next to the weights and gradients (momentum, Adam moments, "
                "master copies of low-precision weights)");
        } else if (read_elsewhere && !unknown_elsewhere) {
            set(c, a, "weights", 0.75, "updated-read-in-step",
                "rewritten by the update and otherwise only read in the step");
        } else if (elsewhere_iteration >= 0) {
            const Iteration& it = c.its.iterations[size_t(elsewhere_iteration)];
            bool early = first_elsewhere - int64_t(it.first_work) < (int64_t(it.end_work) - int64_t(it.first_work)) / 2;
            if (c.facts[a].lifetime == Lifetime::Persistent && early)
                set(c, a, "weights", 0.6, "update-writes-used-early",
                    "rewritten by the update and used early in the step (forward); no access hints");
            else
                set(c, a, "gradients", 0.6, "update-reads-produced-late",
                    "read by the update and produced late in the step (backward); no access hints");
        }
    }
}

// A buffer the update's state is initialised from: a device-to-device copy inside a step writes
// optimizer state from a buffer that work of the same step wrote before (SGD with momentum makes its
// momentum buffer in the first step by copying the gradient, where later steps read the gradient in
// the update kernels). The state's first value is the update's input: the gradient. Not a buffer a
// product call (a GEMM, a convolution) read earlier in the step: those read activations and weights,
// never a weight gradient; such a source is a pooled sub-range cut too coarsely, holding forward's
// activations before the gradient (a real GPU's first step under expandable segments).
void tag_copied_into_state(Context& c) {
    for (size_t w = 0; w < c.m.work.size(); ++w) {
        const WorkItem& copy = c.m.work[w];
        const int it = c.flow.work_iteration[w];
        if (copy.kind != WorkItem::Kind::CopyDtoD || it < 0) continue;
        bool into_state = false;
        for (const Touch& t : copy.touches)
            into_state |= t.access == Access::Write && c.tags[size_t(t.allocation)].category == "optimizer_state";
        if (!into_state) continue;
        for (const Touch& t : copy.touches) {
            if (t.access != Access::Read || !c.tags[size_t(t.allocation)].category.empty()) continue;
            bool written_before = false, product_input = false;
            for (const FlowTouch& u : c.flow.buffers[size_t(t.allocation)].touches) {
                if (u.work >= w || c.flow.work_iteration[u.work] != it) continue;
                written_before |= c.m.work[u.work].kind == WorkItem::Kind::Kernel && writes(u.use);
                product_input |= u.use == Use::Read && is_product_call(c, c.m.work[u.work]);
            }
            if (written_before && !product_input)
                set(c, size_t(t.allocation), "gradients", 0.7, "copied-into-optimizer-state",
                    "written by work of the step, then copied into optimizer state: the update's state starts from it "
                    "(a momentum buffer made from the gradient in the first step)");
        }
    }
}

// Made in the step and private to one operation: a step-local buffer that only one or two adjacent
// work items use (no library call among them), or (planned once) one refilled and read right away
// by the next work, again and again (kManyRefills, refilled_scratch.h). Not recognised: an operation's
// temporaries that several of its kernels and GEMMs share (docs/tagging.md, limits).
// The most times one buffer is filled from the host in one deciding step: how many (micro-)batches
// arrive per step.
uint32_t batches_per_step(const Context& c) {
    uint32_t most = 0;
    for (const FlowFacts& f : c.flow.buffers) {
        int it = -1;
        uint32_t fills = 0;
        for (const FlowTouch& t : f.touches) {
            int w_it = c.flow.work_iteration[t.work];
            if (w_it < 0 || !c.flow.deciding[size_t(w_it)] || c.m.work[t.work].kind != WorkItem::Kind::CopyHtoD ||
                t.use != Use::Overwrite)
                continue;
            fills = w_it == it ? fills + 1 : 1;
            it = w_it;
            most = std::max(most, fills);
        }
    }
    return most;
}

bool is_operation_temporary(const Context& c, size_t a, uint32_t batches, const std::vector<bool>& forward) {
    const Facts& f = c.facts[a];
    const FlowFacts& flow = c.flow.buffers[a];
    if (flow.touches.empty() || !writes(flow.touches.front().use)) return false;
    // Planned once and refilled for every use (an im2col buffer): persistent, and every value in it
    // read at once. (Within one step a caching allocator's address reused by several tensors looks
    // alike, so a step-local buffer does not count.) Refilled no more often than a batch arrives, it
    // is a planned activation of each micro-batch (written by one operation, read by the next).
    if (f.lifetime == Lifetime::Persistent && flow.most_temp_episodes >= 2 && flow.other_episodes == 0)
        return flow.most_temp_episodes > batches;
    // Inside a block planned once, the scratch is cut per step (written first in every step); it
    // still is refilled many times in its step (an im2col per image and layer).
    // (A use or two besides, such as its zeroing, does not change that.)
    if (f.lifetime == Lifetime::Transient && c.m.allocations[a].id < 0 && flow.most_temp_episodes >= kManyRefills &&
        flow.other_episodes * kManyRefills <= flow.temp_episodes)
        return true;
    // Not a value forward passes on inside a pool (forward_values.h).
    return f.lifetime == Lifetime::Transient && is_temporary(c, f) && !forward_pooled_value(c, forward, a);
}

void tag_made_in_step(Context& c) {
    // Temporaries of one operation: first those one or two adjacent work items use, then those that
    // several kernels and library calls of the same operation share (tagger/temporaries.h).
    size_t n = c.facts.size();
    std::vector<bool> candidate(n), step_local(n), simple(n);
    const uint32_t batches = batches_per_step(c);
    const std::vector<bool> forward = forward_work(c);
    for (size_t a = 0; a < n; ++a) {
        // Outside the steps too: a validation pass's operations make the same temporaries.
        Lifetime life = c.facts[a].lifetime;
        step_local[a] = life != Lifetime::Persistent && life != Lifetime::Unknown && c.m.allocations[a].free_ns;
        candidate[a] = c.tags[a].category.empty();
        bool outside = life == Lifetime::Between || life == Lifetime::Setup || life == Lifetime::Teardown;
        simple[a] =
            candidate[a] && (outside ? is_temporary(c, c.facts[a]) : is_operation_temporary(c, a, batches, forward));
    }
    // An output passed on to the next operation outlives its maker's inputs; a temporary does not.
    for (size_t a = 0; a < n; ++a) {
        if (simple[a] && c.facts[a].lifetime == Lifetime::Transient &&
            !freed_before_producer_inputs(c.m, c.flow, int32_t(a), step_local))
            simple[a] = false;
    }
    c.shared_temporary = find_operation_temporaries(c.m, c.flow, step_local, candidate, simple);
    const std::vector<bool>& shared = c.shared_temporary;
    for (size_t a = 0; a < n; ++a) {
        if (!c.tags[a].category.empty()) continue;
        const Facts& f = c.facts[a];
        bool used_in_steps = c.flow.buffers[a].iterations_used > 0;
        if (!used_in_steps && f.lifetime != Lifetime::Transient) continue;  // tag_remaining explains it
        if (simple[a])
            set(c, a, "workspace", 0.75, "operation-temporary",
                "filled and consumed within one operation: its values are read only by the work right after "
                "the work that wrote them, and it lives no longer than that operation");
        else if (shared[a])
            set(c, a, "workspace", 0.7, "shared-operation-temporary",
                "private to one operation: a packed copy only its library calls read, or made by work that uses "
                "another of the operation's temporaries; freed before the next operation allocates its buffers");
        else if (used_in_steps)
            set(c, a, "activations", 0.85, "carries-data-between-operations",
                "written in each step and read there by other operations (forward results, values kept for "
                "backward, activation gradients), whether it lives one step or the whole run");
    }
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

// Kernels (library calls included) that touch the buffer.
size_t used_by_kernels(const Context& c, const Facts& f) {
    size_t n = 0;
    for (const auto& [w, access] : f.touches) n += c.m.work[w].kind == WorkItem::Kind::Kernel;
    return n;
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
                else if (a < c.shared_temporary.size() && c.shared_temporary[a])
                    set(c, a, "workspace", 0.65, "shared-operation-temporary",
                        "private to one operation: a packed copy only its library calls read, or made by work that "
                        "uses another of the operation's temporaries; freed before the next operation allocates");
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
                else if (a < c.shared_temporary.size() && c.shared_temporary[a])
                    set(c, a, "workspace", 0.6, "shared-operation-temporary",
                        "outside the iterations, private to one operation: a packed copy only its library calls read, "
                        "or "
                        "made by work that uses another of the operation's temporaries");
                else if (c.m.allocations[a].free_ns && used_by_kernels(c, f) >= 2)
                    // A pass before the first or after the last step (validation, evaluation) runs the
                    // model's operations as the steps do; what they pass on is data, as between steps.
                    set(c, a, "activations", 0.6, "pass-outside-steps",
                        "allocated and freed before the first or after the last iteration and used by several kernels "
                        "there (a validation or evaluation pass): data passed between its operations");
                else
                    set(c, a, "other", 0.5, "outside-iterations",
                        "allocated and freed outside the training iterations");
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
        if (c.m.allocations[a].made_by_library_handle) {
            set(c, a, "workspace", 0.9, "library-handle-workspace", library_own_reason(c.m.allocations[a]));
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

// Traces without any data flow (imported profiler traces: no pointer arguments, no library roles)
// leave lifetimes and named ranges only. Weaker evidence, lower confidence.
void tag_from_lifetimes_only(Context& c) {
    const auto& its = c.its.iterations;
    const RangesNamed optimizer_ranges(c.m.ranges, "optimizer");
    for (size_t a = 0; a < c.facts.size(); ++a) {
        const Allocation& alloc = c.m.allocations[a];
        const Facts& f = c.facts[a];
        if (f.lifetime == Lifetime::Persistent) {
            if (alloc.alloc_ns < its.front().begin_ns)
                set(c, a, "weights", 0.5, "lifetime-before-training",
                    "persistent and allocated before the first iteration (no data flow in this trace)");
            else if (optimizer_ranges.contain(alloc.process, alloc.alloc_ns))
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

void add_evidence(Context& c, const TagResult& result) {
    const WorkPhases phase(c.m, c.flow, result.phases, c.optimizer_work);
    for (size_t a = 0; a < c.tags.size(); ++a) c.tags[a].evidence = describe_flow(c.m, c.flow, phase, a);
}

}  // namespace
}  // namespace rules

using namespace rules;

TagResult tag_allocations(const TraceModel& model, const IterationSet& iterations) {
    Context c{
        model, iterations, {}, {}, std::vector<Tag>(model.allocations.size()), build_data_flow(model, iterations)};
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
        // Written by a kernel as far as anyone knows: a non-const pointer or a library output (an extern
        // "C" kernel reading the batch says nothing either way), not a conversion's source (reads_first).
        bool kernel_written = false;
        for (const FlowTouch& t : c.flow.buffers[a].touches)
            kernel_written |= model.work[t.work].kind == WorkItem::Kind::Kernel &&
                              (t.use == Use::Modify || t.use == Use::Overwrite) && !t.reads_first;
        kernel_written &= !model.allocations[a].written_only_through_input_words;  // nor stale struct words
        if (f.library_workspace)
            set(c, a, "workspace", 0.95, "library-workspace", "handed to a library (cuBLAS) as its workspace");
        else if (model.allocations[a].made_by_library_handle && !f.gemm_read)
            set(c, a, "workspace", 0.9, "library-handle-workspace", library_own_reason(model.allocations[a]));
        else if (!kernel_written && ((f.lifetime == Lifetime::Persistent && f.h2d_iterations >= 2) ||
                                     (f.lifetime == Lifetime::Transient && f.first_touch_h2d)))
            set(c, a, "input", 0.9, "copied-in-each-step",
                "filled from the host in each iteration and only read by kernels");
    }
    tag_carried_state(c);
    find_update(c);
    find_update_without_hints(c);
    tag_update_operands(c);
    tag_copied_into_state(c);
    tag_collective_operands(c.m, c.flow, c.optimizer_work, c.tags);  // collectives.h: what a collective's other side is
    tag_copies_for_next_kernels(c);
    tag_refilled_scratch(c);
    tag_made_in_step(c);
    tag_remaining(c);
    find_phases(c, result);
    add_evidence(c, result);
    result.tags = std::move(c.tags);
    result.optimizer_work = std::move(c.optimizer_work);
    return result;
}

}  // namespace tbdprof::tagger
