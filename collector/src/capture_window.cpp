#include "tbdprof/collector/capture_window.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tbdprof/collector/cupti_consumer.h"

namespace tbdprof::collector {

std::atomic<bool> g_capture_window_open{true};

namespace {
std::atomic<bool> g_controlled{false};
std::atomic<int> g_windows{0};
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
    if (setting != nullptr && *setting != '\0' && !profiler_api) return false;
    if (!profiler_api && !timed) return true;
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

int capture_windows_opened() {
    return g_windows.load();
}

}  // namespace tbdprof::collector
