// The private run directory a recording's raw files go to, and what a later tbdprof needs to know
// about one left behind (tbdprof killed, or stopped while building): a small info file inside it
// names the recording, so the next run can say "build it with: tbdprof build DIR -o OUT".
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tbdprof::cli {

struct RunInfo {
    int tbdprof_pid = 0;
    std::string output;        // the trace the recording was writing
    std::string command_line;  // as typed
    std::string device_mode;   // "simulated" or "real"
    std::string sim_model;
    int stack_depth = 24;
    std::optional<int> exit_status;  // known once the command ended
    std::optional<int> crash_signal;
    bool built = false;  // the trace was built (a directory kept with TBDPROF_KEEP_RUN_DIR=1)
};

// $TMPDIR/tbdprof-run-XXXXXX (0700). Empty and `error` set when it cannot be created.
std::string make_run_dir(std::string& error);

// Writes RUN_DIR/tbdprof-run.info (replacing it). Returns false when it cannot.
bool write_run_info(const std::string& run_dir, const RunInfo& info);
// Reads it back; nullopt when the directory has none (or it is unreadable).
std::optional<RunInfo> read_run_info(const std::string& run_dir);

// Run directories of this user in $TMPDIR whose tbdprof is no longer running and whose trace was
// not built.
std::vector<std::string> abandoned_run_dirs();

// The command line that builds `run_dir` into `output`.
std::string build_command_for(const std::string& run_dir, const std::string& output);

}  // namespace tbdprof::cli
