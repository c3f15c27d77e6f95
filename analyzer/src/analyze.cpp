#include "tbdprof/analyzer/analyze.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "analysis_parts.h"

namespace tbdprof::analyzer {

std::optional<WindowChoice> parse_window(std::string_view text) {
    if (text == "steady") return WindowChoice::steady;
    if (text == "iterations") return WindowChoice::iterations;
    if (text == "all") return WindowChoice::all;
    return std::nullopt;
}

const char* window_name(WindowChoice choice) {
    switch (choice) {
    case WindowChoice::steady: return "steady";
    case WindowChoice::iterations: return "iterations";
    default: return "all";
    }
}

namespace {

// TBDPROF_ANALYZER_TIMING=1 prints how long each phase took (for the benchmark in docs/analyzer.md).
class PhaseTimer {
public:
    PhaseTimer() : enabled_(std::getenv("TBDPROF_ANALYZER_TIMING") != nullptr), last_(std::chrono::steady_clock::now()) {}
    void lap(const char* phase) {
        if (!enabled_) return;
        const auto now = std::chrono::steady_clock::now();
        std::fprintf(stderr, "tbdprof analyzer: %-12s %8.3f s\n", phase, std::chrono::duration<double>(now - last_).count());
        last_ = now;
    }

private:
    bool enabled_;
    std::chrono::steady_clock::time_point last_;
};

void read_run(const TraceFile& trace, Report& report) {
    RunInfo& run = report.run;
    run.trace_path = trace.db->path();
    run.format_version = trace.format_version;
    Query query(*trace.db,
                "SELECT command_line, duration_ns, simulated_device, clock_source, host_timed_kernels, "
                "truncated_files FROM run LIMIT 1");
    if (!query.step()) throw TraceError(trace.db->path() + " is not a complete tbdprof trace: the run row is missing");
    run.command_line = query.text(0);
    run.duration_ns = std::max<int64_t>(0, query.integer(1));
    run.simulated = query.integer(2) != 0;
    run.clock_source = query.text(3);
    run.host_timed_kernels = query.integer(4);
    run.truncated_files = query.integer(5);
    run.dropped_events =
        trace.db->has_table("dropped_events") ? trace.db->query_int("SELECT total(count) FROM dropped_events") : 0;
    if (run.truncated_files > 0) {
        report.notes.push_back(std::to_string(run.truncated_files) +
                               " raw files of this run were truncated: the trace may miss events at the end");
    }
    if (run.dropped_events > 0) {
        report.notes.push_back(std::to_string(run.dropped_events) + " events were dropped while recording");
    }
}

}  // namespace

namespace {

// Nothing on the GPU at all: no report would mean anything (a run that never reached CUDA).
void require_activity(const TraceFile& trace, const std::string& path) {
    const bool has_activity = trace.db->query_int(
        "SELECT EXISTS (SELECT 1 FROM kernels) OR EXISTS (SELECT 1 FROM allocations) OR EXISTS (SELECT 1 FROM copies) "
        "OR EXISTS (SELECT 1 FROM sets)");
    if (!has_activity) {
        throw TraceError(path + " has no kernels, allocations or copies: the run recorded no GPU activity");
    }
}

}  // namespace

void check_trace(const std::string& path) {
    TraceFile trace = open_trace(path);
    require_activity(trace, path);
}

std::vector<std::pair<int64_t, int64_t>> trace_iterations(const std::string& path, const std::string& iteration_range) {
    TraceFile trace = open_trace(path);
    return detect_iterations(trace, iteration_range).spans;
}

Report analyze_trace(const std::string& path, const AnalysisOptions& options) {
    TraceFile trace = open_trace(path);
    Report report;
    read_run(trace, report);
    report.capture_windows = read_capture_windows(trace);
    require_activity(trace, path);
    const IterationSpans iterations = detect_iterations(trace, options.iteration_range);
    report.window = choose_window(options.window, iterations, report.run.duration_ns);
    if (!report.window.note.empty()) report.notes.insert(report.notes.begin(), report.window.note);
    report.iterations = iteration_metrics(iterations, report.window, options.batch_size);
    if (iterations.spans.empty()) {
        report.notes.push_back(options.iteration_range.empty()
                                   ? "no iterations detected (no iterations table, no ranges named like a step)"
                                   : "no ranges named '" + options.iteration_range + "' found");
    }
    Progress progress(options.progress);
    PhaseTimer timer;
    scan_gpu(trace, options, progress, report);
    timer.lap("gpu scan");
    scan_memory(trace, options, report);
    timer.lap("memory scan");
    scan_cpu(trace, report);
    timer.lap("cpu scan");
    return report;
}

}  // namespace tbdprof::analyzer
