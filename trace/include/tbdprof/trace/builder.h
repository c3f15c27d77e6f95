// Builds the SQLite trace of a run from the raw event files its processes left in the run directory.
// Runs after the recorded program ended, in the tbdprof process: the target never pays for SQLite.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tbdprof::trace {

class OutputFile;

struct BuildOptions {
    std::string run_dir;             // holds raw-<pid>.tbdraw files
    std::string output;              // the .sqlite file to create (replaced if it exists)
    std::string command_line;        // as the user typed it; empty: taken from the first process
    std::optional<int> exit_status;  // the command's exit status (128+N when killed by signal N)
    std::optional<int> crash_signal;
    std::vector<std::pair<std::string, std::string>> notes;  // extra run_notes rows
    // When set, the trace is written into this output's temporary and the caller commits it (after
    // tagging, say); `output` is then only used in messages. When null, the builder writes `output`
    // through its own OutputFile, replacing a regular file of that name.
    OutputFile* output_file = nullptr;
    // Called as the build goes from one step to the next (`step` of `steps`, named by `stage`), for
    // a progress line; may be empty.
    std::function<void(const char* stage, int step, int steps)> progress;
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

// Reads every raw file of `options.run_dir`, writes the trace in one transaction to a temporary next
// to `output` and renames it there (output_file.h): a reader never sees a half-written trace. A run directory
// with no raw file (the program never touched CUDA) still gives a valid, empty trace.
BuildResult build_trace(const BuildOptions& options);

}  // namespace tbdprof::trace
