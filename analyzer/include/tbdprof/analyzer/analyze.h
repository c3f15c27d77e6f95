// Computing a Report from a trace file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// A trace that cannot be analysed: missing, not SQLite, corrupt, too new, not a tbdprof trace.
// what() is one sentence meant for the user. busy(): it could not be read now (another program
// holds a lock on it while writing it), which says nothing about the file: try again later.
class TraceError : public std::runtime_error {
public:
    explicit TraceError(const std::string& message, bool busy = false) : std::runtime_error(message), busy_(busy) {}
    bool busy() const { return busy_; }

private:
    bool busy_ = false;
};

enum class WindowChoice { steady, iterations, all };

// Progress of the long scans, for a caller that shows it (tbdprof draws a line on a terminal): the
// stage ("reading kernels") and rows `done` of `total` (0: unknown); called with stage nullptr when
// the analysis is done with it, finished or failed (a progress line is erased then).
using AnalysisProgress = std::function<void(const char* stage, int64_t done, int64_t total)>;

struct AnalysisOptions {
    WindowChoice window = WindowChoice::steady;
    std::string iteration_range;        // a range name to use as the iteration marker
    std::optional<int64_t> batch_size;  // samples per iteration, for samples/s
    int top_kernels = 10;
    int largest_allocations = 10;
    int timeline_points = 400;
    // Memory timeline with the state after every allocation and free (equal times kept apart)
    // instead of `timeline_points` buckets: exact, for readers that summarise it themselves.
    bool full_memory_timeline = false;
    int utilization_buckets = 200;
    AnalysisProgress progress;             // empty: no progress reported
    int threads = 0;                       // kernel-scan threads; 0: $TBDPROF_THREADS, else 2 for big traces
    int64_t scan_round_rows = 0;           // kernels per round of the kernel scan; 0: the default (tests set less)
    std::optional<int64_t> memory_device;  // memory replayed for this device only (device_memory.h)
    // Each rank's communication kernels in the window, their durations in start order: what `tbdprof
    // fleet` compares across traces that do not share a clock (docs/fleet.md). Off: not in the report.
    bool collective_durations = false;
};

// Throws TraceError for bad input; never crashes on a corrupt file.
Report analyze_trace(const std::string& path, const AnalysisOptions& options);

// The checks analyze_trace makes before it reads anything (missing, empty, not SQLite, truncated, too
// new, incomplete, no GPU activity), with the same TraceError sentence; for readers such as the viewer.
void check_trace(const std::string& path);
// Every iteration the report's detection finds (begin, end), whatever the window; sorted by begin.
std::vector<std::pair<int64_t, int64_t>> trace_iterations(const std::string& path,
                                                          const std::string& iteration_range = {});

std::optional<WindowChoice> parse_window(std::string_view text);
const char* window_name(WindowChoice choice);

}  // namespace tbdprof::analyzer
