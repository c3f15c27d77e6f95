// The communication figures of every rank by one sweep over the kernels (communication.h): the
// kernels of a rank arrive in start order, so each union (communication, computation, and both)
// needs only its last, still growing stretch; a stretch is measured over the window and the
// iterations when the next one begins after it ends. Overlap follows from the three measures:
// |C ∩ P| = |C| + |P| - |C ∪ P|, all in integer nanoseconds, so the figures are exactly those of
// the unions held whole.
#include <algorithm>
#include <climits>
#include <map>

#include "communication.h"
#include "kernel_range_scan.h"

namespace tbdprof::analyzer {
namespace {

// A union of intervals given in start order, measured as its stretches close.
class SweptUnion {
public:
    SweptUnion(const Window& window, const Spans& spans)
        : window_(&window), spans_(&spans), span_ns_(spans.size(), 0) {}
    void add(Stretch s) {
        if (s.end <= s.begin) return;  // dropped, as IntervalUnion drops them
        if (!open_) {
            tail_ = s;
            open_ = true;
        } else if (s.begin > tail_.end) {
            measure(tail_);
            tail_ = s;
        } else {
            tail_.end = std::max(tail_.end, s.end);
        }
    }
    void close() {
        if (open_) measure(tail_);
        open_ = false;
    }
    bool empty() const { return !open_ && !measured_; }
    int64_t window_ns() const { return window_ns_; }
    int64_t span_ns(size_t i) const { return span_ns_[i]; }

private:
    void measure(Stretch s) {
        measured_ = true;
        window_ns_ += overlap_ns(s.begin, s.end, window_->begin_ns, window_->end_ns);
        // Stretches close in start order and the spans are sorted and disjoint: one cursor serves.
        const Spans& spans = *spans_;
        while (cursor_ < spans.size() && spans[cursor_].second <= s.begin) ++cursor_;
        for (size_t i = cursor_; i < spans.size() && spans[i].first < s.end; ++i)
            span_ns_[i] += overlap_ns(s.begin, s.end, spans[i].first, spans[i].second);
    }

    const Window* window_;
    const Spans* spans_;
    bool open_ = false, measured_ = false;
    Stretch tail_{0, 0};
    int64_t window_ns_ = 0;
    std::vector<int64_t> span_ns_;
    size_t cursor_ = 0;
};

struct RankSweep {
    RankSweep(const Window& window, const Spans& spans)
        : communication(window, spans), computation(window, spans), both(window, spans) {}
    SweptUnion communication, computation, both;
    std::vector<Stretch> collectives;
    int64_t last_begin = INT64_MIN;
};

// The figures from the three measures of one span.
CommunicationFigures figures_of(int64_t communication, int64_t computation, int64_t both, int64_t lo, int64_t hi) {
    CommunicationFigures f;
    f.communication_ns = communication;
    f.computation_ns = computation;
    f.overlapped_ns = communication + computation - both;
    f.exposed_ns = f.communication_ns - f.overlapped_ns;
    f.idle_ns = std::max<int64_t>(0, (hi - lo) - (f.communication_ns + f.computation_ns - f.overlapped_ns));
    return f;
}

// Collectives starting in [lo, hi), by two binary searches (they are sorted by start).
int64_t collectives_in(const std::vector<Stretch>& collectives, int64_t lo, int64_t hi) {
    const auto starts_before = [](int64_t t) { return [t](const Stretch& k) { return k.begin < t; }; };
    const auto first = std::partition_point(collectives.begin(), collectives.end(), starts_before(lo));
    return std::partition_point(first, collectives.end(), starts_before(hi)) - first;
}

bool sorted_and_disjoint(const Spans& spans) {
    for (size_t i = 1; i < spans.size(); ++i)
        if (spans[i].first < spans[i - 1].second) return false;
    return true;
}

RankFigures figures_of(RankSweep& sweep, const Window& window, const Spans& spans) {
    sweep.communication.close(), sweep.computation.close(), sweep.both.close();
    RankFigures f;
    f.communicates = !sweep.communication.empty();
    f.window = figures_of(sweep.communication.window_ns(), sweep.computation.window_ns(), sweep.both.window_ns(),
                          window.begin_ns, window.end_ns);
    f.window.kernels = collectives_in(sweep.collectives, window.begin_ns, window.end_ns);
    for (size_t i = 0; i < spans.size(); ++i) {
        const auto [lo, hi] = spans[i];
        f.iterations.push_back(
            figures_of(sweep.communication.span_ns(i), sweep.computation.span_ns(i), sweep.both.span_ns(i), lo, hi));
        f.iterations.back().kernels = collectives_in(sweep.collectives, lo, hi);
    }
    return f;
}

}  // namespace

RankFigures rank_figures(const RankKernels& rank, const Window& window, const Spans& spans) {
    RankFigures f;
    f.communicates = !rank.communication.empty();
    f.window = communication_figures(rank, window.begin_ns, window.end_ns);
    for (const auto& [begin, end] : spans) f.iterations.push_back(communication_figures(rank, begin, end));
    return f;
}

bool sweep_rank_kernels(const TraceFile& trace, const std::vector<bool>& is_comm, const Window& window,
                        const Spans& spans, std::vector<RankKernels>& kernels, std::vector<RankFigures>& figures) {
    if (!sorted_and_disjoint(spans)) return false;
    std::map<std::pair<int64_t, int64_t>, RankSweep> by_rank;
    // The rows read_rank_kernels reads, in the same order; a rank's kernels out of start order stop it.
    const bool in_order = for_each_window_kernel(trace, is_comm, window, [&](const WindowKernel& k) {
        RankSweep& rank = by_rank.try_emplace(k.rank, window, spans).first->second;
        if (k.whole.begin < rank.last_begin) return false;
        rank.last_begin = k.whole.begin;
        (k.communication ? rank.communication : rank.computation).add(k.clipped);
        rank.both.add(k.clipped);
        if (k.communication && k.whole.begin >= window.begin_ns) rank.collectives.push_back(k.whole);
        return true;
    });
    if (!in_order) return false;
    for (auto& [key, sweep] : by_rank) {
        figures.push_back(figures_of(sweep, window, spans));
        RankKernels rank;
        rank.process = key.first;
        rank.device = key.second;
        rank.collectives = std::move(sweep.collectives);  // in start order: the kernels were
        kernels.push_back(std::move(rank));
    }
    return true;
}

}  // namespace tbdprof::analyzer
