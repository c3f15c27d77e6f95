// Back-pressure instead of drops. A thread whose ring is full waits until the writer has drained it
// (or drains it itself when no drain is in progress), and a thread that launches while CUPTI holds
// more buffer memory than the hold threshold waits until the device has completed enough work for
// CUPTI to hand buffers back. The program is slowed, never broken, and nothing is lost; how long it
// was held is written at exit (RawProcessEnd) and shown by `tbdprof report`.
//
// Limits (environment, set by `tbdprof record`):
//   TBDPROF_MAX_BUFFER_MB  CUPTI buffer memory the collector hands out at most (default 1024). Threads
//                          are held at half of it; past all of it CUPTI drops records (counted, with
//                          their times), Kineto's fixed cap.
//   TBDPROF_MAX_HOLD_MS    the longest a thread waits for room in its ring without any progress of
//                          the writer (default 10000); past it the record is dropped and counted.
// Everything here is off the hot path: reserve_record calls it only when the ring is full, and the
// hooks only when cupti_pressure() is set.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tbdprof::collector {

struct ThreadState;

namespace back_pressure {

enum class DrainAttempt { Drained, Busy, Unavailable };
// Moves every ring's records to the file now, if no drain is in progress (session: the writer's).
using Drainer = DrainAttempt (*)();
void set_drainer(Drainer drainer);

// The slow path of reserve_record: waits for room, draining when it can. Null when the ring stayed
// full (no writer, or no progress within TBDPROF_MAX_HOLD_MS): the caller counts a drop.
uint8_t* reserve_after_wait(ThreadState& thread, size_t bytes);

// Set while CUPTI holds more buffer memory than the hold threshold.
extern std::atomic<bool> g_cupti_pressure;
inline bool cupti_pressure() {
    return g_cupti_pressure.load(std::memory_order_relaxed);
}
// Holds the calling thread (in a hook, after its call) while the pressure lasts, asking CUPTI for its
// completed buffers every few milliseconds (the buffer being filled is handed back only by a flush).
void hold_for_cupti();
using Flusher = void (*)();
void set_cupti_flusher(Flusher flusher);

// CUPTI buffer accounting (cupti_consumer.cpp): counts `bytes` more as handed out unless that would
// pass TBDPROF_MAX_BUFFER_MB (false: refuse the request); a buffer given back. Both set or clear the
// pressure flag.
bool take_cupti_buffer(size_t bytes);
void give_back_cupti_buffer(size_t bytes);
// A buffer request refused (the limit): the time goes to the next CuptiBuffers drop record.
void note_cupti_refusal();
// First and last refusal since the last call (0, 0 when none), and resets them.
void take_cupti_refusal_times(uint64_t& first_host_ns, uint64_t& last_host_ns);

struct Totals {
    uint64_t ring_held_ns = 0;
    uint64_t cupti_held_ns = 0;
    uint32_t ring_holds = 0;
    uint32_t cupti_holds = 0;
};
Totals totals();

// Fork child: the parent's buffers and holds are not ours.
void reset_after_fork();

}  // namespace back_pressure
}  // namespace tbdprof::collector
