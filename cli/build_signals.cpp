#include "build_signals.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

#include <tbdprof/trace/output_file.h>

namespace tbdprof::cli {
namespace {

// Prepared before the handlers are installed: a handler may only call async-signal-safe functions.
std::string g_first_message, g_second_message;
volatile sig_atomic_t g_signals_seen = 0;
int g_guards_alive = 0;  // nested guards: only the outermost installs and restores the handlers
struct sigaction g_old_int {
}, g_old_term{};

void say(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(STDERR_FILENO, text.data() + done, text.size() - done);
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

void on_signal(int signal_number) {
    const bool first = g_signals_seen == 0;
    g_signals_seen = 1;
    if (first) {
        say(g_first_message);
        return;
    }
    // The temporary and the output's lock both (the lock was left behind before).
    trace::remove_outputs_in_progress(false);
    say(g_second_message);
    _exit(128 + signal_number);
}

}  // namespace

BuildSignalGuard::BuildSignalGuard(
    const std::string& run_dir,
    const std::string& /*temp_path: removed with the lock by trace::remove_outputs_in_progress*/,
    const std::string& build_command) {
    if (g_guards_alive++ > 0) return;  // installed already (the recording's, around its whole build)
    g_first_message = "\ntbdprof: still building the trace from " + run_dir +
                      "; signal again to stop now (the raw files are then kept)\n";
    g_second_message = "tbdprof: stopped; nothing was written to the output; the raw files are kept in " + run_dir +
                       "\ntbdprof: build the trace later with: " + build_command + "\n";
    g_signals_seen = 0;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &g_old_int);
    sigaction(SIGTERM, &action, &g_old_term);
}

BuildSignalGuard::~BuildSignalGuard() {
    if (--g_guards_alive > 0) return;
    sigaction(SIGINT, &g_old_int, nullptr);
    sigaction(SIGTERM, &g_old_term, nullptr);
}

}  // namespace tbdprof::cli
