#include "iterations.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace tbdprof::tagger {
namespace {

constexpr size_t kMaxKernelsForPeriod = 20000;  // the period search is quadratic; steps repeat early
constexpr double kPeriodTolerance = 0.02;       // a few data-dependent kernels may differ per step

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool looks_like_step(const std::string& name, const std::string& wanted) {
    if (!wanted.empty()) return name == wanted;
    std::string n = lower(name);
    if (n.rfind("profilerstep#", 0) == 0) return true;
    for (const char* word : {"step", "iteration", "train_step", "training_step"}) {
        std::string w = word;
        if (n == w) return true;
        if (n.rfind(w, 0) == 0 && n.size() > w.size() &&
            (n[w.size()] == ' ' || n[w.size()] == '#' || n[w.size()] == '_' || std::isdigit(static_cast<unsigned char>(n[w.size()]))))
            return true;
    }
    return false;
}

// Fills work ranges and bounds from [begin, end) time spans.
IterationSet from_spans(const TraceModel& m, std::vector<std::pair<int64_t, int64_t>> spans, int32_t process,
                        const char* source) {
    IterationSet set;
    set.source = source;
    std::sort(spans.begin(), spans.end());
    for (const auto& [begin, end] : spans) {
        Iteration it;
        it.process = process;
        it.begin_ns = begin;
        it.end_ns = end;
        it.core_begin_ns = end;
        auto first = std::lower_bound(m.work.begin(), m.work.end(), begin,
                                      [](const WorkItem& w, int64_t t) { return w.launch_ns < t; });
        it.first_work = size_t(first - m.work.begin());
        it.end_work = it.first_work;
        while (it.end_work < m.work.size() && m.work[it.end_work].launch_ns < end) {
            const WorkItem& w = m.work[it.end_work];
            if (w.kind == WorkItem::Kind::Kernel) it.core_begin_ns = std::min(it.core_begin_ns, w.launch_ns);
            it.end_ns = std::max(it.end_ns, w.end_ns);
            ++it.end_work;
        }
        set.iterations.push_back(it);
    }
    return set;
}

IterationSet from_ranges(const TraceModel& m, const std::string& range_name) {
    std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> by_process;
    for (const auto& r : m.ranges)
        if (looks_like_step(r.name, range_name) && r.end_ns > r.begin_ns)
            by_process[r.process].push_back({r.begin_ns, r.end_ns});
    if (by_process.empty()) return {};
    auto busiest = std::max_element(by_process.begin(), by_process.end(),
                                    [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    return from_spans(m, busiest->second, busiest->first, "nvtx");
}

// Where an iteration starts within the period. In order of weight: a step boundary does not cut
// through short-lived buffers (activations and per-step gradients live inside one step); a new batch
// comes in (host-to-device copies) and gradients are cleared (sets) just before it; the host waited
// longest before it (end-of-step work).
size_t choose_offset(const TraceModel& m, const std::vector<size_t>& kernels, size_t period) {
    int64_t period_ns = 0;
    if (kernels.size() > period)
        period_ns = (m.work[kernels.back()].launch_ns - m.work[kernels.front()].launch_ns) /
                    static_cast<int64_t>(kernels.size() / period);
    double best_score = 0;
    size_t best_offset = 0;
    bool first = true;
    for (size_t offset = 0; offset < period; ++offset) {
        double copies = 0, gaps = 0;
        std::vector<int64_t> boundaries;
        for (size_t k = offset; k < kernels.size(); k += period) {
            if (k == 0) continue;
            size_t prev = kernels[k - 1], here = kernels[k];
            boundaries.push_back(m.work[here].launch_ns);
            for (size_t w = prev + 1; w < here; ++w) {
                copies += m.work[w].kind == WorkItem::Kind::CopyHtoD ? 1.0 : 0.0;
                copies += m.work[w].kind == WorkItem::Kind::Set ? 0.1 : 0.0;
            }
            gaps += double(m.work[here].launch_ns - m.work[prev].launch_ns);
        }
        double cut = 0;
        for (const Allocation& a : m.allocations) {
            if (!a.free_ns || *a.free_ns - a.alloc_ns >= period_ns) continue;
            auto b = std::upper_bound(boundaries.begin(), boundaries.end(), a.alloc_ns);
            cut += b != boundaries.end() && *b < *a.free_ns ? 1.0 : 0.0;
        }
        double score = -cut * 1e15 + copies * 1e12 + gaps;
        if (first || score > best_score) {
            best_score = score;
            best_offset = offset;
            first = false;
        }
    }
    return best_offset;
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
    auto& [process, kernels] = *std::max_element(kernels_by_process.begin(), kernels_by_process.end(),
                                                 [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    std::vector<int32_t> sequence;
    for (size_t i = 0; i < kernels.size() && i < kMaxKernelsForPeriod; ++i) sequence.push_back(m.work[kernels[i]].function);
    size_t period = find_period(sequence, kPeriodTolerance);
    if (period == 0) {
        none.note = "the kernel sequence does not repeat (one pass, or inference)";
        return none;
    }
    size_t best_offset = choose_offset(m, kernels, period);
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (size_t k = best_offset; k + period <= kernels.size(); k += period) {
        // An iteration owns the copies and sets issued since the previous iteration's last kernel.
        size_t first = k == 0 ? 0 : kernels[k - 1] + 1;
        size_t last = kernels[k + period - 1];
        // Work after its last kernel up to the next kernel belongs to it too (loss read-back).
        size_t next_kernel = k + period < kernels.size() ? kernels[k + period] : m.work.size();
        size_t end = last + 1;
        while (end < next_kernel && m.work[end].kind != WorkItem::Kind::CopyHtoD) ++end;
        int64_t begin_ns = m.work[first].launch_ns;
        int64_t end_ns = end < m.work.size() ? m.work[end].launch_ns : m.work[last].end_ns + 1;
        spans.push_back({begin_ns, std::max(end_ns, begin_ns + 1)});
    }
    if (spans.size() < 2) {
        none.note = "fewer than two repetitions of the kernel sequence";
        return none;
    }
    // Spans must not overlap: each ends where the next begins at the latest.
    for (size_t i = 0; i + 1 < spans.size(); ++i) spans[i].second = std::min(spans[i].second, spans[i + 1].first);
    return from_spans(m, spans, process, "repetition");
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
        size_t compared = n - p - skip;
        size_t allowed = static_cast<size_t>(tolerance * double(compared));
        size_t mismatches = 0;
        for (size_t i = skip; i + p < n && mismatches <= allowed; ++i) mismatches += sequence[i] != sequence[i + p];
        if (mismatches > allowed) continue;
        double ratio = double(mismatches) / double(compared);
        candidates.push_back({p, ratio});
        best = std::min(best, ratio);
    }
    for (const auto& [p, ratio] : candidates)
        if (ratio <= best + 0.002) return p;
    return 0;
}

IterationSet detect_iterations(const TraceModel& model, const std::string& range_name) {
    IterationSet from_nvtx = from_ranges(model, range_name);
    if (!from_nvtx.iterations.empty()) return from_nvtx;
    return from_repetition(model);
}

}  // namespace tbdprof::tagger
