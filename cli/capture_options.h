// `tbdprof record` capture control: --capture-range=cudaProfilerApi|nvtx:NAME, --delay SECONDS,
// --duration SECONDS, --steps N:M. Parsed here, handed to the collector as TBDPROF_CAPTURE*
// (collector/include/tbdprof/collector/capture_gate.h).
#pragma once

#include <CLI/CLI.hpp>

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

// The options' words as given, checked by apply_capture_options once all are parsed.
struct CaptureWords {
    std::string range, delay, duration, steps;
};

// Adds --capture-range, --delay, --duration, --steps to record's option table.
void add_capture_options(CLI::App& app, CaptureWords& words);
// Checks the words and their combination; fills `out`. Returns an error sentence, empty when fine.
std::string apply_capture_options(const CLI::App& app, const CaptureWords& words, CaptureOptions& out);
// The collector's environment for these options (empty when none).
std::vector<std::pair<std::string, std::string>> capture_environment(const CaptureOptions& options);

}  // namespace tbdprof::cli
