// Runs the recorded command as a child process: environment, fork/exec, SIGINT/SIGTERM forwarding,
// and the wait.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tbdprof::cli {

// Resolves `name` like execvp does (PATH search when it has no '/'). Empty when it is not found or
// not executable; `why` then says which and `status` is what a shell would exit with (127, 126).
std::string resolve_command(const std::string& name, std::string& why, int& status);

// The current environment with `name` set to `value` (replacing it), as NAME=VALUE strings.
using Environment = std::vector<std::string>;
Environment current_environment();
void set_variable(Environment& env, const std::string& name, const std::string& value);
// Value of `name` in `env`, or nullopt.
std::optional<std::string> get_variable(const Environment& env, const std::string& name);

struct ChildOutcome {
    bool started = false;
    std::string start_error;         // when !started: why exec failed
    int exit_status = 0;             // shell-style: the code, or 128+N when signal N killed it
    std::optional<int> signal;       // the signal that killed it
};

// tbdprof's own notes go to stderr, which may be a pipe whose reader has gone (`tbdprof -- PROG 2>&1 |
// head -1`): a note must not kill tbdprof (it then writes no trace and loses the program's status).
// From this call on tbdprof ignores SIGPIPE (a write then fails with EPIPE); run_child gives the
// program the disposition tbdprof was started with, since an ignored SIGPIPE survives exec.
void ignore_sigpipe();

// Runs `program` (a resolved path) with `argv` and `env`, forwarding SIGINT and SIGTERM that tbdprof
// receives from kill(2) (a terminal's Ctrl-C already reaches the whole foreground process group, so
// it is not sent twice). Returns when the child has ended.
ChildOutcome run_child(const std::string& program, const std::vector<std::string>& argv, const Environment& env);

}  // namespace tbdprof::cli
