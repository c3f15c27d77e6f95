#include "tbdprof/analyzer/analyze.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "analysis_parts.h"
#include "framework_unseen.h"
#include "tbdprof/trace/sim_notes.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {

std::optional<WindowChoice> parse_window(std::string_view text) {
    if (text == "steady") return WindowChoice::steady;
    if (text == "iterations") return WindowChoice::iterations;
    if (text == "all") return WindowChoice::all;
    return std::nullopt;
}

const char* window_name(WindowChoice choice) {
    switch (choice) {
        case WindowChoice::steady:
            return "steady";
        case WindowChoice::iterations:
            return "iterations";
        default:
            return "all";
    }
}

namespace {

// TBDPROF_ANALYZER_TIMING=1 prints how long each phase took (for the benchmark in docs/analyzer.md).
class PhaseTimer {
public:
    PhaseTimer()
        : enabled_(std::getenv("TBDPROF_ANALYZER_TIMING") != nullptr), last_(std::chrono::steady_clock::now()) {}
    void lap(const char* phase) {
        if (!enabled_) return;
        const auto now = std::chrono::steady_clock::now();
        std::fprintf(stderr, "tbdprof analyzer: %-12s %8.3f s\n", phase,
                     std::chrono::duration<double>(now - last_).count());
        last_ = now;
    }

private:
    bool enabled_;
    std::chrono::steady_clock::time_point last_;
};

void read_run(const TraceFile& trace, Report& report) {
    RunInfo& run = report.run;
    run.trace_path = trace.path;
    run.format_version = trace.format_version;
    const trace::RunRow row = trace::read_run(trace.db);
    run.command_line = row.command_line;
    run.duration_ns = std::max<int64_t>(0, row.duration_ns);
    run.simulated = row.simulated_device;
    run.clock_source = row.clock_source;
    run.host_timed_kernels = row.host_timed_kernels;
    run.truncated_files = row.truncated_files;
    run.dropped_events = trace::dropped_event_count(trace.db);
    if (run.truncated_files > 0) {
        report.notes.push_back(std::to_string(run.truncated_files) +
                               " raw files of this run were truncated: the trace may miss events at the end");
    }
    if (run.dropped_events > 0) {
        report.notes.push_back(std::to_string(run.dropped_events) + " events were dropped while recording");
    }
    // Back-pressure (how long the collector held the program) and where in the timeline drops were.
    if (trace::has_table(trace.db, "run_notes")) {
        for (const auto& [key, value] : trace::read_notes_with_prefix(trace.db, "collector_")) report.notes.push_back(value);
    }
    // The simulated GPU's holes the program fell into: its behaviour there is not a real GPU's.
    for (const trace::UnmodelledCall& call : trace::read_unmodelled_calls(trace.db))
        report.notes.push_back(trace::describe_unmodelled_call(call));
}

// Nothing on the GPU at all: no report would mean anything (a run that never reached CUDA).
void require_activity(TraceFile& trace) {
    const bool has_activity = trace.db.query_int(
        "SELECT EXISTS (SELECT 1 FROM kernels) OR EXISTS (SELECT 1 FROM allocations) OR EXISTS (SELECT 1 FROM copies) "
        "OR EXISTS (SELECT 1 FROM sets)");
    if (!has_activity) {
        throw TraceError(trace.path + " has no kernels, allocations or copies: the run recorded no GPU activity");
    }
}

}  // namespace

void check_trace(const std::string& path) {
    read_trace(path, [](TraceFile& trace) { require_activity(trace); });
}

std::vector<std::pair<int64_t, int64_t>> trace_iterations(const std::string& path, const std::string& iteration_range) {
    return read_trace(path, [&](TraceFile& trace) { return detect_iterations(trace, iteration_range).spans; });
}

Report analyze_trace(const std::string& path, const AnalysisOptions& options) {
    return read_trace(path, [&](TraceFile& trace) {
        Report report;
        read_run(trace, report);
        report.capture_windows = read_capture_windows(trace);
        require_activity(trace);
        const IterationSpans iterations = detect_iterations(trace, options.iteration_range);
        report.window = choose_window(options.window, iterations, report.run.duration_ns);
        if (!report.window.note.empty()) report.notes.insert(report.notes.begin(), report.window.note);
        report.iterations = iteration_metrics(iterations, report.window, options.batch_size);
        if (iterations.invalid > 0) {
            report.notes.push_back(iterations.invalid == 1
                                       ? "1 iteration ends before it begins (a damaged row): left out of every figure"
                                       : std::to_string(iterations.invalid) +
                                             " iterations end before they begin (damaged rows): left out of every "
                                             "figure");
        }
        if (iterations.spans.empty()) {
            report.notes.push_back(options.iteration_range.empty()
                                       ? "no iterations detected (no iterations table, no ranges named like a step)"
                                       : "no ranges named '" + options.iteration_range + "' found");
        }
        Progress progress(options.progress);
        PhaseTimer timer;
        const std::vector<int64_t> functions_run = scan_gpu(trace, options, progress, report);
        timer.lap("gpu scan");
        std::vector<UnseenAllocation> unseen_allocations;  // read with the memory scan's rows
        scan_memory(trace, options, report, &unseen_allocations);
        check_tags(trace, report);
        report.unseen = framework_unseen_memory(trace.db, report.memory.peak_trace_ns, std::move(unseen_allocations));
        timer.lap("memory scan");
        scan_cpu(trace, report);
        timer.lap("cpu scan");
        scan_communication(trace, functions_run, options.collective_durations, report);
        timer.lap("communication");
        return report;
    });
}

}  // namespace tbdprof::analyzer
