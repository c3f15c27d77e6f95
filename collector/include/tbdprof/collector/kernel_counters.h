// Hardware counters per kernel (`tbdprof record --metrics flops`, TBDPROF_METRICS=flops): CUPTI's
// public range profiler with auto ranges (one range per kernel) and kernel replay. Off by default: when
// TBDPROF_METRICS is unset nothing here runs and a launch costs one relaxed load more.
//
// Each recorded launch holds a process-wide lock, so kernels are profiled one at a time (kernel
// replay serializes them anyway and runs each several times: timings of such a run are not
// comparable with a run without --metrics). The profiler is enabled on a context right before the
// context's first recorded launch; every kLaunchesPerPass launches (and at exit) the ranges are
// stopped, decoded, evaluated and written as RawKernelMetric records.
#pragma once

#include <atomic>

#include "tbdprof/collector/recorder.h"

namespace tbdprof::collector::counters {

extern std::atomic<bool> g_requested;  // TBDPROF_METRICS names a metric set and CUPTI is usable

// At session start: reads TBDPROF_METRICS ("flops"); an unknown value is reported once and ignored.
void configure_from_environment();

void before_launch_slow(ThreadState& thread);
void after_launch_slow(ThreadState& thread, bool launched);

// Around one recorded launch.
class LaunchScope {
public:
    explicit LaunchScope(ThreadState& thread) : ts_(thread), active_(g_requested.load(std::memory_order_relaxed)) {
        if (active_) [[unlikely]]
            before_launch_slow(ts_);
    }
    void launched() { launched_ = true; }
    ~LaunchScope() {
        if (active_) [[unlikely]]
            after_launch_slow(ts_, launched_);
    }
    LaunchScope(const LaunchScope&) = delete;
    LaunchScope& operator=(const LaunchScope&) = delete;

private:
    ThreadState& ts_;
    bool active_;
    bool launched_ = false;
};

// At exit: the ranges not written yet.
void finish();

// Fork child: the profiler objects are the parent's; the child records without counters.
void disable_after_fork();

}  // namespace tbdprof::collector::counters
