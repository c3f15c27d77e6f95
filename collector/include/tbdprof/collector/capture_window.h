// Capture control (tbdprof --capture-range=cudaProfilerApi): kernels, copies, sets and graph
// launches are recorded only between cuProfilerStart and cuProfilerStop (repeatable); allocations
// and frees always, so that what is live when a window opens is known. Without the setting the
// window is always open. TBDPROF_CAPTURE_RANGE=cudaProfilerApi selects it (set by the CLI), or
// TBDPROF_CAPTURE_DELAY_NS / TBDPROF_CAPTURE_DURATION_NS (--delay, --duration: a window by time,
// counted from the collector's start in the process).
#pragma once

#include <atomic>
#include <cstdint>

namespace tbdprof::collector {

extern std::atomic<bool> g_capture_window_open;

// One relaxed load on the launch path.
inline bool capture_window_open() {
    return g_capture_window_open.load(std::memory_order_relaxed);
}

// Reads the settings once (at session set-up); false when TBDPROF_CAPTURE_RANGE is not known.
bool init_capture_window(const char* setting);

// cuProfilerStart / cuProfilerStop: open or close the window (CUPTI's device records with it).
void open_capture_window();
void close_capture_window();

// --capture-range=nvtx:NAME: ranges (push/pop or start/end) named NAME, by their string id. The
// window is open while at least one is open, in any thread.
void note_range_begin(uint64_t name_string);
void note_range_end(uint64_t name_string);

// How many windows were opened (0 when capture control is off).
int capture_windows_opened();

}  // namespace tbdprof::collector
