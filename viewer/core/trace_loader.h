// Reads one trace in stages through the trace library's read-only opener (never a second SQLite
// layer) and the analyzer. Plain C++, run on the session's worker threads; throws LoadError with the
// sentence the CLI prints for bad input, or LoadCancelled.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "trace_data.h"

namespace tbdprof::viewer {

class LoadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
class LoadCancelled : public std::exception {};

using ProgressFn = std::function<void(double fraction)>;

// The analyzer's checks first, so bad input is refused with the CLI's sentence.
void check_trace(const std::string& path);
std::unique_ptr<Overview> load_overview(const std::string& path);
// With `whatif` options (as `tbdprof whatif` takes them), also the predicted memory of that scenario.
std::unique_ptr<ReportData> load_report(const std::string& path, const std::string& whatif = {});
// Kernels per device and stream, with their summaries. Checks `cancel` every 64 K rows; then
// returns what it has read so far, marked incomplete, when `keep_partial` is set, else throws.
std::unique_ptr<KernelDetail> load_kernels(const std::string& path, int64_t run_duration_ns,
                                           const std::atomic<bool>& cancel, const ProgressFn& progress,
                                           bool keep_partial = true);

}  // namespace tbdprof::viewer
