// The collector's clocks and the one place their conversions live (docs/architecture.md, "Times"):
//   host monotonic  CLOCK_MONOTONIC: every point in time a raw file holds (raw_format.h's *_ns fields)
//   unix            CLOCK_REALTIME: only when the process started, to show when the run happened
//   device          CUPTI's activity timestamps: turned into host monotonic here before they are written
// clock_gettime goes through the vDSO: no system call on the hot path.
#pragma once

#include <errno.h>
#include <stdint.h>
#include <time.h>

namespace tbdprof::collector {

inline constexpr uint64_t kNsPerSecond = 1'000'000'000;

inline uint64_t timespec_ns(const timespec& t) {
    return static_cast<uint64_t>(t.tv_sec) * kNsPerSecond + static_cast<uint64_t>(t.tv_nsec);
}

inline timespec duration_timespec(uint64_t duration_ns) {
    return timespec{static_cast<time_t>(duration_ns / kNsPerSecond), static_cast<long>(duration_ns % kNsPerSecond)};
}

inline uint64_t host_monotonic_ns() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return timespec_ns(now);
}

inline uint64_t unix_time_ns() {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return timespec_ns(now);
}

// Sleeps the whole duration: a signal handled meanwhile does not cut it short.
inline void sleep_for_ns(uint64_t duration_ns) {
    timespec remaining = duration_timespec(duration_ns);
    while (nanosleep(&remaining, &remaining) != 0 && errno == EINTR) {
    }
}

// CUPTI's device timestamps on the host monotonic clock: an offset measured once (zero when CUPTI
// reads our clock, cuptiActivityRegisterTimestampCallback).
struct DeviceClock {
    int64_t host_minus_device_ns = 0;

    // The offset from a device reading taken between two host readings (their midpoint).
    static DeviceClock from_readings(uint64_t host_before_ns, uint64_t device_ns, uint64_t host_after_ns) {
        return DeviceClock{static_cast<int64_t>(host_before_ns / 2 + host_after_ns / 2) -
                           static_cast<int64_t>(device_ns)};
    }
    uint64_t host_monotonic_ns(uint64_t device_ns) const {
        return static_cast<uint64_t>(static_cast<int64_t>(device_ns) + host_minus_device_ns);
    }
};

}  // namespace tbdprof::collector
