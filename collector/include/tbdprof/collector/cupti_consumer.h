// Device timestamps from CUPTI's Activity API. libcupti.so.13 is loaded with dlopen at the first CUDA
// call the hooks see (never in every process's constructor). Kernel, copy and set records become
// RawDeviceActivity; EXTERNAL_CORRELATION records tie CUPTI's correlation ids to our sequence numbers
// (pushed around each copy and set) or to the launching thread (kernels, see tag_thread). Without CUPTI (not installed, or another subscriber
// holds it) the file says ClockSource HostOnly and recording carries on without device times.
#pragma once

#include <atomic>
#include <cstdint>

#include "tbdprof/collector/recorder.h"

namespace tbdprof::collector::cupti {

using collector::ThreadState;

enum class State : int { NotTried = 0, Starting = 1, Active = 2, Unavailable = 3 };

extern std::atomic<int> g_state;

void start();  // the slow path of ensure_started()

// Cheap after the first call: one relaxed load.
inline void ensure_started() {
    if (g_state.load(std::memory_order_acquire) == static_cast<int>(State::NotTried)) start();
}
inline bool active() { return g_state.load(std::memory_order_relaxed) == static_cast<int>(State::Active); }

// Around each copy and set while active.
void push_correlation(uint64_t sequence);
void pop_correlation();

// Kernel launches: instead of a push and a pop around each one, a thread pushes
// raw::kThreadCorrelationTag | tid once and keeps it pushed (ids pushed around copies and sets nest
// inside it). CUPTI then ties each kernel to the launching thread, and the trace builder pairs the
// thread's launches with those kernels in order. The slow path of ensure_thread_tagged().
void tag_thread(ThreadState& thread);
inline void ensure_thread_tagged(ThreadState& thread) {
    if (thread.cupti_thread_tag == 0 && active()) tag_thread(thread);
}

// Hands completed CUPTI buffers to us. Never called with any collector lock held (CUPTI calls our
// completion callback from inside). `forced`: also incomplete buffers (exit).
void flush(bool forced);

// Fork child: CUPTI's threads and the driver are the parent's; never use them here.
void disable_after_fork();

}  // namespace tbdprof::collector::cupti
