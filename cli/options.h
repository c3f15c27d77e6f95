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
    bool quiet = false;                // --quiet: no summary after the recording
    std::string framework = "none";    // --framework=NAME: allocator preset (see framework_presets.h)
    std::string iteration_range;       // --iteration-range NAME: the NVTX range that marks a step
    CaptureOptions capture;            // --capture-range, --delay, --duration, --steps
    std::string metrics;               // --metrics SET: hardware counters per kernel ("flops"), empty: none
    int max_buffer_memory_mb = 1024;   // --max-buffer-memory MB: CUPTI buffers per process (back-pressure)
    std::vector<std::string> command;  // after `--` (or from the first word that is not an option)
};

// Parses `tbdprof [record] [options] [--] COMMAND [ARGS...]` (argv without the "record" word).
// nullopt: record with `options`; otherwise the exit status (--help, --version, a usage error,
// each already printed).
std::optional<int> parse_record_command_line(int argc, char** argv, RecordOptions& options);

inline constexpr int kMaxStackDepth = 128;
inline constexpr int kMinBufferMemoryMb = 16;
inline constexpr int kMaxBufferMemoryMb = 1 << 20;

}  // namespace tbdprof::cli
