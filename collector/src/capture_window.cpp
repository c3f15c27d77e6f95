#include "tbdprof/collector/capture_window.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tbdprof/collector/cupti_consumer.h"
#include "tbdprof/collector/recorder.h"

namespace tbdprof::collector {

std::atomic<bool> g_capture_window_open{true};

namespace {
std::atomic<bool> g_controlled{false};
std::atomic<int> g_windows{0};
std::atomic<uint64_t> g_range_name{0};  // string id of NAME for nvtx:NAME, 0 otherwise
std::atomic<int> g_open_ranges{0};
}  // namespace

long long env_ns(const char* name) {
    const char* text = std::getenv(name);
    return text != nullptr && *text != '\0' ? std::atoll(text) : 0;
}

// --delay / --duration: a detached thread opens the window after the delay and closes it after the
// duration (0: never). It sleeps in between, so it costs nothing on the launch path.
void start_timed_window(long long delay_ns, long long duration_ns) {
    std::thread([delay_ns, duration_ns] {
        std::this_thread::sleep_for(std::chrono::nanoseconds(delay_ns));
        open_capture_window();
        if (duration_ns <= 0) return;
        std::this_thread::sleep_for(std::chrono::nanoseconds(duration_ns));
        close_capture_window();
    }).detach();
}

bool init_capture_window(const char* setting) {
    const long long delay_ns = env_ns("TBDPROF_CAPTURE_DELAY_NS");
    const long long duration_ns = env_ns("TBDPROF_CAPTURE_DURATION_NS");
    const bool timed = delay_ns > 0 || duration_ns > 0;
    const bool profiler_api = setting != nullptr && std::strcmp(setting, "cudaProfilerApi") == 0;
    const bool nvtx = setting != nullptr && std::strncmp(setting, "nvtx:", 5) == 0 && setting[5] != '\0';
    if (setting != nullptr && *setting != '\0' && !profiler_api && !nvtx) return false;
    if (!profiler_api && !nvtx && !timed) return true;
    if (nvtx) g_range_name.store(string_id_of(setting + 5));
    g_controlled.store(true);
    g_capture_window_open.store(false);
    if (timed) start_timed_window(delay_ns, duration_ns);
    return true;
}

void open_capture_window() {
    if (!g_controlled.load() || g_capture_window_open.exchange(true)) return;
    g_windows.fetch_add(1);
    cupti::set_device_activity(true);
}

void close_capture_window() {
    if (!g_controlled.load() || !g_capture_window_open.exchange(false)) return;
    cupti::set_device_activity(false);
}

void note_range_begin(uint64_t name_string) {
    const uint64_t wanted = g_range_name.load(std::memory_order_relaxed);
    if (wanted == 0 || name_string != wanted) return;
    if (g_open_ranges.fetch_add(1) == 0) open_capture_window();
}

void note_range_end(uint64_t name_string) {
    const uint64_t wanted = g_range_name.load(std::memory_order_relaxed);
    if (wanted == 0 || name_string != wanted) return;
    if (g_open_ranges.fetch_sub(1) == 1) close_capture_window();
}

int capture_windows_opened() {
    return g_windows.load();
}

}  // namespace tbdprof::collector
