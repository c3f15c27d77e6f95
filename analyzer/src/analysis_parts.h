// The pieces analyze_trace() is made of, one scan each. Internal to the analyzer.
#pragma once

#include "tbdprof/analyzer/tag_plausibility.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "progress.h"
#include "tbdprof/analyzer/analyze.h"
#include "trace_file.h"

namespace tbdprof::analyzer {

struct IterationSpans {
    std::string source;  // "iterations table" or "ranges named like '<family>'"; empty: none
    std::vector<std::pair<int64_t, int64_t>> spans;  // sorted by begin, non-overlapping
    // Per span: the start and the end of the device work launched in it (iterations.device_begin_ns,
    // device_end_ns), 0 unknown.
    std::vector<int64_t> device_begins;
    std::vector<int64_t> device_ends;
    // Stored iterations (or step ranges) that end before they begin: damaged rows, left out of every
    // figure and named in the report's notes.
    int64_t invalid = 0;
    // The process whose stored iterations these are: in a multi-process run every rank has its own,
    // and one process's (the most steps, the lowest id on ties) stand for the run. None for ranges.
    std::optional<int64_t> process;
    // That process's stored spans the tagger set apart as not training (a validation pass, a
    // checkpoint save between steps): not iterations, counted so the report can say why the table
    // holds more rows than it counts.
    int64_t set_apart = 0;
};

IterationSpans detect_iterations(const TraceFile& trace, const std::string& user_range);
Window choose_window(WindowChoice choice, const IterationSpans& iterations, int64_t run_duration_ns);
IterationMetrics iteration_metrics(const IterationSpans& iterations, const Window& window,
                                   std::optional<int64_t> batch_size);

// GPU scan: kernels, copies and sets, library calls. Fills devices, utilization, FLOPs, kernels.
// Returns the functions any kernel row runs (ids, ascending), for the communication pass.
std::vector<int64_t> scan_gpu(TraceFile& trace, const AnalysisOptions& options, Progress& progress, Report& report);
struct UnseenAllocation;  // framework_unseen.h

// Memory replay over the whole run (memory is not windowed: peak is the run's peak). With `unseen`,
// the allocation rows the framework-unseen estimate counts are collected from the same read.
void scan_memory(TraceFile& trace, const AnalysisOptions& options, Report& report,
                 std::vector<UnseenAllocation>* unseen = nullptr);
// The capture_windows table (absent in traces of older versions: none).
std::vector<CaptureWindowInfo> read_capture_windows(const TraceFile& trace);
void scan_cpu(const TraceFile& trace, Report& report);
// After the iterations: communication against computation per rank (communication.cpp), when a
// kernel runs one of `functions_run` that is a communication function.
void scan_communication(const TraceFile& trace, const std::vector<int64_t>& functions_run, bool collective_durations,
                        Report& report);
// After scan_memory and the iterations: whether the memory tags are plausible (tag_plausibility.cpp).
void check_tags(TraceFile& trace, Report& report);
// What the plausibility check reads from the trace beyond the memory figures (tag_plausibility.cpp);
// shared with the what-if model, which judges the tags by the same rules.
TagCheckFacts read_tag_check_facts(TraceFile& trace, int64_t training_iterations, bool tagged);

}  // namespace tbdprof::analyzer
