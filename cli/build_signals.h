// SIGINT/SIGTERM while tbdprof builds the trace after the run. The build takes seconds, so the first
// signal does not lose the recording: it says that the build goes on and what a second signal does.
// The second signal stops at once: it removes the half-written temporary and the output's lock
// (trace::remove_outputs_in_progress), keeps the raw run
// directory and prints the command that builds it later (`tbdprof build RUN_DIR -o OUT`).
#pragma once

#include <string>

namespace tbdprof::cli {

// Guards nest: an inner one (build_into's) leaves the outer one's handlers and count of signals seen.
class BuildSignalGuard {
public:
    BuildSignalGuard(const std::string& run_dir, const std::string& temp_path, const std::string& build_command);
    BuildSignalGuard(const BuildSignalGuard&) = delete;
    BuildSignalGuard& operator=(const BuildSignalGuard&) = delete;
    ~BuildSignalGuard();  // restores the previous handlers
};

}  // namespace tbdprof::cli
