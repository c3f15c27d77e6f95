// The collector's life in one process: configuration from the environment, the lazily started
// writer and CUPTI, exit and crash flushing, fork handling.
//
//   TBDPROF_RUN_DIR      where raw-<pid>.tbdraw goes; without it the collector does nothing
//   TBDPROF_STACK_DEPTH  frames per allocation stack (default 24, 0 = off)
//   TBDPROF_CUPTI        0: do not use CUPTI (host timestamps only)
#pragma once

#include <atomic>
#include <cstdint>

namespace tbdprof::collector {

// From the preload library's constructor. `own_low/high`: the library's code, left out of stacks.
void initialize_from_environment(uint64_t own_low, uint64_t own_high);

extern std::atomic<bool> g_session_started;
void start_session();

// At the first CUDA call a hook records: opens the file, starts the writer and CUPTI, installs the
// exit and fatal-signal handlers. Cheap afterwards.
inline void ensure_session() {
    if (!g_session_started.load(std::memory_order_acquire)) start_session();
}

// atexit (first) and the library destructor (last): flush CUPTI, stop the writer, drain.
void finish_at_exit();
void finish_in_destructor();

// _exit/_Exit (no exit handler runs): CUPTI's buffers and the rings are written, without
// symbolization (malloc may be held), and the file says the process ended so.
void finish_at_quick_exit();

// Before exec: no exit handler runs when the image is replaced, so what is buffered (rings, CUPTI
// buffers) is written now. The writer keeps running: if the exec fails the recording goes on.
void flush_before_exec();

}  // namespace tbdprof::collector
