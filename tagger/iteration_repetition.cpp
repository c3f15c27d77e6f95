// Steps found from the repeating structure of the busiest process's kernel sequence: a period chosen,
// the sequence matched block by block against the step's pattern, host spans laid over the blocks.
#include "iteration_finders.h"
#include "iterations.h"

#include <algorithm>
#include <optional>

namespace tbdprof::tagger {
namespace {

constexpr size_t kMaxKernelsForPeriod = 20000;    // the period search is quadratic; steps repeat early
constexpr double kPeriodTolerance = 0.02;         // a few data-dependent kernels may differ per step
constexpr size_t kMaxKernelsForFallback = 20000;  // the fallback compares periods position by position
constexpr size_t kFallbackCandidates = 12;

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
            // A first step found before k may end before it: the kernels in between begin this step.
            const size_t begin = blocks.empty() ? k : std::min(k, blocks.back().end_kernel);
            blocks.push_back({begin, k + length, true});
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
            blocks.push_back({first->first_kernel, first->end_kernel, true});
        k = next;
    }
    if (!blocks.empty() && k < kernels.size() && forward_pass_tail(k)) blocks.push_back({k, kernels.size(), false});
    // A first step shorter than the period (kernels left out) ends before the first period's phase:
    // the kernels before the first matched block are looked at as above.
    if (blocks.empty() || !blocks.front().training || blocks.front().first_kernel == 0) return blocks;
    const size_t first_matched = blocks.front().first_kernel;
    if (auto first = lazy_first_step(m, kernels, pattern, first_matched)) {
        blocks.front().first_kernel = first->end_kernel;
        std::vector<Block> with_first{Block{first->first_kernel, first->end_kernel, true}};
        with_first.insert(with_first.end(), blocks.begin(), blocks.end());
        return with_first;
    }
    return blocks;
}

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

}  // namespace

IterationSet from_repetition(const TraceModel& m) {
    const std::map<int32_t, std::vector<size_t>> kernels = kernels_by_process(m);
    IterationSet none;
    if (kernels.empty()) {
        none.note = "the trace has no kernels";
        return none;
    }
    const auto& busiest = *std::max_element(
        kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    Run run{m, busiest.first, busiest.second, {}};
    for (size_t i = 0; i < run.kernels.size() && i < kMaxKernelsForPeriod; ++i) run.sequence.push_back(run.function(i));
    const std::vector<Block> blocks = join_graph_launches(run, choose_period(run).blocks);
    if (blocks.empty()) {
        none.note = "the kernel sequence does not repeat (one pass, or inference)";
        return none;
    }
    IterationSet set = spans_of_blocks(m, run.process, run.kernels, blocks);
    if (set.iterations.size() < 2) {
        none.note = "fewer than two repetitions of the kernel sequence";
        return none;
    }
    separate_device_windows(set.iterations);
    return set;
}

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

}  // namespace tbdprof::tagger
