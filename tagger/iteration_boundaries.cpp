// Where a step begins within a period of the kernel sequence: boundaries scored by what the run shows
// around them (batch arrivals, buffers cut, host waits).
#include "iteration_finders.h"

#include <algorithm>

namespace tbdprof::tagger {
namespace {

// How the process's buffers live, counted in its kernels launched while each was alive, not in
// nanoseconds: a duration changes with the machine's load (a host stall at the first launch made an
// accumulation step's buffers look long-lived and put the boundary between micro-batches in some
// recordings), the order of launches does not.
struct BufferLives {
    // Allocations shorter than one step, as (alloc, free) host times.
    std::vector<std::pair<int64_t, int64_t>> short_lived;
    // Per kernel index: the allocations alive over exactly one period of kernels that begin with it
    // (made after the kernel before it launched, freed before the kernel a period later launched): a
    // step's own buffers (the batch, the activations) made before its first kernel and freed after
    // its last, or a batch kept until the next one replaces it. Each marks where a step begins.
    std::vector<uint32_t> one_step_from;
};

BufferLives buffer_lives(const TraceModel& m, const std::vector<size_t>& kernels, size_t period) {
    std::vector<int64_t> launches;
    launches.reserve(kernels.size());
    for (size_t k : kernels) launches.push_back(m.work[k].launch_ns);
    std::sort(launches.begin(), launches.end());
    const int32_t process = kernels.empty() ? 0 : m.work[kernels.front()].process;
    BufferLives lives;
    lives.one_step_from.assign(kernels.size(), 0);
    for (const Allocation& a : m.allocations) {
        if (!a.free_ns) continue;
        auto first = std::lower_bound(launches.begin(), launches.end(), a.alloc_ns);
        auto last = std::lower_bound(launches.begin(), launches.end(), *a.free_ns);
        const auto alive = static_cast<size_t>(last - first);
        if (alive < period) lives.short_lived.emplace_back(a.alloc_ns, *a.free_ns);
        if (alive == period && a.process == process) ++lives.one_step_from[size_t(first - launches.begin())];
    }
    return lives;
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

// How good a set of step boundaries is (each an index into `kernels`: the step begins with that
// kernel and the work just before it). In order of weight: a step boundary does not cut through
// short-lived buffers (activations and per-step gradients live inside one step); a new batch comes
// in (host-to-device copies) and gradients are cleared (sets) just before it; it does not follow a
// device-to-host copy without a new batch (a loss or gradient norm read back mid-step: the host
// waits there, so the wait says nothing); the host waited longest before it (end-of-step work).
// With `cap_first_gap` the host's wait before the first of `starts` counts no more than the longest
// wait before the others. With `steady`, only the starts it marks count. Below the read-backs and above
// the host's waits: a step's own buffers begin with it (BufferLives::one_step_from), so a stall inside
// a step on a loaded machine does not outweigh them when nothing else (a copy, a set) marks the batch.
double boundary_score(const TraceModel& m, const std::vector<size_t>& kernels, const std::vector<size_t>& starts,
                      const BufferLives& lives, bool cap_first_gap = false, const std::vector<bool>* steady = nullptr) {
    double copies = 0, gaps = 0, readbacks = 0, first_gap = 0, longest_other = 0, own_buffers = 0;
    std::vector<int64_t> boundaries;
    for (size_t k : starts) {
        if (k == 0 || k >= kernels.size()) continue;
        size_t prev = kernels[k - 1], here = kernels[k];
        if (steady && !(*steady)[k]) continue;
        own_buffers += lives.one_step_from[k];
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
    for (const auto& [alloc_ns, free_ns] : lives.short_lived) {
        auto b = std::upper_bound(boundaries.begin(), boundaries.end(), alloc_ns);
        cut += b != boundaries.end() && *b < free_ns ? 1.0 : 0.0;
    }
    return -cut * 1e15 + copies * 1e12 - readbacks * 1e11 + own_buffers * 1e10 + gaps;
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

}  // namespace

// Where an iteration starts within the period, for steps at a fixed stride. The boundaries are
// scored only between steady steps (steady_boundaries) when the run has any; an offset none of whose
// boundaries is between steady steps (near the end of a short run) is then not a candidate: with
// nothing scored it would beat every offset whose boundaries cut a buffer.
size_t choose_offset(const TraceModel& m, const std::vector<size_t>& kernels, size_t period) {
    const BufferLives lives = buffer_lives(m, kernels, period);
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
            boundary_score(m, kernels, starts, lives, true, between_steady.empty() ? nullptr : &between_steady);
        if (!scored || score > best_score) best_score = score, best_offset = offset, scored = true;
    }
    // Micro-batches of one step: the one after the update begins it, wherever the host paused.
    const size_t steady = best_offset + period * ((kernels.size() - best_offset) / period / 2);
    if (steady + period > kernels.size()) return best_offset;
    return (best_offset + first_micro_batch(m, kernels, steady, period) - steady) % period;
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
    const BufferLives lives = buffer_lives(m, kernels, period);
    size_t best = repeating.empty() ? middle : repeating.front();
    double best_score = 0;
    for (size_t i = 0; i < repeating.size(); ++i) {
        double score = boundary_score(m, kernels, {repeating[i]}, lives);
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

}  // namespace tbdprof::tagger
