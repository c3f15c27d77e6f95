// Turns a stream of signed allocation events into allocations with lifetimes.
//
// With addresses (Kineto >= 1.9: args.Addr), a free (-bytes) closes the live allocation at its address.
// Without them (2021 traces, memory-timeline exports), a free closes the most recent live allocation
// of the same size on the same device. That pairing is a guess, but every pairing of
// equal sizes gives the same live-bytes curve, so memory totals over time stay exact.
#pragma once

#include "foreign_trace.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tbdprof::interop {

struct MatchedAllocation {
    int32_t device = 0;
    int64_t address = 0;  // synthetic (see docs/interop.md) when the source has none
    int64_t bytes = 0;
    int64_t alloc_ns = 0;  // absolute, like the events; preexisting blocks get `window_begin_ns`
    std::optional<int64_t> free_ns;
    HostThread alloc_thread;
    std::optional<HostThread> free_thread;
    bool preexisting = false;
    std::optional<std::string> category;
};

struct MatchResult {
    std::vector<MatchedAllocation> allocations;
    bool by_address = false;
    uint64_t gpu_events = 0;
    uint64_t preexisting = 0;  // frees of blocks allocated before the trace began
    std::map<std::string, uint64_t> warnings;
    std::map<int32_t, int64_t> peak_total_allocated, peak_total_reserved;  // per device, when reported
    // Per device: bytes allocated before the trace and never freed in it, known from Kineto's
    // "Total Allocated"; stored as one block live for the whole trace (see docs/interop.md).
    std::map<int32_t, int64_t> untracked_bytes;
};

// Only device memory (Kineto Device Type 1) becomes allocations; `events` is sorted here by time.
MatchResult match_allocations(std::vector<MemoryEvent>& events, int64_t window_begin_ns);

}  // namespace tbdprof::interop
