// Iterations and the analysis window. Sources, in order: the `iterations` table (written by the
// tagging step in later traces), then NVTX ranges named like a step. With none, every window falls
// back to the whole run and the report says so.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "analysis_parts.h"

namespace tbdprof::analyzer {
namespace {

using Span = std::pair<int64_t, int64_t>;

// "ProfilerStep#12" -> "profilerstep", "step 3" -> "step", "Iteration_7" -> "iteration".
std::string family_of(const std::string& name) {
    size_t end = name.size();
    while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
    while (end > 0 && std::string_view("#_-: ").find(name[end - 1]) != std::string_view::npos) --end;
    std::string family = name.substr(0, end);
    for (char& c : family) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return family;
}

bool is_step_family(const std::string& family) {
    static const char* const known[] = {"profilerstep", "step", "iteration", "iter", "train_step", "training_step",
                                        "train step"};
    return std::any_of(std::begin(known), std::end(known), [&](const char* k) { return family == k; });
}

// Spans of one process, sorted; a span starting before the previous one ended (a nested or
// overlapping marker) is dropped, so iterations never overlap.
std::vector<Span> clean(std::vector<Span> spans) {
    std::sort(spans.begin(), spans.end());
    std::vector<Span> out;
    for (const Span& span : spans) {
        if (span.second < span.first) continue;
        if (!out.empty() && span.first < out.back().second) continue;
        out.push_back(span);
    }
    return out;
}

// Several processes (data-parallel ranks) each mark their steps: use the one with the most spans,
// the lowest process id on ties, so iteration times are one process's own.
std::vector<Span> pick_process(const std::map<int64_t, std::vector<Span>>& by_process) {
    const std::vector<Span>* best = nullptr;
    for (const auto& [process, spans] : by_process) {
        if (!best || spans.size() > best->size()) best = &spans;
    }
    return best ? clean(*best) : std::vector<Span>{};
}

}  // namespace

IterationSpans detect_iterations(const TraceFile& trace, const std::string& user_range) {
    IterationSpans result;
    if (trace.has_iterations_table && user_range.empty()) {
        std::map<int64_t, std::vector<Span>> by_process;
        Query query(*trace.db, "SELECT process, begin_ns, end_ns FROM iterations WHERE end_ns IS NOT NULL");
        while (query.step()) by_process[query.integer(0)].emplace_back(query.integer(1), query.integer(2));
        result.spans = pick_process(by_process);
        if (!result.spans.empty()) {
            result.source = "iterations table";
            return result;
        }
    }
    // Ranges: group by name family, keep the family with the most ranges.
    std::map<std::string, std::map<int64_t, std::vector<Span>>> families;
    Query query(*trace.db,
                "SELECT process, begin_ns, end_ns, name FROM ranges WHERE end_ns IS NOT NULL AND name IS NOT NULL "
                "AND (name = ?1 OR name LIKE ?1 || '%' OR name LIKE '%step%' OR name LIKE '%iter%')");
    query.bind(1, std::string_view(user_range));
    while (query.step()) {
        const std::string name = query.text(3);
        std::string family;
        if (!user_range.empty()) {
            if (name != user_range && family_of(name) != family_of(user_range)) continue;
            family = user_range;
        } else {
            family = family_of(name);
            if (!is_step_family(family)) continue;
        }
        families[family][query.integer(0)].emplace_back(query.integer(1), query.integer(2));
    }
    size_t best_count = 0;
    for (const auto& [family, by_process] : families) {
        std::vector<Span> spans = pick_process(by_process);
        if (spans.size() > best_count) {
            best_count = spans.size();
            result.spans = std::move(spans);
            result.source = "ranges named like '" + family + "'";
        }
    }
    return result;
}

Window choose_window(WindowChoice choice, const IterationSpans& iterations, int64_t run_duration_ns) {
    Window window;
    window.requested = window_name(choice);
    const auto& spans = iterations.spans;
    if (choice == WindowChoice::steady && spans.size() >= 2) {
        window.used = "steady";
        window.begin_ns = spans[1].first;
        window.end_ns = spans.back().second;
    } else if (choice != WindowChoice::all && !spans.empty()) {
        window.used = "iterations";
        window.begin_ns = spans.front().first;
        window.end_ns = spans.back().second;
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
        if (span.first >= window.begin_ns && span.second <= window.end_ns) {
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
