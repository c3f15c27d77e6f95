// `tbdprof record` capture control: --capture-range=cudaProfilerApi|nvtx:NAME, --delay SECONDS,
// --duration SECONDS, --steps N:M. Parsed here, handed to the collector as TBDPROF_CAPTURE*
// (collector/include/tbdprof/collector/capture_gate.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tbdprof::cli {

struct CaptureOptions {
    std::string range;  // "cudaProfilerApi" or "nvtx:NAME"; empty: none
    bool has_delay = false, has_duration = false;
    uint64_t delay_ns = 0, duration_ns = 0;
    bool has_steps = false;
    int64_t first_step = 0, last_step = 0;

    bool any() const { return !range.empty() || has_delay || has_duration || has_steps; }
};

enum class CaptureParse { NotMine, Parsed, Error };

// Looks at args[i] (and args[i + 1] for a separate value, advancing i). On Error, `error` is one line.
CaptureParse parse_capture_option(const std::vector<std::string>& args, size_t& i, CaptureOptions& out,
                                  std::string& error);
// After all options: combinations that make no sense. Empty when fine.
std::string check_capture_options(const CaptureOptions& options);
// The collector's environment for these options (empty when none).
std::vector<std::pair<std::string, std::string>> capture_environment(const CaptureOptions& options);

// Lines for `tbdprof --help`.
const char* capture_usage();

}  // namespace tbdprof::cli
