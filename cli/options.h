// Command-line parsing for `tbdprof`.
#pragma once

#include <optional>

#include "capture_options.h"
#include <string>
#include <vector>

namespace tbdprof::cli {

struct RecordOptions {
    std::string output;                // -o FILE; empty: tbdprof-<command>-<timestamp>.sqlite
    bool sim = false;                  // --sim[=MODEL]
    std::string sim_model;             // MODEL of --sim=MODEL, empty for the default
    int stack_depth = 24;              // --stacks N (0 turns allocation stacks off)
    bool force = false;                // --force: replace an existing output
    std::string framework = "none";    // --framework=NAME: allocator preset (see framework_presets.h)
    std::string iteration_range;       // --iteration-range NAME: the NVTX range that marks a step
    CaptureOptions capture;            // --capture-range, --delay, --duration, --steps
    std::string metrics;               // --metrics SET: hardware counters per kernel ("flops"), empty: none
    std::vector<std::string> command;  // after `--` (or from the first word that is not an option)
};

struct ParsedCommandLine {
    enum class Action { Record, Help, Version, UsageError } action = Action::UsageError;
    RecordOptions record;
    std::string error;  // for UsageError: one line, without the "tbdprof: " prefix
};

ParsedCommandLine parse_command_line(const std::vector<std::string>& args);

// The text of `tbdprof --help`.
std::string usage_text();

inline constexpr int kMaxStackDepth = 128;

}  // namespace tbdprof::cli
