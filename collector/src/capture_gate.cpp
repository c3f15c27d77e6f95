#include "tbdprof/collector/capture_gate.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/hash_set.h"
#include "tbdprof/collector/iteration_signature.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/user_messages.h"
#include "tbdprof/step_names.h"

namespace tbdprof::collector::capture {

constinit std::atomic<int> g_gate{kOpen};

namespace {

enum class Mode { Everything, ProfilerApi, Nvtx, Time, Iterations };

// What the time mode is waiting for; what a transition asked for by the writer is.
enum class TimeState { WaitingDelay, Opened, Done };
enum class Pending : int { None = 0, Open = 1, Close = 2 };

struct Config {
    Mode mode = Mode::Everything;
    uint64_t nvtx_name = 0;  // nvtx:NAME, the string id of NAME
    char nvtx_text[256] = {};
    uint64_t delay_ns = 0, duration_ns = 0, process_start_host_ns = 0;
    int64_t first_iteration = 0, last_iteration = 0;
};
// Constant-initialized: the preload library's constructor may run before this file's initializers.
constinit Config g_config{};

// Transitions are rare; one spin lock keeps them (and --steps counting) consistent across threads.
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
struct Locked {
    Locked() {
        while (g_lock.test_and_set(std::memory_order_acquire)) {
        }
    }
    ~Locked() { g_lock.clear(std::memory_order_release); }
};

ActivitySwitch g_activity_switch = nullptr;
bool g_window_open = false;  // under g_lock
std::atomic<bool> g_wants_names{false};
LockFreeHashSet<1024> g_matching_names;  // string ids of range names that open windows

// nvtx mode: matching ranges open (any thread); iterations mode (--steps): NVTX step ranges open, the
// iteration number.
int g_matching_depth = 0;
int g_iteration_depth = 0;
int64_t g_iteration_index = -1;
bool g_iterations_from_nvtx = false;
bool g_iterations_done = false;

// time mode
std::atomic<int> g_time_state{static_cast<int>(TimeState::WaitingDelay)};
std::atomic<int> g_pending{static_cast<int>(Pending::None)};
std::atomic<uint64_t> g_opened_host_ns{0};

int initial_gate() {
    switch (g_config.mode) {
        case Mode::Everything:
            return kOpen;
        case Mode::Iterations:
            return kWatch;  // counts launches until NVTX step ranges show up
        default:
            return kClosed;
    }
}

void emit_window(bool opened, std::string_view reason) {
    ThreadState& thread = thread_state();
    raw::RawCaptureWindow w{};
    w.host_ns = host_monotonic_ns();
    w.reason_string = reason.empty() ? 0 : intern_string(thread, reason);
    w.opened = opened ? 1 : 0;
    emit_record(thread, raw::RecordKind::CaptureWindow, w);
}

// Both under g_lock. CUPTI records before the gate opens and stops after it closes, so every
// recorded launch has CUPTI watching (a launch on another thread racing a transition may still
// lose its device record, and then has host times).
void open_window(std::string_view reason) {
    if (g_window_open) return;
    g_window_open = true;
    if (g_activity_switch != nullptr) g_activity_switch(true);
    emit_window(true, reason);
    // --steps counting launches keeps looking at every launch to see the window's end.
    const bool counting = g_config.mode == Mode::Iterations && !g_iterations_from_nvtx;
    g_gate.store(counting ? kWatch : kOpen, std::memory_order_release);
}

void close_window(int next_gate) {
    if (!g_window_open) {
        g_gate.store(next_gate, std::memory_order_release);
        return;
    }
    g_window_open = false;
    g_gate.store(next_gate, std::memory_order_release);
    emit_window(false, {});
    if (g_activity_switch != nullptr) g_activity_switch(false);
}

std::string iterations_reason(const char* how) {
    return "--steps " + std::to_string(g_config.first_iteration) + ":" + std::to_string(g_config.last_iteration) +
           " (" + how + ")";
}

bool parse_iterations(const char* text, int64_t& first, int64_t& last) {
    char* end = nullptr;
    first = std::strtoll(text, &end, 10);
    if (end == text || *end != ':') return false;
    const char* second = end + 1;
    last = std::strtoll(second, &end, 10);
    return end != second && *end == '\0' && first >= 0 && last >= first;
}

uint64_t read_ns(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? 0 : std::strtoull(value, nullptr, 10);
}

// --steps without NVTX step ranges: one launch, under g_lock. True when it is recorded.
bool count_launch(const void* function) {
    if (g_iterations_done) return false;
    const IterationSignature::Iteration iteration = iteration_signature().on_launch(function);
    if (iteration.index < 0) return false;  // still learning the repeating sequence, or none found
    if (iteration.starts_iteration && iteration.index > g_config.last_iteration) {
        if (!g_window_open) {
            // Recognized only after the requested iterations had passed: nothing can be captured.
            tell_user(
                "--steps %lld:%lld: the repeating launch sequence was recognized only at step "
                "%lld; nothing captured (use NVTX step ranges, or later steps)",
                static_cast<long long>(g_config.first_iteration), static_cast<long long>(g_config.last_iteration),
                static_cast<long long>(iteration.index));
        }
        close_window(kClosed);
        g_iterations_done = true;
        return false;
    }
    if (iteration.starts_iteration && !g_window_open && iteration.index >= g_config.first_iteration) {
        // Normally exactly first_iteration; later when the sequence was recognized after it had passed.
        std::string how = "launches of the kernel that begins each repetition";
        if (iteration.index != g_config.first_iteration)
            how += "; recognized at step " + std::to_string(iteration.index);
        open_window(iterations_reason(how.c_str()));
    }
    return g_window_open;
}

}  // namespace

bool configure_from_environment(uint64_t process_start_host_ns) {
    g_config = Config{};
    g_config.process_start_host_ns = process_start_host_ns;
    const char* setting = std::getenv("TBDPROF_CAPTURE");
    bool ok = true;
    if (setting == nullptr || *setting == '\0') {
        g_config.mode = Mode::Everything;
    } else if (std::strcmp(setting, "cudaProfilerApi") == 0) {
        g_config.mode = Mode::ProfilerApi;
    } else if (std::strncmp(setting, "nvtx:", 5) == 0 && setting[5] != '\0') {
        g_config.mode = Mode::Nvtx;
        std::snprintf(g_config.nvtx_text, sizeof g_config.nvtx_text, "%s", setting + 5);
        g_config.nvtx_name = string_id_of(g_config.nvtx_text);
        g_matching_names.insert(g_config.nvtx_name);
    } else if (std::strncmp(setting, "steps:", 6) == 0 &&
               parse_iterations(setting + 6, g_config.first_iteration, g_config.last_iteration)) {
        g_config.mode = Mode::Iterations;
        g_wants_names.store(true, std::memory_order_relaxed);
    } else if (std::strcmp(setting, "time") == 0) {
        g_config.mode = Mode::Time;
        g_config.delay_ns = read_ns("TBDPROF_CAPTURE_DELAY_NS");
        g_config.duration_ns = read_ns("TBDPROF_CAPTURE_DURATION_NS");
    } else {
        tell_user("TBDPROF_CAPTURE=%s is not understood; recording everything", setting);
        ok = false;
    }
    g_gate.store(initial_gate(), std::memory_order_release);
    if (g_config.mode == Mode::Time && g_config.delay_ns == 0) {
        g_pending.store(static_cast<int>(Pending::Open));
        g_gate.store(kWatch, std::memory_order_release);
    }
    return ok;
}

bool controlled() {
    return g_config.mode != Mode::Everything;
}

bool admits_slow(Event event, const void* function) {
    Locked lock;
    const auto pending = static_cast<Pending>(g_pending.exchange(static_cast<int>(Pending::None)));
    if (pending == Pending::Open && !g_window_open) {
        g_opened_host_ns.store(host_monotonic_ns());
        std::string reason = "--delay " + std::to_string(g_config.delay_ns / 1000000) + " ms";
        if (g_config.duration_ns != 0)
            reason += " --duration " + std::to_string(g_config.duration_ns / 1000000) + " ms";
        open_window(reason);
        g_time_state.store(static_cast<int>(TimeState::Opened));
    } else if (pending == Pending::Close) {
        close_window(kClosed);
        g_time_state.store(static_cast<int>(TimeState::Done));
    }
    if (g_config.mode == Mode::Iterations && !g_iterations_from_nvtx && event == Event::Launch)
        return count_launch(function);
    return g_window_open;
}

void on_profiler_start() {
    if (g_config.mode != Mode::ProfilerApi) return;
    Locked lock;
    open_window("cudaProfilerStart");
}

void on_profiler_stop() {
    if (g_config.mode != Mode::ProfilerApi) return;
    Locked lock;
    close_window(kClosed);
}

bool wants_range_names() {
    return g_wants_names.load(std::memory_order_relaxed);
}

void classify_range_name(uint64_t id, std::string_view text) {
    if (!wants_range_names()) return;
    if (g_config.mode == Mode::Iterations && steps::looks_like_step(text)) g_matching_names.insert(id);
}

void on_range_begin(uint64_t name_string) {
    if (g_config.mode != Mode::Nvtx && g_config.mode != Mode::Iterations) return;
    if (name_string == 0 || !g_matching_names.contains(name_string)) return;
    Locked lock;
    if (g_config.mode == Mode::Nvtx) {
        if (g_matching_depth++ == 0) open_window(std::string("nvtx range ") + g_config.nvtx_text);
        return;
    }
    if (g_iteration_depth++ != 0 || g_iterations_done) return;  // step ranges nested in step ranges count once
    g_iterations_from_nvtx = true;
    ++g_iteration_index;
    if (g_iteration_index == g_config.first_iteration) {
        open_window(iterations_reason("NVTX step ranges"));
    } else if (!g_window_open) {
        g_gate.store(kClosed, std::memory_order_release);  // NVTX decides from now on: no launch counting
    }
}

void on_range_end(uint64_t name_string) {
    if (g_config.mode != Mode::Nvtx && g_config.mode != Mode::Iterations) return;
    if (name_string == 0 || !g_matching_names.contains(name_string)) return;
    Locked lock;
    if (g_config.mode == Mode::Nvtx) {
        if (g_matching_depth > 0 && --g_matching_depth == 0) close_window(kClosed);
        return;
    }
    if (g_iteration_depth > 0 && --g_iteration_depth == 0 && g_iteration_index >= g_config.last_iteration &&
        g_window_open) {
        close_window(kClosed);
        g_iterations_done = true;
    }
}

void on_writer_tick(uint64_t now_host_ns) {
    if (g_config.mode != Mode::Time) return;
    const auto state = static_cast<TimeState>(g_time_state.load());
    if (state == TimeState::WaitingDelay && g_config.delay_ns != 0 &&
        now_host_ns >= g_config.process_start_host_ns + g_config.delay_ns &&
        g_pending.load() == static_cast<int>(Pending::None)) {
        g_pending.store(static_cast<int>(Pending::Open));
        g_gate.store(kWatch, std::memory_order_release);  // the next hook opens the window
    } else if (state == TimeState::Opened && g_config.duration_ns != 0 &&
               now_host_ns >= g_opened_host_ns.load() + g_config.duration_ns &&
               g_pending.load() == static_cast<int>(Pending::None)) {
        g_pending.store(static_cast<int>(Pending::Close));
        g_gate.store(kWatch, std::memory_order_release);  // the next hook closes it
    }
}

void set_activity_switch(ActivitySwitch fn) {
    g_activity_switch = fn;
}

void reset_after_fork() {
    g_lock.clear();
    g_window_open = false;
    g_matching_depth = g_iteration_depth = 0;
    g_iteration_index = -1;
    g_iterations_from_nvtx = g_iterations_done = false;
    g_time_state.store(static_cast<int>(TimeState::WaitingDelay));
    g_pending.store(static_cast<int>(Pending::None));
    iteration_signature().reset();
    configure_from_environment(host_monotonic_ns());  // the child's delay counts from its own start
}

}  // namespace tbdprof::collector::capture
