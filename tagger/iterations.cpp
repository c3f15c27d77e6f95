#include "iterations.h"

#include "tbdprof/step_names.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

namespace tbdprof::tagger {
namespace {

constexpr size_t kMaxKernelsForPeriod = 20000;    // the period search is quadratic; steps repeat early
constexpr double kPeriodTolerance = 0.02;         // a few data-dependent kernels may differ per step
constexpr size_t kMaxKernelsForFallback = 20000;  // the fallback compares periods position by position
constexpr size_t kFallbackCandidates = 12;
constexpr double kBlockTolerance = 0.05;  // a block of kernels is one more step when this close

// The work launched in [begin, end) on `process`, with its device window.
Iteration make_iteration(const TraceModel& m, int64_t begin, int64_t end, int32_t process) {
    Iteration it;
    it.process = process;
    it.begin_ns = begin;
    it.end_ns = end;
    it.core_begin_ns = end;
    auto first = std::lower_bound(m.work.begin(), m.work.end(), begin,
                                  [](const WorkItem& w, int64_t t) { return w.launch_ns < t; });
    it.first_work = size_t(first - m.work.begin());
    it.end_work = it.first_work;
    int64_t device_begin = std::numeric_limits<int64_t>::max(), device_end = 0;
    while (it.end_work < m.work.size() && m.work[it.end_work].launch_ns < end) {
        const WorkItem& w = m.work[it.end_work++];
        if (w.process != process) continue;
        if (w.kind == WorkItem::Kind::Kernel) it.core_begin_ns = std::min(it.core_begin_ns, w.launch_ns);
        device_begin = std::min(device_begin, w.start_ns);
        device_end = std::max(device_end, w.end_ns);
    }
    if (device_end > 0) it.device_begin_ns = device_begin, it.device_end_ns = device_end;
    return it;
}

// Device windows of consecutive spans must not overlap either (work of one step that another stream
// ran late is cut at the next step's first device work).
void separate_device_windows(std::vector<Iteration>& its) {
    for (size_t i = 1; i < its.size(); ++i) {
        Iteration& prev = its[i - 1];
        Iteration& here = its[i];
        if (here.device_end_ns == 0 || prev.device_end_ns == 0) continue;
        if (prev.device_end_ns > here.device_begin_ns)
            prev.device_end_ns = std::max(prev.device_begin_ns, here.device_begin_ns);
    }
}

IterationSet from_ranges(const TraceModel& m, const std::string& range_name) {
    std::vector<steps::NamedRange> ranges;
    for (const auto& r : m.ranges) ranges.push_back({r.process, r.begin_ns, r.end_ns, r.name});
    const steps::StepRanges marked = steps::step_ranges(ranges, range_name);
    IterationSet set;
    for (const auto& [begin, end] : marked.spans)
        set.iterations.push_back(make_iteration(m, begin, end, static_cast<int32_t>(marked.process)));
    if (!set.iterations.empty()) set.source = "nvtx";
    separate_device_windows(set.iterations);
    return set;
}

// How good a set of step boundaries is (each an index into `kernels`: the step begins with that
// kernel and the work just before it). In order of weight: a step boundary does not cut through
// short-lived buffers (activations and per-step gradients live inside one step); a new batch comes
// in (host-to-device copies) and gradients are cleared (sets) just before it; it does not follow a
// device-to-host copy without a new batch (a loss or gradient norm read back mid-step: the host
// waits there, so the wait says nothing); the host waited longest before it (end-of-step work).
// Allocations shorter than one step, as (alloc, free) host times. "Shorter" counts the process's
// kernels launched while the allocation lived, not nanoseconds: a duration changes with the machine's
// load (a host stall at the first launch made an accumulation step's buffers look long-lived and put
// the boundary between micro-batches in some recordings), the order of launches does not.
std::vector<std::pair<int64_t, int64_t>> short_lived_allocations(const TraceModel& m,
                                                                 const std::vector<size_t>& kernels, size_t period) {
    std::vector<int64_t> launches;
    launches.reserve(kernels.size());
    for (size_t k : kernels) launches.push_back(m.work[k].launch_ns);
    std::sort(launches.begin(), launches.end());
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const Allocation& a : m.allocations) {
        if (!a.free_ns) continue;
        auto first = std::lower_bound(launches.begin(), launches.end(), a.alloc_ns);
        auto last = std::lower_bound(launches.begin(), launches.end(), *a.free_ns);
        if (static_cast<size_t>(last - first) < period) out.emplace_back(a.alloc_ns, *a.free_ns);
    }
    return out;
}

// Host time inside library calls of `process` within [begin, end). A call that blocks (a collective
// waiting for the other ranks, as the simulated NCCL's do) is the library's wait, not the host
// finishing a step: between steps it pauses for its own work (freeing, synchronizing, the next batch).
int64_t library_time(const TraceModel& m, int32_t process, int64_t begin, int64_t end) {
    auto call = std::lower_bound(m.library_calls.begin(), m.library_calls.end(), begin,
                                 [](const LibraryCall& c, int64_t t) { return c.begin_ns < t; });
    if (call != m.library_calls.begin()) --call;  // one that began before and may still run
    int64_t inside = 0, covered = begin;
    for (; call != m.library_calls.end() && call->begin_ns < end; ++call) {
        if (call->process != process) continue;
        const int64_t from = std::max({call->begin_ns, begin, covered}), to = std::min(call->end_ns, end);
        if (to > from) inside += to - from, covered = to;
    }
    return inside;
}

// With `cap_first_gap` the host's wait before the first of `starts` counts no more than the longest
// wait before the others. With `steady`, only the starts it marks count.
double boundary_score(const TraceModel& m, const std::vector<size_t>& kernels, const std::vector<size_t>& starts,
                      const std::vector<std::pair<int64_t, int64_t>>& short_lived, bool cap_first_gap = false,
                      const std::vector<bool>* steady = nullptr) {
    double copies = 0, gaps = 0, readbacks = 0, first_gap = 0, longest_other = 0;
    std::vector<int64_t> boundaries;
    for (size_t k : starts) {
        if (k == 0 || k >= kernels.size()) continue;
        size_t prev = kernels[k - 1], here = kernels[k];
        if (steady && !(*steady)[k]) continue;
        // The step may begin as early as the first work after the previous kernel (a new batch is
        // allocated and copied in before the first kernel launches).
        boundaries.push_back(m.work[prev + 1].launch_ns);
        bool h2d = false, d2h = false;
        for (size_t w = prev + 1; w < here; ++w) {
            h2d |= m.work[w].kind == WorkItem::Kind::CopyHtoD;
            d2h |= m.work[w].kind == WorkItem::Kind::CopyDtoH;
            copies += m.work[w].kind == WorkItem::Kind::CopyHtoD ? 1.0 : 0.0;
            copies += m.work[w].kind == WorkItem::Kind::Set ? 0.1 : 0.0;
        }
        if (d2h && !h2d) {
            readbacks += 1;
            continue;
        }
        const double gap =
            double(m.work[here].launch_ns - m.work[prev].launch_ns -
                   library_time(m, m.work[here].process, m.work[prev].launch_ns, m.work[here].launch_ns));
        if (k == starts.front())
            first_gap = gap;
        else
            gaps += gap, longest_other = std::max(longest_other, gap);
    }
    gaps += cap_first_gap && starts.size() > 1 ? std::min(first_gap, longest_other) : first_gap;
    std::sort(boundaries.begin(), boundaries.end());
    double cut = 0;
    for (const auto& [alloc_ns, free_ns] : short_lived) {
        auto b = std::upper_bound(boundaries.begin(), boundaries.end(), alloc_ns);
        cut += b != boundaries.end() && *b < free_ns ? 1.0 : 0.0;
    }
    return -cut * 1e15 + copies * 1e12 - readbacks * 1e11 + gaps;
}

// A batch arrives just before kernel `k`: a host-to-device copy launched since the kernel before.
bool batch_arrives(const TraceModel& m, const std::vector<size_t>& kernels, size_t k) {
    if (k == 0 || k >= kernels.size()) return false;
    for (size_t w = kernels[k - 1] + 1; w < kernels[k]; ++w)
        if (m.work[w].kind == WorkItem::Kind::CopyHtoD) return true;
    return false;
}

// Two batch arrivals `a` < `b` begin micro-batches of one step when the kernels after them begin
// alike, for an eighth of the distance between them and at least 4: the same forward runs again
// (the backward of a later micro-batch may differ: PyTorch adds each parameter's new gradient to the
// one accumulated). A batch copied in two parts (inputs, then the labels before the loss), or a copy
// for other work (gradient clipping's), begins with other kernels.
bool begin_alike(const TraceModel& m, const std::vector<size_t>& kernels, size_t a, size_t b) {
    const size_t wanted = std::max<size_t>(4, (b - a) / 8);
    if (b + wanted > kernels.size()) return false;
    for (size_t i = 0; i < wanted; ++i)
        if (m.work[kernels[a + i]].function != m.work[kernels[b + i]].function) return false;
    return true;
}

// Of the batch arrivals of one step (positions in `kernels`), those that begin micro-batches: whose
// kernels begin like another arrival's.
std::vector<size_t> alike_arrivals(const TraceModel& m, const std::vector<size_t>& kernels,
                                   const std::vector<size_t>& arrivals) {
    std::vector<size_t> micro;
    for (size_t i = 0; i < arrivals.size(); ++i)
        for (size_t j = 0; j < arrivals.size(); ++j)
            if (i != j &&
                begin_alike(m, kernels, std::min(arrivals[i], arrivals[j]), std::max(arrivals[i], arrivals[j]))) {
                micro.push_back(arrivals[i]);
                break;
            }
    return micro;
}

// The batch arrivals in the step of `period` kernels from `start` that begin micro-batches.
std::vector<size_t> micro_batch_arrivals(const TraceModel& m, const std::vector<size_t>& kernels, size_t start,
                                         size_t period) {
    std::vector<size_t> arrivals;
    for (size_t k = start; k < start + period && k < kernels.size(); ++k)
        if (batch_arrives(m, kernels, k)) arrivals.push_back(k);
    return alike_arrivals(m, kernels, arrivals);
}

// Gradient accumulation: a step of `period` kernels holds several micro-batches, each a batch arrival
// and the same forward, and the update after the last one. The micro-batches look alike, so copies
// and host pauses cannot say which arrival begins the step; what does is what comes before it: the
// step's first micro-batch follows the update, kernels that micro-batch does not run, while a later
// one follows the end of the micro-batch before, whose kernels it runs again. Looks at the step from
// `start` (a steady step, after the first one's lazy set-up) and returns the arrival in it that
// begins the step; `start` when the step is not micro-batches or no single arrival follows such
// kernels (an update reusing backward's kernels says nothing).
size_t first_micro_batch(const TraceModel& m, const std::vector<size_t>& kernels, size_t start, size_t period) {
    std::vector<size_t> micro = micro_batch_arrivals(m, kernels, start, period);
    if (micro.size() < 2 || micro.front() + period >= kernels.size()) return start;
    micro.push_back(micro.front() + period);  // the next step's first micro-batch closes the last
    std::optional<size_t> first;
    for (size_t i = 0; i + 1 < micro.size(); ++i) {
        const int32_t before = m.work[kernels[micro[i] - 1]].function;
        bool runs_it = false;
        for (size_t k = micro[i]; k < micro[i + 1] && !runs_it; ++k) runs_it = m.work[kernels[k]].function == before;
        if (runs_it) continue;
        if (first) return start;  // more than one: not a single update before the step
        first = micro[i];
    }
    return first.value_or(start);
}

// The kernels `k` where the `period` kernels before and the `period` after are alike (at most
// kBlockTolerance of them differ, position by position, rounded down: none under 20 kernels, or a
// period of 2 would be "alike" with half of it different): a boundary between two steady steps. The first
// steps may run more or fewer kernels than the others (a lazy first update; DDP's second step
// broadcasts again before forward, after it rebuilt its buckets), so the fixed stride from the start
// of the run lands elsewhere in the later steps; and the end of the set-up (the weights copied in)
// is no step boundary. Empty when no kernel is such a boundary (a run of two or three steps).
std::vector<bool> steady_boundaries(const TraceModel& m, const std::vector<size_t>& kernels, size_t period) {
    const size_t n = kernels.size();
    if (period == 0 || n < 2 * period) return {};
    auto f = [&](size_t index) { return m.work[kernels[index]].function; };
    const size_t allowed = static_cast<size_t>(kBlockTolerance * double(period));  // 0: exactly alike
    std::vector<bool> steady(n, false);
    size_t differ = 0, marked = 0;  // between [k - period, k) and [k, k + period)
    for (size_t i = 0; i < period; ++i) differ += f(i) != f(i + period);
    for (size_t k = period;; ++k) {
        if (differ <= allowed) steady[k] = true, ++marked;
        if (k + period >= n) break;
        differ -= f(k - period) != f(k);
        differ += f(k) != f(k + period);
    }
    if (marked == 0) steady.clear();
    return steady;
}

// Where an iteration starts within the period, for steps at a fixed stride. The boundaries are
// scored only between steady steps (steady_boundaries) when the run has any; an offset none of whose
// boundaries is between steady steps (near the end of a short run) is then not a candidate: with
// nothing scored it would beat every offset whose boundaries cut a buffer.
size_t choose_offset(const TraceModel& m, const std::vector<size_t>& kernels, size_t period) {
    const auto short_lived = short_lived_allocations(m, kernels, period);
    const std::vector<bool> between_steady = steady_boundaries(m, kernels, period);
    double best_score = 0;
    size_t best_offset = 0;
    bool scored = false;
    for (size_t offset = 0; offset < period; ++offset) {
        std::vector<size_t> starts;
        for (size_t k = offset; k < kernels.size(); k += period) starts.push_back(k);
        // The first boundary ends the set-up for every offset but 0: how long the host waited there
        // (the other ranks joining NCCL's initialization, a data set loaded) can outweigh every wait
        // between steps and says nothing about where a step begins; it counts as one of those waits
        // at most.
        if (!between_steady.empty() &&
            std::none_of(starts.begin(), starts.end(), [&](size_t k) { return between_steady[k]; }))
            continue;
        double score =
            boundary_score(m, kernels, starts, short_lived, true, between_steady.empty() ? nullptr : &between_steady);
        if (!scored || score > best_score) best_score = score, best_offset = offset, scored = true;
    }
    // Micro-batches of one step: the one after the update begins it, wherever the host paused.
    const size_t steady = best_offset + period * ((kernels.size() - best_offset) / period / 2);
    if (steady + period > kernels.size()) return best_offset;
    return (best_offset + first_micro_batch(m, kernels, steady, period) - steady) % period;
}

// Blocks of the kernel sequence: one step each where the block matches the step's pattern, and
// the runs of kernels in between (validation passes) as outliers.
struct Block {
    size_t first_kernel = 0;  // index into the process's kernel list
    size_t end_kernel = 0;
    bool training = true;
};

// A first step that allocates and initialises its buffers as it goes (weights filled in the first
// forward, state zeroed before the first update) runs the whole step's pattern with set-up kernels
// in between, too many for the block tolerance. Such a step ends right where the first matched step
// begins: the pattern, with kernels inserted, ending with the kernel just before `end` (the first
// matched step's first kernel), and no more inserted kernels than the step has. A first update may
// also leave out kernels the later ones run: an optimizer that makes its state by copying the first
// gradients instead of updating it (PyTorch's SGD with momentum runs one of its three update
// kernels then); up to a tenth of the pattern may be left out (kernels the pattern has just before
// the one that matches next). Returns its first kernel, or nothing when the kernels before
// `end` are not such a step.
std::optional<size_t> lazy_first_step(const TraceModel& m, const std::vector<size_t>& kernels,
                                      const std::vector<int32_t>& pattern, size_t end) {
    if (pattern.empty() || end == 0 || m.work[kernels[end - 1]].function != pattern.back()) return std::nullopt;
    const size_t may_leave_out = pattern.size() / 10;
    size_t i = pattern.size(), j = end, inserted = 0, left_out = 0;
    while (i > 0 && j > 0 && inserted <= pattern.size()) {
        const int32_t function = m.work[kernels[j - 1]].function;
        size_t skip = 0;  // pattern kernels left out before this one matches
        while (skip <= may_leave_out - left_out && skip < i && pattern[i - 1 - skip] != function) ++skip;
        if (skip < i && skip <= may_leave_out - left_out && pattern[i - 1 - skip] == function) {
            i -= skip + 1, --j, left_out += skip;
        } else {
            --j, ++inserted;
        }
    }
    if (i > 0 || inserted + left_out == 0 || inserted > pattern.size()) return std::nullopt;
    return j;
}

std::vector<Block> match_blocks(const TraceModel& m, const std::vector<size_t>& kernels, size_t offset, size_t middle,
                                size_t period) {
    std::vector<int32_t> pattern;
    for (size_t i = 0; i < period; ++i) pattern.push_back(m.work[kernels[middle + i]].function);
    size_t allowed = std::max<size_t>(1, static_cast<size_t>(kBlockTolerance * double(period)));
    // Aligns the pattern with the kernels from k, allowing a few kernels inserted (a first step's
    // lazy set-up, a data-dependent kernel), left out or different. Returns the kernels consumed, 0
    // when more than `allowed` differ, and how many differed.
    auto align = [&](size_t k, size_t& errors) -> size_t {
        size_t i = 0, j = k;
        errors = 0;
        auto f = [&](size_t index) { return m.work[kernels[index]].function; };
        while (i < period && errors <= allowed) {
            if (j >= kernels.size()) return 0;
            if (f(j) == pattern[i]) {
                ++i, ++j;
            } else if (i > 0 && j + 1 < kernels.size() && f(j + 1) == pattern[i]) {
                ++j, ++errors;  // an extra kernel
            } else if (i + 1 < period && f(j) == pattern[i + 1]) {
                ++i, ++errors;  // a kernel left out
            } else {
                ++i, ++j, ++errors;
            }
        }
        return errors <= allowed ? j - k : 0;
    };
    auto matches = [&](size_t k) {
        size_t errors = 0;
        return align(k, errors);
    };
    // The tail after the last step: teardown, unless it runs the start of the step's pattern (a
    // validation pass after the last step), which is a pass set apart.
    auto forward_pass_tail = [&](size_t k) {
        size_t length = kernels.size() - k, differ = 0;
        for (size_t i = 0; i < length && i < period; ++i) differ += m.work[kernels[k + i]].function != pattern[i];
        return length > allowed && length < period && differ * 10 <= length;
    };
    std::vector<Block> blocks;
    size_t k = offset;
    while (k + period <= kernels.size() + allowed) {
        if (size_t length = matches(k)) {
            blocks.push_back({k, k + length, true});
            k += length;
            continue;
        }
        size_t next = k + 1;
        while (next + period <= kernels.size() + allowed && !matches(next)) ++next;
        if (next + period > kernels.size() + allowed) break;
        // The first start that matches within the tolerance may take in the end of the pass before
        // (a validation pass ends as the step's forward does): a start just after it that matches
        // with fewer differences is the step's.
        size_t errors = 0;
        align(next, errors);
        for (size_t later = next + 1; later <= next + allowed && errors > 0; ++later) {
            size_t e = 0;
            if (align(later, e) && e < errors) next = later, errors = e;
        }
        if (!blocks.empty())
            blocks.push_back({k, next, false});  // before the first step: set-up
        else if (auto first = lazy_first_step(m, kernels, pattern, next))
            blocks.push_back({*first, next, true});
        k = next;
    }
    if (!blocks.empty() && k < kernels.size() && forward_pass_tail(k)) blocks.push_back({k, kernels.size(), false});
    // A first step shorter than the period (kernels left out) ends before the first period's phase:
    // the kernels before the first matched block are looked at as above.
    if (!blocks.empty() && blocks.front().training && blocks.front().first_kernel > 0)
        if (auto first = lazy_first_step(m, kernels, pattern, blocks.front().first_kernel))
            blocks.insert(blocks.begin(), {*first, blocks.front().first_kernel, true});
    return blocks;
}

// Where the step's pattern of `period` kernels begins, near `middle`: the window must repeat in
// the one after it (allowing a few kernels to differ), so it lies inside two consecutive steps and
// not across a validation pass set between them; among such windows, the p nearest the middle, the
// one whose start looks most like a step boundary (boundary_score: the batch arrives there).
// Falls back to the boundary score alone when no window repeats.
size_t pattern_start(const TraceModel& m, const std::vector<size_t>& kernels, size_t middle, size_t period) {
    size_t n = kernels.size();
    auto f = [&](size_t index) { return m.work[kernels[index]].function; };
    size_t allowed = std::max<size_t>(1, static_cast<size_t>(kBlockTolerance * double(period)));
    std::vector<size_t> repeating;  // starts s whose window [s, s+p) matches [s+p, s+2p)
    if (n >= 2 * period) {
        size_t differ = 0;
        for (size_t i = 0; i < period; ++i) differ += f(i) != f(i + period);
        for (size_t s = 0;; ++s) {
            if (differ <= allowed) repeating.push_back(s);
            if (s + 2 * period >= n) break;
            differ -= f(s) != f(s + period);
            differ += f(s + period) != f(s + 2 * period);
        }
    }
    std::sort(repeating.begin(), repeating.end(), [&](size_t a, size_t b) {
        size_t da = a > middle ? a - middle : middle - a, db = b > middle ? b - middle : middle - b;
        return da != db ? da < db : a < b;
    });
    if (repeating.size() > period) repeating.resize(period);
    if (repeating.empty())
        for (size_t shift = 0; shift < period && middle + shift < n; ++shift) repeating.push_back(middle + shift);
    const auto short_lived = short_lived_allocations(m, kernels, period);
    size_t best = repeating.empty() ? middle : repeating.front();
    double best_score = 0;
    for (size_t i = 0; i < repeating.size(); ++i) {
        double score = boundary_score(m, kernels, {repeating[i]}, short_lived);
        if (i == 0 || score > best_score) best_score = score, best = repeating[i];
    }
    // Micro-batches of one step: the one after the update begins it (first_micro_batch), not an
    // arrival the first step's lazy set-up made look like a boundary (optimizer state zeroed by
    // sets); taken when its window repeats too.
    const size_t first = first_micro_batch(m, kernels, best, period);
    if (first != best && first + 2 * period <= n) {
        size_t differ = 0;
        for (size_t i = 0; i < period; ++i) differ += f(first + i) != f(first + i + period);
        if (differ <= allowed) best = first;
    }
    return best;
}

// ---- Steps from repetition: the busiest process's kernels, a period chosen, blocks, host spans ----

// The process whose kernel sequence is searched for a repeating step.
struct Run {
    const TraceModel& m;
    int32_t process = 0;
    const std::vector<size_t>& kernels;  // indices into m.work of the process's kernels, in launch order
    std::vector<int32_t> sequence;       // their functions, the first kMaxKernelsForPeriod
    int32_t function(size_t k) const { return m.work[kernels[k]].function; }
};

// A period tried as the step's length: where steps begin within it, the blocks matched, the kernels
// the training blocks cover, and the kernels in passes set apart that are not the step's forward.
struct Candidate {
    size_t period = 0, offset = 0, cover = 0, foreign = 0;
    std::vector<Block> blocks;
};

// The functions of the candidate's first training block.
std::vector<int32_t> pattern_of(const Run& run, const Candidate& c) {
    std::vector<int32_t> functions;
    for (const Block& b : c.blocks)
        if (b.training) {
            for (size_t k = b.first_kernel; k < b.end_kernel; ++k) functions.push_back(run.function(k));
            break;
        }
    return functions;
}

// A pass set apart (validation) runs the step's forward kernels: the start of the step's pattern.
// Kernels that run between repetitions but are not that (the update after accumulated micro-batches,
// which may reuse backward's elementwise kernels) are part of the step, and this period is not the
// step's. Counts them. (Where the pattern may begin elsewhere in the step than forward does, every
// start in it is tried, cyclically; where it begins with the step (`anchored`), only the first few.)
size_t foreign_kernels(const Run& run, const Candidate& c, bool anchored) {
    const std::vector<int32_t> pattern = pattern_of(run, c);
    const size_t tolerated = std::max<size_t>(1, size_t(kBlockTolerance * double(c.period)));
    const size_t starts = anchored ? std::min(pattern.size(), tolerated + 1) : pattern.size();
    size_t foreign = 0;
    for (const Block& b : c.blocks) {
        if (b.training || pattern.empty()) continue;
        size_t length = b.end_kernel - b.first_kernel, least = length;
        for (size_t start = 0; start < starts && least * 4 > length; ++start) {
            size_t differ = 0;
            for (size_t k = 0; k < length && differ < least; ++k)
                differ += length > pattern.size() ||
                          run.function(b.first_kernel + k) != pattern[(start + k) % pattern.size()];
            least = std::min(least, differ);
        }
        if (least * 4 > length) foreign += least;
    }
    return foreign;
}

// Matches the run against period `p`. `offset`: where steps begin within the period; chosen from
// the kernels when not given.
Candidate evaluate(const Run& run, size_t p, std::optional<size_t> offset = std::nullopt) {
    const std::vector<size_t>& kernels = run.kernels;
    Candidate c;
    c.period = p;
    c.offset = offset ? *offset : choose_offset(run.m, kernels, p);
    // The pattern is a block from the middle of the run: the first step often differs (lazy set-up).
    size_t middle = c.offset + p * ((kernels.size() - c.offset) / p / 2);
    if (middle + p > kernels.size()) return c;
    c.blocks = match_blocks(run.m, kernels, c.offset, middle, p);
    // Passes set apart shift the steps that follow, so the fixed-stride boundary does not hold
    // after them. Then the boundary is found again inside one block (where its batch arrives)
    // and the run is matched again against the pattern starting there.
    bool outliers = std::any_of(c.blocks.begin(), c.blocks.end(), [](const Block& b) { return !b.training; });
    bool anchored = false;  // the pattern begins where the batch arrives: where forward begins
    if (outliers) {
        // The pattern must be one step, not straddle a pass: only starts whose p kernels repeat
        // in the next p (two training steps in a row) are tried, the p nearest the middle.
        size_t start = pattern_start(run.m, kernels, middle, p);
        if (start + p <= kernels.size()) c.blocks = match_blocks(run.m, kernels, 0, start, p), anchored = true;
    }
    size_t steps = 0;
    for (const Block& b : c.blocks)
        if (b.training) c.cover += b.end_kernel - b.first_kernel, ++steps;
    if (steps < 2) c.cover = 0;
    c.foreign = foreign_kernels(run, c, anchored);
    return c;
}

// Periods up to `limit`, by the share of positions where the sequence matches itself shifted by
// the period (best first, then the smaller period).
std::vector<std::pair<double, size_t>> periods_by_match(const std::vector<int32_t>& sequence, size_t limit) {
    const size_t n = sequence.size();
    std::vector<std::pair<double, size_t>> ratios;
    for (size_t p = 2; p <= limit && p + 1 < n; ++p) {
        size_t same = 0;
        for (size_t i = 0; i + p < n; ++i) same += sequence[i] == sequence[i + p];
        ratios.push_back({double(same) / double(n - p), p});
    }
    std::sort(ratios.begin(), ratios.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    return ratios;
}

// Steps interleaved with other passes (validation every few steps) repeat exactly only with the
// passes included (three steps and a validation pass make one period). Among the smaller periods
// that match best position by position, the one whose blocks, matched one by one with the passes
// set apart, cover the most kernels. `exact`: the exact period's candidate (period 0 when none).
Candidate best_smaller_period(const Run& run, const Candidate& exact) {
    // A step that repeats between the passes fits at least twice into the exact period.
    const size_t limit = exact.period ? exact.period / 2 : run.sequence.size() / 3;
    const auto ratios = periods_by_match(run.sequence, limit);
    Candidate best;
    for (size_t c = 0; c < ratios.size() && c < kFallbackCandidates; ++c) {
        const size_t p = ratios[c].second;
        Candidate candidate = evaluate(run, p);
        if (candidate.foreign > 0) continue;
        // The smaller period must also hold where the exact period's steps begin: the micro-batches
        // of one accumulation step look alike, so among its own offsets the host's pauses (load)
        // may choose one where the update kernels hide inside matched blocks (1 recording in 6).
        if (exact.period && candidate.offset != exact.offset % p) {
            const Candidate aligned = evaluate(run, p, exact.offset % p);
            if (aligned.foreign > 0 || aligned.cover == 0) continue;
        }
        if (candidate.cover > best.cover || (candidate.cover == best.cover && candidate.period < best.period))
            best = std::move(candidate);
    }
    return best;
}

// The step's period: the exact one, unless a smaller one covers nearly as many kernels.
Candidate choose_period(const Run& run) {
    Candidate chosen;
    if (size_t period = find_period(run.sequence, kPeriodTolerance)) chosen = evaluate(run, period);
    if (run.kernels.size() > kMaxKernelsForFallback) return chosen;
    Candidate best = best_smaller_period(run, chosen);
    bool enough =
        chosen.period ? double(best.cover) >= 0.8 * double(chosen.cover) : best.cover * 2 >= run.kernels.size();
    if (best.cover > 0 && enough) chosen = std::move(best);
    return chosen;
}

// Work launched at one host instant (one CUDA graph launch) is one host step: a pattern that
// repeats inside a graph (two identical layers) must not split it, or the host spans would tie.
std::vector<Block> join_graph_launches(const Run& run, const std::vector<Block>& matched) {
    std::vector<Block> blocks;
    for (const Block& block : matched) {
        const bool same_launch = !blocks.empty() && blocks.back().end_kernel == block.first_kernel &&
                                 run.m.work[run.kernels[block.first_kernel]].launch_ns ==
                                     run.m.work[run.kernels[block.first_kernel - 1]].launch_ns;
        if (!same_launch) {
            blocks.push_back(block);
            continue;
        }
        blocks.back().end_kernel = block.end_kernel;
        blocks.back().training = blocks.back().training || block.training;
    }
    return blocks;
}

// Host spans of the blocks. A block owns the work from its first kernel back to just after the
// previous block's last kernel, except the device-to-host copies right after that kernel (the
// previous step's loss read back); it owns the work after its own last kernel up to the next
// block. A checkpoint save (far more device-to-host copies after a step than after the others)
// becomes a non-training span of its own.
struct HostSpans {
    const Run& run;
    const std::vector<Block>& blocks;
    std::vector<size_t> trailing = {};  // per block: the read-backs after it (count_trailing_readbacks)
    size_t typical = 0;                 // the median of trailing over training blocks
    struct Piece {
        int64_t begin;
        bool training;
    };
    std::vector<Piece> pieces = {};               // where each span begins, in order
    std::optional<size_t> final_save_first = {};  // first work item of a save after the last block
};

// D2H copies right after each block's last kernel, with the sets launched before the last of them
// (gradients zeroed right after the update, then the loss read back: the step's closing work).
void count_trailing_readbacks(HostSpans& s) {
    const TraceModel& m = s.run.m;
    const std::vector<size_t>& kernels = s.run.kernels;
    s.trailing.assign(s.blocks.size(), 0);
    for (size_t b = 0; b < s.blocks.size(); ++b) {
        size_t w = kernels[s.blocks[b].end_kernel - 1] + 1;
        size_t limit = s.blocks[b].end_kernel < kernels.size() ? kernels[s.blocks[b].end_kernel] : m.work.size();
        for (size_t n = 0; w < limit; ++w) {
            const WorkItem& item = m.work[w];
            if (item.process != s.run.process) continue;
            if (item.kind != WorkItem::Kind::CopyDtoH && item.kind != WorkItem::Kind::Set) break;
            ++n;
            if (item.kind == WorkItem::Kind::CopyDtoH) s.trailing[b] = n;
        }
    }
    std::vector<size_t> sorted;
    for (size_t b = 0; b < s.blocks.size(); ++b)
        if (s.blocks[b].training) sorted.push_back(s.trailing[b]);
    std::sort(sorted.begin(), sorted.end());
    s.typical = sorted.empty() ? 0 : sorted[sorted.size() / 2];
}

// A span begins where the host finished with the one before: right after the last launch before
// its first work item `first` (or after a read-back the host waited for), so the host's preparation
// of a step (the next batch) counts in that step.
int64_t span_begin(const HostSpans& s, size_t first) {
    const TraceModel& m = s.run.m;
    int64_t begin = m.work[first].launch_ns;
    for (size_t w = first; w-- > 0;) {
        if (m.work[w].process != s.run.process) continue;
        int64_t done = m.work[w].kind == WorkItem::Kind::CopyDtoH ? m.work[w].end_ns : m.work[w].launch_ns + 1;
        // A wait for the device after that launch (the step's closing synchronize) is its end.
        auto wait = std::lower_bound(m.host_waits.begin(), m.host_waits.end(), m.work[w].launch_ns,
                                     [](const Range& r, int64_t t) { return r.begin_ns < t; });
        for (; wait != m.host_waits.end() && wait->begin_ns < m.work[first].launch_ns; ++wait)
            if (wait->process == s.run.process) done = std::max(done, std::min(wait->end_ns, m.work[first].launch_ns));
        begin = std::min(begin, std::max(done, s.pieces.empty() ? done : s.pieces.back().begin + 1));
        break;
    }
    return begin;
}

// From work item `w`, past `count` of the process's work items and any other process's after them.
size_t skip_own_work(const Run& run, size_t w, size_t end, size_t count) {
    for (size_t n = 0; w < end && n < count; ++w) n += run.m.work[w].process == run.process;
    while (w < end && run.m.work[w].process != run.process) ++w;
    return w;
}

// Where each block's span begins, with a checkpoint save before it as a span of its own.
void place_pieces(HostSpans& s) {
    const std::vector<size_t>& kernels = s.run.kernels;
    for (size_t b = 0; b < s.blocks.size(); ++b) {
        size_t first = kernels[s.blocks[b].first_kernel];
        if (s.blocks[b].first_kernel > 0) {
            const size_t after_previous = kernels[s.blocks[b].first_kernel - 1] + 1;
            // A step keeps its usual number of read-backs; a pass set apart all of them, unless
            // there are far more than a step has (a checkpoint saved after the pass).
            bool save = b > 0 && s.trailing[b - 1] > s.typical + 2;
            size_t skip = 0;
            if (b > 0)
                skip = s.blocks[b - 1].training || save ? std::min(s.trailing[b - 1], s.typical) : s.trailing[b - 1];
            size_t w = skip_own_work(s.run, after_previous, first, skip);
            if (save) {
                // The excess read-backs after the previous step or pass: a checkpoint save.
                s.pieces.push_back({span_begin(s, w), false});
                w = skip_own_work(s.run, after_previous, first, s.trailing[b - 1]);
            }
            first = w;
        }
        s.pieces.push_back({b == 0 ? s.run.m.work[first].launch_ns : span_begin(s, first), s.blocks[b].training});
    }
    // A checkpoint save after the last step too.
    if (!s.blocks.empty() && s.trailing[s.blocks.size() - 1] > s.typical + 2) {
        const size_t w =
            skip_own_work(s.run, kernels[s.blocks.back().end_kernel - 1] + 1, s.run.m.work.size(), s.typical);
        if (w < s.run.m.work.size()) s.final_save_first = w;
    }
}

// Where the last span ends when no save follows: after its read-backs, before the next
// host-to-device copy or kernel.
int64_t last_span_end(const HostSpans& s) {
    const TraceModel& m = s.run.m;
    const std::vector<size_t>& kernels = s.run.kernels;
    size_t last = kernels[s.blocks.back().end_kernel - 1];
    size_t limit = s.blocks.back().end_kernel < kernels.size() ? kernels[s.blocks.back().end_kernel] : m.work.size();
    size_t w = last + 1;
    while (w < limit && m.work[w].kind != WorkItem::Kind::CopyHtoD) ++w;
    return w < m.work.size() ? m.work[w].launch_ns : m.work[last].end_ns + 1;
}

// The spans of `s.pieces`, each up to the next, and the save after the last step: its read-backs.
IterationSet make_spans(const HostSpans& s) {
    const TraceModel& m = s.run.m;
    IterationSet set;
    set.source = "repetition";
    for (size_t i = 0; i < s.pieces.size(); ++i) {
        int64_t end = i + 1 < s.pieces.size() ? s.pieces[i + 1].begin
                      : s.final_save_first    ? span_begin(s, *s.final_save_first)
                                              : last_span_end(s);
        end = std::max(end, s.pieces[i].begin + 1);
        Iteration it = make_iteration(m, s.pieces[i].begin, end, s.run.process);
        (s.pieces[i].training ? set.iterations : set.non_training).push_back(it);
    }
    if (s.final_save_first) {
        size_t w = *s.final_save_first;
        while (w < m.work.size() && (m.work[w].kind == WorkItem::Kind::CopyDtoH || m.work[w].process != s.run.process))
            ++w;
        int64_t begin = span_begin(s, *s.final_save_first);
        int64_t end = w < m.work.size() ? m.work[w].launch_ns : m.work[w - 1].end_ns + 1;
        set.non_training.push_back(make_iteration(m, begin, std::max(end, begin + 1), s.run.process));
    }
    return set;
}

IterationSet from_repetition(const TraceModel& m) {
    std::map<int32_t, std::vector<size_t>> kernels_by_process;
    for (size_t i = 0; i < m.work.size(); ++i)
        if (m.work[i].kind == WorkItem::Kind::Kernel) kernels_by_process[m.work[i].process].push_back(i);
    IterationSet none;
    if (kernels_by_process.empty()) {
        none.note = "the trace has no kernels";
        return none;
    }
    const auto& busiest =
        *std::max_element(kernels_by_process.begin(), kernels_by_process.end(),
                          [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    Run run{m, busiest.first, busiest.second, {}};
    for (size_t i = 0; i < run.kernels.size() && i < kMaxKernelsForPeriod; ++i) run.sequence.push_back(run.function(i));
    const std::vector<Block> blocks = join_graph_launches(run, choose_period(run).blocks);
    if (blocks.empty()) {
        none.note = "the kernel sequence does not repeat (one pass, or inference)";
        return none;
    }
    HostSpans spans{run, blocks};
    count_trailing_readbacks(spans);
    place_pieces(spans);
    IterationSet set = make_spans(spans);
    if (set.iterations.size() < 2) {
        none.note = "fewer than two repetitions of the kernel sequence";
        return none;
    }
    separate_device_windows(set.iterations);
    return set;
}

}  // namespace

size_t find_period(const std::vector<int32_t>& sequence, double tolerance) {
    // A training step repeats almost exactly; motifs inside it (layers, time steps) repeat too, but
    // break at phase changes. So take the best-matching period and the smallest one nearly as good:
    // the first guess "smallest period within tolerance" would pick an LSTM's time step.
    // The first quarter is left out of the comparison: set-up kernels and a first step that differs
    // (lazy initialization) are not part of the steady pattern.
    size_t n = sequence.size();
    size_t skip = n / 4;
    std::vector<std::pair<size_t, double>> candidates;
    double best = 1.0;
    for (size_t p = 1; p <= n / 2; ++p) {
        if (n < p + skip + 1) break;
        size_t compared = n - p - skip;
        size_t allowed = static_cast<size_t>(tolerance * double(compared));
        size_t mismatches = 0;
        for (size_t i = skip; i + p < n && mismatches <= allowed; ++i) mismatches += sequence[i] != sequence[i + p];
        if (mismatches > allowed) continue;
        double ratio = double(mismatches) / double(compared);
        candidates.push_back({p, ratio});
        best = std::min(best, ratio);
        // A perfect match ends the search: no later period can beat it, and the answer is the
        // first candidate within 0.002 of it, found by now (a sequence of one kernel repeated
        // matched at every period, n^2/2 comparisons).
        if (mismatches == 0) break;
    }
    for (const auto& [p, ratio] : candidates)
        if (ratio <= best + 0.002) return p;
    return 0;
}

std::vector<size_t> micro_batch_starts(const TraceModel& m, const IterationSet& steps) {
    std::map<int32_t, std::vector<size_t>> kernels_by_process;
    for (size_t i = 0; i < m.work.size(); ++i)
        if (m.work[i].kind == WorkItem::Kind::Kernel) kernels_by_process[m.work[i].process].push_back(i);
    std::vector<size_t> starts;
    for (const Iteration& step : steps.iterations) {
        const auto found = kernels_by_process.find(step.process);
        if (found == kernels_by_process.end()) continue;
        const std::vector<size_t>& kernels = found->second;
        // The step's kernels, as positions in the process's list (batch_arrives looks back to the
        // kernel before each, which may be the step before's).
        const size_t first =
            size_t(std::lower_bound(kernels.begin(), kernels.end(), step.first_work) - kernels.begin());
        const size_t end = size_t(std::lower_bound(kernels.begin(), kernels.end(), step.end_work) - kernels.begin());
        // The first step's batch may arrive before the run's first kernel, with no kernel before it.
        std::vector<size_t> arrivals;
        for (size_t k = first; k < end; ++k) {
            bool arrives = batch_arrives(m, kernels, k);
            for (size_t w = 0; k == 0 && !arrives && w < kernels[0]; ++w)
                arrives = m.work[w].kind == WorkItem::Kind::CopyHtoD && m.work[w].process == step.process;
            if (arrives) arrivals.push_back(k);
        }
        const std::vector<size_t> micro = alike_arrivals(m, kernels, arrivals);
        if (micro.size() < 2) continue;
        for (size_t k : micro) {
            if (k == micro.front()) continue;  // the step's first micro-batch
            size_t w = kernels[k - 1] + 1;
            while (w < kernels[k] && !(m.work[w].kind == WorkItem::Kind::CopyHtoD && m.work[w].process == step.process))
                ++w;
            starts.push_back(w);
        }
    }
    std::sort(starts.begin(), starts.end());
    return starts;
}

IterationSet detect_iterations(const TraceModel& model, const std::string& range_name) {
    IterationSet from_nvtx = from_ranges(model, range_name);
    if (!from_nvtx.iterations.empty()) return from_nvtx;
    IterationSet found = from_repetition(model);
    if (!range_name.empty() && found.iterations.empty())
        found.note = "no range matches '" + range_name + "' and " + found.note;
    return found;
}

}  // namespace tbdprof::tagger
