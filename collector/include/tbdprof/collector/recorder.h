// What the hooks call to record events: per-thread state, record emission into the thread's ring,
// sequence numbers, the live device-address range, interned strings. Everything here is lock-free
// and makes no system calls after a thread's first event (which maps its ring and reads its id).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tbdprof/collector/back_pressure.h"
#include "tbdprof/collector/hash_set.h"
#include "tbdprof/collector/ring_registry.h"
#include "tbdprof/raw_format.h"

namespace tbdprof::collector {

// Everything a hook keeps per thread. Trivially destructible (lives in static TLS).
struct ThreadState {
    RingSlot* slot = nullptr;
    uint32_t tid = 0;
    uint32_t generation = 0;  // fork generation the fields belong to; 0 = not set up
    int hook_depth = 0;       // > 0 while inside a recorded driver call (re-entry is not recorded)
    int library_depth = 0;    // > 0 while inside a recorded library call (cuBLAS)
    uint64_t library_first_sequence = 0;  // launches made inside the current library call
    uint64_t library_last_sequence = 0;
    int device = -1;          // cached current device of this thread; -1 = ask the driver
    bool capture_first_alloc = false;  // cublasCreate: remember the handle's own workspace (its largest)
    uint64_t captured_alloc_address = 0;
    uint64_t captured_alloc_bytes = 0;
    uint64_t cupti_thread_tag = 0;  // external correlation id this thread keeps pushed; 0 = none yet
};

// Process-wide collector state. One instance, zero-initialized static storage.
struct CollectorGlobals {
    std::atomic<bool> enabled{false};           // TBDPROF_RUN_DIR set and initialization done
    std::atomic<uint32_t> fork_generation{1};   // bumped in a fork child
    std::atomic<uint64_t> next_sequence{1};
    std::atomic<uint64_t> live_low{~0ull};      // lowest / highest address of memory allocated so far
    std::atomic<uint64_t> live_high{0};
    std::atomic<uint64_t> threads_without_ring{0};  // events lost because no ring slot was left
    int stack_depth = 24;
};

extern constinit CollectorGlobals g_collector_globals;
extern constinit RingRegistry g_ring_registry;
extern thread_local constinit ThreadState t_thread_state;
inline CollectorGlobals& globals() { return g_collector_globals; }
inline RingRegistry& ring_registry() { return g_ring_registry; }

inline bool collector_enabled() { return globals().enabled.load(std::memory_order_relaxed); }

// Makes `thread` belong to this process (after a fork the parent's ring is not ours).
void refresh_thread_state(ThreadState& thread);

inline ThreadState& thread_state() {
    ThreadState& thread = t_thread_state;
    if (thread.generation != globals().fork_generation.load(std::memory_order_relaxed)) refresh_thread_state(thread);
    return thread;
}

// Gives the thread a ring and announces it (RawThreadInfo). False when no slot is left.
bool attach_thread_ring(ThreadState& thread);

inline uint64_t next_sequence() { return globals().next_sequence.fetch_add(1, std::memory_order_relaxed); }

// Space for one record of `size` bytes (multiple of 8), header not filled (the caller writes the whole
// record). When the ring is full the thread waits for the writer (back_pressure.h); null only when it
// stayed full (counted as a drop, with its time). Must be followed by commit_record(thread, size).
inline uint8_t* reserve_record_space(ThreadState& thread, size_t size) {
    if (thread.slot == nullptr && !attach_thread_ring(thread)) {
        globals().threads_without_ring.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    uint8_t* p = thread.slot->ring.reserve(size);
    if (p == nullptr) [[unlikely]]
        p = back_pressure::reserve_after_wait(thread, size);
    return p;
}

// The same with the header filled.
inline uint8_t* reserve_record(ThreadState& thread, raw::RecordKind kind, size_t size) {
    uint8_t* p = reserve_record_space(thread, size);
    if (p == nullptr) return nullptr;
    raw::RawRecordHeader header{kind, static_cast<uint16_t>(size), thread.tid};
    std::memcpy(p, &header, sizeof header);
    return p;
}
inline void commit_record(ThreadState& thread, size_t size) {
    thread.slot->ring.commit(size);
}

// Copies a fixed-size record (its header is filled here).
template <typename Record>
inline bool emit_record(ThreadState& thread, raw::RecordKind kind, const Record& record) {
    static_assert(sizeof(Record) % 8 == 0);
    uint8_t* p = reserve_record(thread, kind, sizeof(Record));
    if (p == nullptr) return false;
    std::memcpy(p + sizeof(raw::RawRecordHeader), reinterpret_cast<const uint8_t*>(&record) + sizeof(raw::RawRecordHeader),
                sizeof(Record) - sizeof(raw::RawRecordHeader));
    commit_record(thread, sizeof(Record));
    return true;
}

// Widens the range of addresses ever allocated (never shrinks: the builder decides which live
// allocation a candidate pointer falls in; the hook only filters obvious non-pointers).
inline void note_allocated_range(uint64_t address, uint64_t bytes) {
    auto& g = globals();
    uint64_t low = g.live_low.load(std::memory_order_relaxed);
    while (address < low && !g.live_low.compare_exchange_weak(low, address, std::memory_order_relaxed)) {
    }
    const uint64_t end = address + (bytes ? bytes - 1 : 0);
    uint64_t high = g.live_high.load(std::memory_order_relaxed);
    while (end > high && !g.live_high.compare_exchange_weak(high, end, std::memory_order_relaxed)) {
    }
}

// The id of `text` (a hash of it). The first caller to intern a text emits its RawString into its
// own ring; others may use the id before that record is written (readers resolve ids at the end).
uint64_t intern_string(ThreadState& thread, std::string_view text);
// Writes a RawString with the given id (no deduplication).
bool emit_string(ThreadState& thread, uint64_t id, std::string_view text);
inline uint64_t string_id_of(std::string_view text) { return hash_bytes(text.data(), text.size(), 0x84222325cbf29ce4ull); }

// Called in a fork child before anything else: forget the parent's rings, strings and stacks.
void reset_recorder_after_fork();

}  // namespace tbdprof::collector
