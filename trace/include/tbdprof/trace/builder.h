// Builds the SQLite trace of a run from the raw event files its processes left in the run directory.
// Runs after the recorded program ended, in the tbdprof process: the target never pays for SQLite.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tbdprof::trace {

struct BuildOptions {
    std::string run_dir;             // holds raw-<pid>.tbdraw files
    std::string output;              // the .sqlite file to create (replaced if it exists)
    std::string command_line;        // as the user typed it; empty: taken from the first process
    std::optional<int> exit_status;  // the command's exit status (128+N when killed by signal N)
    std::optional<int> crash_signal;
    std::vector<std::pair<std::string, std::string>> notes;  // extra run_notes rows
};

struct BuildResult {
    bool ok = false;
    std::string error;                  // when !ok: one line saying what went wrong
    std::vector<std::string> warnings;  // truncated files, unmatched frees, ...: also in run_notes
    uint64_t raw_files = 0;
    uint64_t events = 0;                // raw records turned into rows
    uint64_t kernels = 0, copies = 0, sets = 0, allocations = 0, edges = 0;
    double seconds = 0;                 // wall time of the build
};

// Reads every raw file of `options.run_dir`, writes the trace to `output + ".tmp"` in one
// transaction and renames it to `output`: a reader never sees a half-written trace. A run directory
// with no raw file (the program never touched CUDA) still gives a valid, empty trace.
BuildResult build_trace(const BuildOptions& options);

}  // namespace tbdprof::trace
