#include "tbdprof/collector/session.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "tbdprof/collector/back_pressure.h"
#include "tbdprof/collector/capture_gate.h"
#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/cupti_consumer.h"
#include "tbdprof/collector/descriptor_guard.h"
#include "tbdprof/collector/kernel_counters.h"
#include "tbdprof/collector/own_descriptors.h"
#include "tbdprof/collector/raw_writer.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/stack_capture.h"
#include "tbdprof/collector/user_messages.h"

namespace tbdprof::collector {

std::atomic<bool> g_session_started{false};

namespace {

// Constructed when the collector is enabled (it holds containers, so it cannot be constant-initialized
// and must not depend on the order of static initializers in this library).
alignas(RawWriter) unsigned char g_writer_storage[sizeof(RawWriter)];
RawWriter& g_writer = *reinterpret_cast<RawWriter*>(g_writer_storage);
thread_local bool t_in_session_start = false;
char g_run_dir[PATH_MAX] = {};
WriterIdentity g_identity;
std::atomic<bool> g_starting{false};
std::atomic<bool> g_exit_done{false};
std::atomic<bool> g_crash_drained{false};
bool g_atexit_registered = false;
bool g_signals_installed = false;

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
// Termination requests: only taken over when the program left them at their default (terminate).
constexpr int kTerminationSignals[] = {SIGTERM, SIGINT};
struct sigaction g_previous[NSIG];
bool g_installed[NSIG] = {};

void read_file(const char* path, std::string& out) {
    descriptor_guard::OpeningWindow window;
    const int fd = open_own(path, O_RDONLY);
    if (fd < 0) return;
    char chunk[4096];
    for (;;) {
        ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n <= 0) break;
        out.append(chunk, static_cast<size_t>(n));
    }
    ::close(fd);
}

// A launcher's rank variable (RANK, else Open MPI's name for it): -1 when unset or not a number.
int32_t rank_variable(const char* name, const char* mpi_name) {
    const char* text = std::getenv(name);
    if (text == nullptr) text = std::getenv(mpi_name);
    if (text == nullptr || *text == '\0') return -1;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    return *end == '\0' && value >= 0 && value < (1L << 30) ? static_cast<int32_t>(value) : -1;
}

void emit_process_info() {
    ThreadState& thread = thread_state();
    std::string command_line;
    read_file("/proc/self/cmdline", command_line);
    while (!command_line.empty() && command_line.back() == '\0') command_line.pop_back();
    char exe[PATH_MAX] = {};
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) n = 0;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    raw::RawProcessInfo info{};
    info.command_line_string = intern_string(thread, command_line);
    info.executable_string = intern_string(thread, std::string_view(exe, static_cast<size_t>(n)));
    info.hostname_string = intern_string(thread, host);
    info.pid = g_identity.pid;
    info.parent_pid = g_identity.parent_pid;
    const int32_t world_size = rank_variable("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE");
    const int32_t rank = rank_variable("RANK", "OMPI_COMM_WORLD_RANK");
    if (world_size > 0 && rank >= 0 && rank < world_size) {
        info.world_size = world_size;
        info.rank = rank;
        const int32_t local_rank = rank_variable("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK");
        info.local_rank = local_rank >= 0 ? local_rank : rank;
    }
    emit_record(thread, raw::RecordKind::ProcessInfo, info);
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
    // Best effort, once: everything in the rings goes to the file (no symbolization: it allocates).
    if (!g_crash_drained.exchange(true) && g_writer.is_open() && g_writer.drain(false, 200))
        g_writer.append_end(raw::EndReason::Signal, 200);
    // Hand the signal to whoever had it before us: their handler, or the default action.
    const struct sigaction previous = g_previous[sig];
    sigaction(sig, &previous, nullptr);
    if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
        previous.sa_sigaction(sig, info, context);
    } else if (previous.sa_handler == SIG_DFL) {
        raise(sig);  // delivered when this handler returns (the signal is blocked until then)
    } else if (previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
    }
}

void install_signal_handlers() {
    struct sigaction action{};
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int sig : kFatalSignals) {
        if (sigaction(sig, &action, &g_previous[sig]) == 0) g_installed[sig] = true;
    }
    for (int sig : kTerminationSignals) {
        struct sigaction current{};
        if (sigaction(sig, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) != 0 ||
            current.sa_handler != SIG_DFL) {
            continue;
        }
        if (sigaction(sig, &action, &g_previous[sig]) == 0) g_installed[sig] = true;
    }
}

void at_exit_handler() { finish_at_exit(); }

void periodic_flush() { cupti::flush(false); }

// A thread whose ring is full drains it itself when the writer is not draining (back_pressure.h).
back_pressure::DrainAttempt drain_for_producer() { return g_writer.drain_for_producer(); }

// Fork: the writer must not be half-way through its drain when the child copies its state.
void before_fork() {
    if (g_session_started.load()) g_writer.hold_for_fork(100);
}

void after_fork_in_parent() {
    if (g_session_started.load()) g_writer.release_after_fork();
}

void after_fork_in_child() {
    if (!collector_enabled()) return;
    const uint32_t parent = g_identity.pid;
    g_writer.abandon_after_fork();
    reset_recorder_after_fork();
    back_pressure::reset_after_fork();
    capture::reset_after_fork();
    const bool parent_had_cupti = cupti::active();
    cupti::disable_after_fork();
    counters::disable_after_fork();
    g_session_started.store(false);
    g_starting.store(false);
    g_exit_done.store(false);
    g_crash_drained.store(false);
    g_identity.pid = static_cast<uint32_t>(getpid());
    g_identity.parent_pid = parent;
    g_identity.start_host_ns = host_monotonic_ns();
    g_identity.start_unix_ns = unix_time_ns();
    emit_process_info();
    if (parent_had_cupti) {
        raw::RawClockSource clock{};
        clock.source = raw::ClockSource::HostOnly;
        emit_record(thread_state(), raw::RecordKind::ClockSource, clock);
    }
}

}  // namespace

