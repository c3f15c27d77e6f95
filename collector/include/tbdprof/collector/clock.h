// Clocks shared by hooks, writer and CUPTI conversion. clock_gettime goes through the vDSO: no system
// call on the hot path.
#pragma once

#include <stdint.h>
#include <time.h>

namespace tbdprof::collector {

inline uint64_t monotonic_ns() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

inline uint64_t realtime_ns() {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace tbdprof::collector
