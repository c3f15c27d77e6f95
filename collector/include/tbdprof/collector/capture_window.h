// Capture control (tbdprof --capture-range=cudaProfilerApi): kernels, copies, sets and graph
// launches are recorded only between cuProfilerStart and cuProfilerStop (repeatable); allocations
// and frees always, so that what is live when a window opens is known. Without the setting the
// window is always open. TBDPROF_CAPTURE_RANGE=cudaProfilerApi selects it (set by the CLI).
#pragma once

#include <atomic>

namespace tbdprof::collector {

extern std::atomic<bool> g_capture_window_open;

// One relaxed load on the launch path.
inline bool capture_window_open() {
    return g_capture_window_open.load(std::memory_order_relaxed);
}

// Reads TBDPROF_CAPTURE_RANGE once (at session set-up); false when the value is not known.
bool init_capture_window(const char* setting);

// cuProfilerStart / cuProfilerStop: open or close the window (CUPTI's device records with it).
void open_capture_window();
void close_capture_window();

// How many windows were opened (0 when capture control is off).
int capture_windows_opened();

}  // namespace tbdprof::collector
