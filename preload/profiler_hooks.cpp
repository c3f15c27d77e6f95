// cuProfilerStart / cuProfilerStop: the program marks what it wants profiled. The runtime's
// cudaProfilerStart/Stop reach these through cuGetProcAddress, so one hook serves both APIs. With
// --capture-range=cudaProfilerApi they open and close capture windows (capture_gate.h); the real
// call always runs, so another profiler attached to the driver sees them too.
#include <cudaProfiler.h>

#include "hook_support.h"

namespace tbdprof::preload {
namespace {

template <auto& Real, ApiPath>
CUresult profiler_start() {
    // Opened before the call returns: the first launch after cudaProfilerStart is inside.
    if (collector::collector_enabled()) {
        collector::ensure_session();
        collector::capture::on_profiler_start();
    }
    return Real.get()();
}

template <auto& Real, ApiPath>
CUresult profiler_stop() {
    const CUresult result = Real.get()();
    if (collector::collector_enabled()) collector::capture::on_profiler_stop();
    return result;
}

using ProfilerFn = decltype(&cuProfilerStart);

}  // namespace

TBD_DRIVER_HOOK(cuProfilerStart, ProfilerFn, profiler_start, (), ())
TBD_DRIVER_HOOK(cuProfilerStop, ProfilerFn, profiler_stop, (), ())

void add_profiler_hooks(std::vector<HookedSymbol>& out) {
    out.push_back(TBD_HOOK_ENTRY(cuProfilerStart, profiler_start));
    out.push_back(TBD_HOOK_ENTRY(cuProfilerStop, profiler_stop));
}

}  // namespace tbdprof::preload
