// cuProfilerStart / cuProfilerStop (also what cudaProfilerStart/Stop call): under
// --capture-range=cudaProfilerApi they open and close the capture window (capture_window.h).
#include <cudaProfiler.h>

#include "hook_support.h"
#include "tbdprof/collector/capture_window.h"

namespace tbdprof::preload {
namespace {

template <auto& Real, ApiPath Path>
CUresult profiler_start() {
    const CUresult result = Real.get()();
    if (result == CUDA_SUCCESS) collector::open_capture_window();
    return result;
}

template <auto& Real, ApiPath Path>
CUresult profiler_stop() {
    const CUresult result = Real.get()();
    if (result == CUDA_SUCCESS) collector::close_capture_window();
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
