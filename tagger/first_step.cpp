// The first training step, found before the first step that matches the steady pattern: a step that
// initialises as it goes (runs the pattern with set-up kernels in between) or runs a variant of it
// (leaves out kernels, runs other variants of some), which the block tolerance does not take in.
#include "iteration_finders.h"

#include <algorithm>

namespace tbdprof::tagger {
namespace {

// Longer patterns are matched by the greedy scan only: the alignment below costs pattern x 2 pattern.
constexpr size_t kMaxAlignedPattern = 4096;

// The greedy scan backwards from `end`: the pattern, with kernels inserted, ending with the kernel
// just before `end`, no more inserted kernels than the step has, and up to a tenth of the pattern left
// out (kernels the pattern has just before the one that matches next: PyTorch's SGD with momentum runs
// one of its three update kernels in its first step, making its state by copying the gradients).
std::optional<size_t> greedy_first_step(const TraceModel& m, const std::vector<size_t>& kernels,
                                        const std::vector<int32_t>& pattern, size_t end) {
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

// The greedy scan takes the first match it sees, so a kernel of another variant (an elementwise
// kernel of another vector width, chosen by the alignment of fresh buffers) next to a kernel left out
// (one all-reduce of the whole model in DDP's first step instead of one per bucket) makes it give up.
// Here the best alignment instead: the most pattern kernels in order (a longest common subsequence)
// among the kernels before `end` (at most twice the pattern: no more inserted kernels than the step
// has), the step beginning where the shortest such stretch does. At most a fifth of the pattern may be
// missing there, left out or replaced by other variants.
std::optional<size_t> aligned_first_step(const TraceModel& m, const std::vector<size_t>& kernels,
                                         const std::vector<int32_t>& pattern, size_t end) {
    const size_t p = pattern.size(), window = std::min(end, 2 * p);
    if (p == 0 || p > kMaxAlignedPattern) return std::nullopt;
    // Both read backwards from the end: row i holds, for every stretch of the last j kernels, how many
    // of the pattern's last i kernels it holds in order.
    std::vector<size_t> row(window + 1, 0), next(window + 1, 0);
    for (size_t i = 1; i <= p; ++i) {
        for (size_t j = 1; j <= window; ++j) {
            const bool same = m.work[kernels[end - j]].function == pattern[p - i];
            next[j] = same ? row[j - 1] + 1 : std::max(row[j], next[j - 1]);
        }
        std::swap(row, next);
    }
    const size_t matched = row[window];
    if ((p - matched) * 5 > p) return std::nullopt;
    const size_t length = static_cast<size_t>(std::find(row.begin(), row.end(), matched) - row.begin());
    if (length - matched > p) return std::nullopt;         // more inserted kernels than the step has
    if (length == p && matched == p) return std::nullopt;  // the pattern itself: a matched block
    return end - length;
}

}  // namespace

// Before the first matched step, the first step ends either right where it begins, or up to the
// block tolerance's kernels earlier: those then begin the second step, kernels it alone runs before
// its forward (DDP broadcasts the order of the buckets it rebuilt after the first step), which the
// block matching takes in only after a step's first kernel. Greedy first, so that what it found
// before stays as it was; then the alignment.
std::optional<FirstStep> lazy_first_step(const TraceModel& m, const std::vector<size_t>& kernels,
                                         const std::vector<int32_t>& pattern, size_t end) {
    if (pattern.empty()) return std::nullopt;
    const size_t allowed = std::max<size_t>(1, static_cast<size_t>(kBlockTolerance * double(pattern.size())));
    for (size_t lead = 0; lead <= allowed && lead < end; ++lead) {
        const size_t step_end = end - lead;
        if (m.work[kernels[step_end - 1]].function != pattern.back()) continue;
        if (auto first = greedy_first_step(m, kernels, pattern, step_end)) return FirstStep{*first, step_end};
    }
    for (size_t lead = 0; lead <= allowed && lead < end; ++lead) {
        const size_t step_end = end - lead;
        if (m.work[kernels[step_end - 1]].function != pattern.back()) continue;
        if (auto first = aligned_first_step(m, kernels, pattern, step_end)) return FirstStep{*first, step_end};
    }
    return std::nullopt;
}

}  // namespace tbdprof::tagger
