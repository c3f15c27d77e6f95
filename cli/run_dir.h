// The private run directory a recording's raw files go to, and what a later tbdprof needs to know
// about one left behind (tbdprof killed, or stopped while building): a small info file inside it
// names the recording, so the next run can say "build it with: tbdprof build DIR -o OUT".
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tbdprof::cli {

// Created in the run directory by the simulated driver when a private interface is asked for.
inline constexpr const char* kStaticRuntimeMark = "static-runtime";

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

// The lock a recording holds on its run directory from start to end (flock on tbdprof-run.lock, so
// it goes away with the process, whatever kills it): `tbdprof build` refuses a directory whose lock
// is held. Returns the descriptor (kept open, close-on-exec), or -1.
int lock_run_dir(const std::string& run_dir);

// What `tbdprof build` may touch: a directory that a recording made (its tbdprof-run.info names a
// tbdprof pid), owned by this user, and no longer being recorded into (neither the recording's lock
// nor a process's raw file is held). Empty when `run_dir` is one, with `info` filled in and
// `lock_fd` holding its lock (close it when done); otherwise one sentence saying why not.
std::string check_finished_run_dir(const std::string& run_dir, RunInfo& info, int& lock_fd);

// Removes what a recording writes into a run directory (its info, lock, messages, raw files) and
// then the directory if that left it empty; never anything else. False when the directory stays.
bool remove_run_dir(const std::string& run_dir);

// The command line that builds `run_dir` into `output`.
std::string build_command_for(const std::string& run_dir, const std::string& output);

}  // namespace tbdprof::cli
