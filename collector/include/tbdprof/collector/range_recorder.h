// NVTX-style ranges as RawRange records. The NVTX injection (preload/nvtx_injection.cpp) turns
// messages into string ids and calls these; they keep the open ranges and write one RawRange when a
// range ends. Lock-free and allocation-free: push/pop ranges live on a fixed per-thread stack,
// start/end ranges (which may end on another thread) in a fixed process-wide table.
#pragma once

#include <cstdint>

namespace tbdprof::collector::ranges {

// Push/pop ranges deeper than this on one thread are not recorded (their pops still balance).
inline constexpr int kMaxDepth = 32;
// Start/end ranges open at the same time beyond this may be lost (the oldest slot is reused).
inline constexpr uint64_t kMaxOpenStartEnd = 1024;

// Opens a push/pop range on the calling thread. Returns its nesting level (0 = outermost) in
// `domain`'s stack, as nvtxRangePush does; -1 when the collector is not recording.
int push(uint64_t name_string, uint64_t domain_string);
// Ends the innermost open range of `domain` on the calling thread and writes it. Returns the level
// of the range it ended, or -1 when there was none (a pop without a push).
int pop(uint64_t domain_string);

// Opens a range that any thread may end; returns its id (never 0 while recording, 0 otherwise).
uint64_t start(uint64_t name_string, uint64_t domain_string);
// Ends and writes the range `id`; an unknown or already ended id is ignored.
void end(uint64_t id);

// An instant: written at once as a range with begin == end.
void mark(uint64_t name_string, uint64_t domain_string);

}  // namespace tbdprof::collector::ranges
