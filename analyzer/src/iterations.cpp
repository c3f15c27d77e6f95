// Iterations and the analysis window. Sources, in order: the `iterations` table (the tagger's, the
// one definition), then NVTX ranges named like a step. With none, every window falls back to the
// whole run and the report says so.
#include <algorithm>
#include <cmath>
#include <map>

#include "analysis_parts.h"
#include "tbdprof/step_names.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

using Span = std::pair<int64_t, int64_t>;

struct StoredSpan {
    int64_t begin = 0, end = 0, device_begin = 0, device_end = 0;
    bool operator<(const StoredSpan& o) const { return begin < o.begin; }
};

// Spans of one process, sorted; a span starting before the previous one ended (a nested or
// overlapping marker) is dropped, so iterations never overlap.
std::vector<StoredSpan> clean(std::vector<StoredSpan> spans) {
    std::sort(spans.begin(), spans.end());
    std::vector<StoredSpan> out;
    for (const StoredSpan& span : spans) {
        if (span.end <= span.begin) continue;  // counted as invalid by detect_iterations
        if (!out.empty() && span.begin < out.back().end) continue;
        out.push_back(span);
    }
    return out;
}

// Several processes (data-parallel ranks) each mark their steps: use the one with the most spans,
// the lowest process id on ties, so iteration times are one process's own.
std::map<int64_t, std::vector<StoredSpan>>::const_iterator pick_process(
    const std::map<int64_t, std::vector<StoredSpan>>& by_process) {
    auto best = by_process.end();
    for (auto it = by_process.begin(); it != by_process.end(); ++it)
        if (best == by_process.end() || it->second.size() > best->second.size()) best = it;
    return best;
}

void fill(IterationSpans& result, const std::vector<StoredSpan>& spans) {
    for (const StoredSpan& s : spans) {
        result.spans.emplace_back(s.begin, s.end);
        result.device_begins.push_back(s.device_begin);
        result.device_ends.push_back(s.device_end);
    }
}

}  // namespace

// The tagger (tagger/iterations.*) is the one definition of iterations: its `iterations` table is
// read as it is, training spans only; nothing here detects steps. Without stored iterations (an
// untagged or imported trace), or for a range the user names, the steps NVTX ranges mark are taken by
// the tagger's own rule (steps::step_ranges), as docs/analyzer.md says.
IterationSpans detect_iterations(const TraceFile& trace, const std::string& user_range) {
    IterationSpans result;
    if (user_range.empty()) {
        std::map<int64_t, std::vector<StoredSpan>> by_process;
        trace::RowReader<trace::IterationRow> stored(trace.db);
        for (trace::IterationRow row; stored.next(row);) {
            if (row.end_ns <= row.begin_ns) {
                ++result.invalid;  // never a span: a negative or zero time per iteration
                continue;
            }
            if (row.training())
                by_process[row.process].push_back(
                    {row.begin_ns, row.end_ns, row.device_begin_ns.value_or(0), row.device_end_ns.value_or(0)});
        }
        const auto chosen = pick_process(by_process);
        if (chosen != by_process.end()) {
            fill(result, clean(chosen->second));
            result.process = chosen->first;
        }
        if (!result.spans.empty()) {
            result.source = "iterations table";
            return result;
        }
    }
    // Ranges marking steps, by the tagger's own rule (step_names.h).
    std::vector<steps::NamedRange> ranges;
    trace::RowReader<trace::RangeRow> rows(trace.db);
    for (trace::RangeRow row; rows.next(row);) {
        if (!row.end_ns) continue;
        if (*row.end_ns < row.begin_ns && steps::matches_iteration_range(row.name, user_range)) ++result.invalid;
        ranges.push_back({row.process, row.begin_ns, *row.end_ns, std::string(row.name)});
    }
    const steps::StepRanges marked = steps::step_ranges(ranges, user_range);
    result.spans = marked.spans;
    result.device_begins.assign(marked.spans.size(), 0);
    result.device_ends.assign(marked.spans.size(), 0);
    if (!marked.spans.empty()) result.source = "ranges named like '" + marked.family + "'";
    return result;
}

namespace {

// Where the device is done with the work launched before the second iteration: the end of the first
// iteration's device work, or earlier where the second's own device work began first (streams that
// overlap). 0 where the trace does not say.
int64_t previous_work_end(const IterationSpans& iterations) {
    if (iterations.device_ends.size() < 2 || iterations.device_ends[0] <= 0) return 0;
    const int64_t own_start = iterations.device_begins[1];
    return own_start > 0 ? std::min(iterations.device_ends[0], own_start) : iterations.device_ends[0];
}

}  // namespace

Window choose_window(WindowChoice choice, const IterationSpans& iterations, int64_t run_duration_ns) {
    Window window;
    window.requested = window_name(choice);
    const auto& spans = iterations.spans;
    if (choice == WindowChoice::steady && spans.size() >= 2) {
        window.used = "steady";
        window.first_iteration_begin_ns = spans[1].first;
        window.begin_ns = std::max(spans[1].first, previous_work_end(iterations));
        window.end_ns =
            std::max(spans.back().second, iterations.device_ends.empty() ? 0 : iterations.device_ends.back());
    } else if (choice != WindowChoice::all && !spans.empty()) {
        window.used = "iterations";
        window.begin_ns = window.first_iteration_begin_ns = spans.front().first;
        window.end_ns =
            std::max(spans.back().second, iterations.device_ends.empty() ? 0 : iterations.device_ends.back());
        if (choice == WindowChoice::steady) {
            window.note = "only one iteration was detected, so the window is that iteration";
        }
    } else {
        window.used = "all";
        window.begin_ns = 0;
        window.end_ns = run_duration_ns;
        if (choice != WindowChoice::all) window.note = "no iterations were detected, so the window is the whole run";
    }
    if (window.end_ns <= window.begin_ns) window.end_ns = window.begin_ns + 1;  // never divide by zero
    return window;
}

IterationMetrics iteration_metrics(const IterationSpans& iterations, const Window& window,
                                   std::optional<int64_t> batch_size) {
    IterationMetrics metrics;
    metrics.source = iterations.source;
    metrics.detected = static_cast<int64_t>(iterations.spans.size());
    std::vector<double> seconds;
    for (const Span& span : iterations.spans) {
        if (span.first >= window.first_iteration_begin_ns && span.second <= window.end_ns) {
            metrics.spans.push_back(span);
            seconds.push_back(static_cast<double>(span.second - span.first) / 1e9);
        }
    }
    metrics.count = static_cast<int64_t>(seconds.size());
    if (seconds.empty()) return metrics;
    std::sort(seconds.begin(), seconds.end());
    double total = 0;
    for (double s : seconds) total += s;
    metrics.mean_s = total / static_cast<double>(seconds.size());
    const size_t n = seconds.size();
    metrics.median_s = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
    // Nearest-rank p95.
    const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n)));
    metrics.p95_s = seconds[std::clamp<size_t>(rank, 1, n) - 1];
    metrics.min_s = seconds.front();
    metrics.max_s = seconds.back();
    metrics.per_s = static_cast<double>(n) / window.seconds();
    if (batch_size) metrics.samples_per_s = metrics.per_s * static_cast<double>(*batch_size);
    return metrics;
}

}  // namespace tbdprof::analyzer
