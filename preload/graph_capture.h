// Stream capture as the launch, copy and set hooks see it: a process-wide count of capturing streams,
// kept by the capture hooks (graph_hooks.cpp), so that the common case (nothing captures) costs a hook
// one relaxed load; only while something captures does a hook ask the driver about its stream.
#pragma once

#include <atomic>
#include <cstdint>

namespace tbdprof::preload {

extern std::atomic<int32_t> g_capturing_streams;

inline bool capture_may_be_active() {
    return g_capturing_streams.load(std::memory_order_relaxed) > 0;
}

// Whether work just enqueued on `stream` through the entry point `entry_name` went into a graph: asks
// the real cuStreamIsCapturing (its _ptsz twin for _ptsz/_ptds entry points, where stream 0 is the
// thread's default stream). Call only when capture_may_be_active().
[[gnu::cold]] bool stream_is_capturing(uint64_t stream, const char* entry_name);

}  // namespace tbdprof::preload
