// Capture control: which part of a long run is recorded (TBDPROF_CAPTURE, set by `tbdprof record
// --capture-range=... | --delay | --duration | --steps`). Allocations and frees are always recorded;
// kernels, copies, sets, library calls, synchronizations and NVTX ranges only inside a capture
// window. The hooks ask `admits()` before doing anything else: one relaxed load of the gate and a
// branch while the gate is open (no capture control, the default) or closed (outside a window).
// Only in the `Watch` state, where something must be looked at per event (a transition the writer
// asked for, or --steps counting launches), does a hook take the slow path.
//
//   TBDPROF_CAPTURE           cudaProfilerApi | nvtx:NAME | steps:N:M | time (unset: record everything)
//   TBDPROF_CAPTURE_DELAY_NS  time mode: the window opens this long after the process started
//   TBDPROF_CAPTURE_DURATION_NS  time mode: and closes this long after it opened (0 = at exit)
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace tbdprof::collector::capture {

enum Gate : int { kOpen = 0, kClosed = 1, kWatch = 2 };
extern constinit std::atomic<int> g_gate;

enum class Event { Launch, Other };

// The slow path of admits(): applies a pending transition, counts --steps launches.
bool admits_slow(Event event, const void* function);

// Whether the event about to happen is recorded.
inline bool admits(Event event, const void* function = nullptr) {
    const int gate = g_gate.load(std::memory_order_relaxed);
    if (gate == kOpen) [[likely]]
        return true;
    if (gate == kClosed) return false;
    return admits_slow(event, function);
}
// Whether the gate is open now, without side effects (ranges ending, CUPTI set-up).
inline bool is_open() {
    return g_gate.load(std::memory_order_relaxed) == kOpen;
}

// From initialize_from_environment(): reads TBDPROF_CAPTURE*; false (with a message on stderr)
// when the setting cannot be understood, and then everything is recorded.
bool configure_from_environment(uint64_t process_start_host_ns);
// True when some capture control is set (the gate starts closed).
bool controlled();

// cuProfilerStart / cuProfilerStop (cudaProfilerStart/Stop reach them through the driver).
void on_profiler_start();
void on_profiler_stop();

// NVTX: every text the injection interns passes here, so that range names can be matched by id
// later (nvtx:NAME exactly; --steps by the step-like names the tagger uses). Cheap when unused.
void classify_range_name(uint64_t id, std::string_view text);
bool wants_range_names();
void on_range_begin(uint64_t name_string);
void on_range_end(uint64_t name_string);

// The writer thread, every drain: time mode asks for its transitions here.
void on_writer_tick(uint64_t now_host_ns);

// CUPTI started: with the gate closed, its kernel, copy and set activity is switched off until a
// window opens (cuptiActivityDisable / cuptiActivityEnable, public API).
using ActivitySwitch = void (*)(bool enable);
void set_activity_switch(ActivitySwitch fn);

// Fork child: a window open in the parent is not the child's; the child starts closed again.
void reset_after_fork();

}  // namespace tbdprof::collector::capture