void initialize_from_environment(uint64_t own_low, uint64_t own_high) {
    const char* run_dir = std::getenv("TBDPROF_RUN_DIR");
    if (run_dir == nullptr || *run_dir == '\0' || std::strlen(run_dir) >= sizeof g_run_dir - 32) return;
    std::strcpy(g_run_dir, run_dir);
    set_message_dir(g_run_dir);
    if (const char* depth = std::getenv("TBDPROF_STACK_DEPTH"); depth != nullptr && *depth != '\0') {
        const long value = std::strtol(depth, nullptr, 10);
        globals().stack_depth = value < 0 ? 0 : (value > 128 ? 128 : static_cast<int>(value));
    }
    // Tests only: rings of this many KiB (a power of two, 8 to 8192), so that a burst fills them and
    // back-pressure is exercised (docs/collector.md, Back-pressure).
    if (const char* ring_kb = std::getenv("TBDPROF_TEST_RING_KB"); ring_kb != nullptr && *ring_kb != '\0') {
        const long kb = std::strtol(ring_kb, nullptr, 10);
        if (kb >= 8 && kb <= 8192 && (kb & (kb - 1)) == 0) ring_registry().set_ring_bytes(size_t(kb) << 10);
    }
    set_own_code_range(own_low, own_high);
    g_identity.pid = static_cast<uint32_t>(getpid());
    g_identity.parent_pid = static_cast<uint32_t>(getppid());
    g_identity.start_host_ns = host_monotonic_ns();
    g_identity.start_unix_ns = unix_time_ns();
    new (g_writer_storage) RawWriter();
    capture::configure_from_environment(g_identity.start_host_ns);
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    globals().enabled.store(true, std::memory_order_release);
    emit_process_info();
}

void start_session() {
    if (!collector_enabled()) return;
    if (t_in_session_start) return;  // CUPTI's set-up calls back into the hooks
    bool expected = false;
    if (!g_starting.compare_exchange_strong(expected, true)) {
        // Another thread is setting up: wait, so that our first launch is already seen by CUPTI.
        while (!g_session_started.load(std::memory_order_acquire) && collector_enabled()) sched_yield();
        return;
    }
    t_in_session_start = true;
    // One file per process image: a program that calls exec keeps its pid, and the new image's
    // collector must not overwrite what the old one wrote (raw-PID.tbdraw, then raw-PID-2.tbdraw...).
    char path[PATH_MAX + 32];
    bool opened = false;
    for (int image = 1; image <= 64 && !opened; ++image) {
        if (image == 1) std::snprintf(path, sizeof path, "%s/raw-%u.tbdraw", g_run_dir, g_identity.pid);
        else std::snprintf(path, sizeof path, "%s/raw-%u-%d.tbdraw", g_run_dir, g_identity.pid, image);
        opened = g_writer.open(path, g_identity);
        if (!opened && errno != EEXIST) break;
    }
    if (!opened) {
        // At once: the run directory cannot be written, so the messages file cannot either.
        tell_user_now("cannot write %s: %s; not recording this process", path, std::strerror(errno));
        globals().enabled.store(false);
        t_in_session_start = false;
        return;
    }
    g_writer.set_periodic_task(periodic_flush);
    back_pressure::set_drainer(drain_for_producer);
    g_writer.start_thread();
    counters::configure_from_environment();
    cupti::ensure_started();
    // After CUPTI: exit handlers run in reverse order, so ours flushes before anything CUPTI set up.
    if (!g_atexit_registered) {
        g_atexit_registered = true;
        atexit(at_exit_handler);
    }
    if (!g_signals_installed) {
        g_signals_installed = true;
        install_signal_handlers();
    }
    t_in_session_start = false;
    g_session_started.store(true, std::memory_order_release);
}

void finish_at_exit() {
    if (!g_session_started.load() || g_exit_done.exchange(true)) return;
    counters::finish();  // the last ranges' metrics, before the rings are drained
    cupti::flush(true);
    g_writer.stop_thread();
    g_writer.sample_cpu();
    g_writer.drain(true, 1000);
    g_writer.append_end(raw::EndReason::Exit, 1000);
    g_writer.report_write_failure();
}

void finish_at_quick_exit() {
    // A vfork child (posix_spawn, vfork) shares our memory but not our pid: the rings are the
    // parent's, not its to drain.
    if (static_cast<uint32_t>(syscall(SYS_getpid)) != g_identity.pid) return;
    if (!g_session_started.load() || g_exit_done.exchange(true)) return;
    cupti::flush(true);  // the device records of the last launches
    // No symbolization: _exit is the exit of signal handlers and fork children, where another
    // thread may hold malloc's lock. The writer thread has symbolized all but the last drain's stacks.
    g_writer.drain(false, 1000);
    g_writer.append_end(raw::EndReason::QuickExit, 1000);
    g_writer.report_write_failure();
}

void flush_before_exec() {
    if (!g_session_started.load() || g_exit_done.load()) return;
    cupti::flush(true);
    g_writer.drain(true, 1000);
    g_writer.append_end(raw::EndReason::Exec, 1000);  // if exec fails, the image records on
}

void finish_in_destructor() {
    if (!g_session_started.load()) return;
    finish_at_exit();
    cupti::flush(true);  // work done by static destructors after our exit handler
    g_writer.drain(true, 1000);
}

}  // namespace tbdprof::collector
