#include "tbdprof/collector/capture_window.h"

#include <cstring>

#include "tbdprof/collector/cupti_consumer.h"

namespace tbdprof::collector {

std::atomic<bool> g_capture_window_open{true};

namespace {
std::atomic<bool> g_controlled{false};
std::atomic<int> g_windows{0};
}  // namespace

bool init_capture_window(const char* setting) {
    if (setting == nullptr || *setting == '\0') return true;
    if (std::strcmp(setting, "cudaProfilerApi") != 0) return false;
    g_controlled.store(true);
    g_capture_window_open.store(false);
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
