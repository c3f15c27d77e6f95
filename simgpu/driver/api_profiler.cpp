// cuProfilerStart / cuProfilerStop (cudaProfiler.h): a program marks the part of its run it wants
// profiled. The simulated driver collects nothing itself; tools attached to it (tbdprof's
// --capture-range=cudaProfilerApi) hook these entry points. As documented, they need a current
// context, and calling either twice is harmless. With TBDSIM_TRUTH each call writes a `profiler`
// line carrying the correlation id the next work item will be above, so tests can tell which work
// was launched inside the program's own windows.
#include <cudaProfiler.h>

#include "driver_api.h"

using namespace tbdsim::driver;

namespace {

CUresult mark(bool start) {
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    truth_write_profiler(start, next_correlation_id());
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult CUDAAPI cuProfilerStart(void) {
    return mark(true);
}
SIM_API CUresult CUDAAPI cuProfilerStop(void) {
    return mark(false);
}
