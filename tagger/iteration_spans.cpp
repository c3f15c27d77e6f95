// Host spans of the step blocks found in a kernel sequence: where each training step (and each pass
// set apart) begins and ends in host time.
#include "iteration_finders.h"

#include <algorithm>
#include <optional>

namespace tbdprof::tagger {
namespace {

// Host spans of the blocks. A block owns the work from its first kernel back to just after the
// previous block's last kernel, except the device-to-host copies right after that kernel (the
// previous step's loss read back); it owns the work after its own last kernel up to the next
// block. A checkpoint save (far more device-to-host copies after a step than after the others)
// becomes a non-training span of its own.
struct HostSpans {
    const TraceModel& m;
    int32_t process;
    const std::vector<size_t>& kernels;  // the process's kernels, as indices into m.work
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
    const TraceModel& m = s.m;
    const std::vector<size_t>& kernels = s.kernels;
    s.trailing.assign(s.blocks.size(), 0);
    for (size_t b = 0; b < s.blocks.size(); ++b) {
        size_t w = kernels[s.blocks[b].end_kernel - 1] + 1;
        size_t limit = s.blocks[b].end_kernel < kernels.size() ? kernels[s.blocks[b].end_kernel] : m.work.size();
        for (size_t n = 0; w < limit; ++w) {
            const WorkItem& item = m.work[w];
            if (item.process != s.process) continue;
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
    const TraceModel& m = s.m;
    int64_t begin = m.work[first].launch_ns;
    for (size_t w = first; w-- > 0;) {
        if (m.work[w].process != s.process) continue;
        int64_t done = m.work[w].kind == WorkItem::Kind::CopyDtoH ? m.work[w].end_ns : m.work[w].launch_ns + 1;
        // A wait for the device after that launch (the step's closing synchronize) is its end.
        auto wait = std::lower_bound(m.host_waits.begin(), m.host_waits.end(), m.work[w].launch_ns,
                                     [](const Range& r, int64_t t) { return r.begin_ns < t; });
        for (; wait != m.host_waits.end() && wait->begin_ns < m.work[first].launch_ns; ++wait)
            if (wait->process == s.process) done = std::max(done, std::min(wait->end_ns, m.work[first].launch_ns));
        begin = std::min(begin, std::max(done, s.pieces.empty() ? done : s.pieces.back().begin + 1));
        break;
    }
    return begin;
}

// From work item `w`, past `count` of the process's work items and any other process's after them.
size_t skip_own_work(const HostSpans& s, size_t w, size_t end, size_t count) {
    for (size_t n = 0; w < end && n < count; ++w) n += s.m.work[w].process == s.process;
    while (w < end && s.m.work[w].process != s.process) ++w;
    return w;
}

// Where the first block's span begins: the set-up's own work after its last kernel (DDP copying the
// parameters it broadcast back into them, the parameters read back to the host) is no part of the
// first step, which begins with the batch that arrives right before its first kernel: the
// host-to-device copies (and sets) launched just before it, the way the later steps' phase is chosen.
// Without such copies, right after the set-up's last kernel `from`, as before.
size_t first_step_begin(const HostSpans& s, size_t from, size_t first_kernel) {
    size_t begin = first_kernel;
    for (size_t w = first_kernel; w-- > from;) {
        const WorkItem& item = s.m.work[w];
        if (item.process != s.process) continue;
        if (item.kind != WorkItem::Kind::CopyHtoD && item.kind != WorkItem::Kind::Set) break;
        if (item.kind == WorkItem::Kind::CopyHtoD) begin = w;
    }
    return begin < first_kernel ? begin : from;
}

// Where each block's span begins, with a checkpoint save before it as a span of its own.
void place_pieces(HostSpans& s) {
    const std::vector<size_t>& kernels = s.kernels;
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
            size_t w =
                b == 0 ? first_step_begin(s, after_previous, first) : skip_own_work(s, after_previous, first, skip);
            if (save) {
                // The excess read-backs after the previous step or pass: a checkpoint save.
                s.pieces.push_back({span_begin(s, w), false});
                w = skip_own_work(s, after_previous, first, s.trailing[b - 1]);
            }
            first = w;
        }
        s.pieces.push_back({b == 0 ? s.m.work[first].launch_ns : span_begin(s, first), s.blocks[b].training});
    }
    // A checkpoint save after the last step too.
    if (!s.blocks.empty() && s.trailing[s.blocks.size() - 1] > s.typical + 2) {
        const size_t w = skip_own_work(s, kernels[s.blocks.back().end_kernel - 1] + 1, s.m.work.size(), s.typical);
        if (w < s.m.work.size()) s.final_save_first = w;
    }
}

// Where the last span ends when no save follows: after its read-backs, before the next
// host-to-device copy or kernel.
int64_t last_span_end(const HostSpans& s) {
    const TraceModel& m = s.m;
    const std::vector<size_t>& kernels = s.kernels;
    size_t last = kernels[s.blocks.back().end_kernel - 1];
    size_t limit = s.blocks.back().end_kernel < kernels.size() ? kernels[s.blocks.back().end_kernel] : m.work.size();
    size_t w = last + 1;
    while (w < limit && m.work[w].kind != WorkItem::Kind::CopyHtoD) ++w;
    return w < m.work.size() ? m.work[w].launch_ns : m.work[last].end_ns + 1;
}

// The spans of `s.pieces`, each up to the next, and the save after the last step: its read-backs.
IterationSet make_spans(const HostSpans& s) {
    const TraceModel& m = s.m;
    IterationSet set;
    set.source = "repetition";
    for (size_t i = 0; i < s.pieces.size(); ++i) {
        int64_t end = i + 1 < s.pieces.size() ? s.pieces[i + 1].begin
                      : s.final_save_first    ? span_begin(s, *s.final_save_first)
                                              : last_span_end(s);
        end = std::max(end, s.pieces[i].begin + 1);
        Iteration it = make_iteration(m, s.pieces[i].begin, end, s.process);
        (s.pieces[i].training ? set.iterations : set.non_training).push_back(it);
    }
    if (s.final_save_first) {
        size_t w = *s.final_save_first;
        while (w < m.work.size() && (m.work[w].kind == WorkItem::Kind::CopyDtoH || m.work[w].process != s.process)) ++w;
        int64_t begin = span_begin(s, *s.final_save_first);
        int64_t end = w < m.work.size() ? m.work[w].launch_ns : m.work[w - 1].end_ns + 1;
        set.non_training.push_back(make_iteration(m, begin, std::max(end, begin + 1), s.process));
    }
    return set;
}

}  // namespace

IterationSet spans_of_blocks(const TraceModel& m, int32_t process, const std::vector<size_t>& kernels,
                             const std::vector<Block>& blocks) {
    HostSpans spans{m, process, kernels, blocks};
    count_trailing_readbacks(spans);
    place_pieces(spans);
    return make_spans(spans);
}

}  // namespace tbdprof::tagger
