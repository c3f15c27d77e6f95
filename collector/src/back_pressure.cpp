#include "tbdprof/collector/back_pressure.h"

#include <time.h>

#include <cerrno>
#include <cstdlib>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/recorder.h"

namespace tbdprof::collector::back_pressure {

std::atomic<bool> g_cupti_pressure{false};

namespace {

constexpr uint64_t kDefaultMaxBufferBytes = uint64_t{1024} << 20;
constexpr uint64_t kDefaultMaxHoldNs = 10'000'000'000;
// Between two looks at a full ring (the writer drains a 256 KiB run in well under this).
constexpr uint64_t kRingPollNs = 20'000;

std::atomic<Drainer> g_drainer{nullptr};
std::atomic<Flusher> g_flusher{nullptr};
constexpr uint64_t kHoldPollNs = 100'000;
constexpr uint64_t kHoldFlushNs = 5'000'000;
std::atomic<uint64_t> g_cupti_bytes_out{0};
std::atomic<uint64_t> g_first_refusal_host_ns{0};
std::atomic<uint64_t> g_last_refusal_host_ns{0};

std::atomic<uint64_t> g_ring_held_duration_ns{0};
std::atomic<uint64_t> g_cupti_held_duration_ns{0};
std::atomic<uint32_t> g_ring_holds{0};
std::atomic<uint32_t> g_cupti_holds{0};

uint64_t env_u64(const char* name, uint64_t fallback, uint64_t unit) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0') return fallback;  // `tbdprof record` checked it; a hand-set typo
    return static_cast<uint64_t>(value) * unit;
}

uint64_t max_buffer_bytes() {
    static const uint64_t bytes = env_u64("TBDPROF_MAX_BUFFER_MB", kDefaultMaxBufferBytes, uint64_t{1} << 20);
    return bytes;
}

uint64_t max_hold_duration_ns() {
    static const uint64_t ns = env_u64("TBDPROF_MAX_HOLD_MS", kDefaultMaxHoldNs, 1'000'000);
    return ns;
}

void count_ring_drop(RingSlot& slot) {
    const uint64_t now = host_monotonic_ns();
    uint64_t expected = 0;
    slot.first_drop_ns.compare_exchange_strong(expected, now, std::memory_order_relaxed);
    slot.last_drop_ns.store(now, std::memory_order_relaxed);
    slot.dropped.fetch_add(1, std::memory_order_relaxed);
}

// Waits for room: drains when no drain is in progress, else watches the writer empty the ring.
// Gives up when there is no writer, or when the ring did not shrink for max_hold_duration_ns().
uint8_t* wait_for_room(RingSlot& slot, size_t bytes) {
    const Drainer drainer = g_drainer.load(std::memory_order_acquire);
    if (drainer == nullptr) return nullptr;
    uint64_t last_progress_host_ns = host_monotonic_ns();
    size_t last_used = slot.ring.used();
    for (;;) {
        const DrainAttempt attempt = drainer();
        if (attempt == DrainAttempt::Unavailable) return nullptr;
        if (uint8_t* p = slot.ring.reserve(bytes); p != nullptr) return p;
        const uint64_t now = host_monotonic_ns();
        const size_t used = slot.ring.used();
        if (used < last_used) last_progress_host_ns = now;
        last_used = used;
        if (now - last_progress_host_ns > max_hold_duration_ns()) return nullptr;
        if (attempt == DrainAttempt::Busy) sleep_for_ns(kRingPollNs);
    }
}

}  // namespace

void set_drainer(Drainer drainer) {
    g_drainer.store(drainer, std::memory_order_release);
}

uint8_t* reserve_after_wait(ThreadState& thread, size_t bytes) {
    RingSlot& slot = *thread.slot;
    const uint64_t started = host_monotonic_ns();
    uint8_t* p = bytes <= slot.ring.capacity() ? wait_for_room(slot, bytes) : nullptr;
    g_ring_held_duration_ns.fetch_add(host_monotonic_ns() - started, std::memory_order_relaxed);
    g_ring_holds.fetch_add(1, std::memory_order_relaxed);
    if (p == nullptr) count_ring_drop(slot);
    return p;
}

void set_cupti_flusher(Flusher flusher) {
    g_flusher.store(flusher, std::memory_order_release);
}

void hold_for_cupti() {
    const uint64_t started = host_monotonic_ns();
    uint64_t last_flush = started;
    for (uint64_t now = started;
         g_cupti_pressure.load(std::memory_order_relaxed) && now - started < max_hold_duration_ns();
         now = host_monotonic_ns()) {
        if (now - last_flush >= kHoldFlushNs) {
            if (const Flusher flush = g_flusher.load(std::memory_order_acquire); flush != nullptr) flush();
            last_flush = now;
        }
        sleep_for_ns(kHoldPollNs);
    }
    g_cupti_held_duration_ns.fetch_add(host_monotonic_ns() - started, std::memory_order_relaxed);
    g_cupti_holds.fetch_add(1, std::memory_order_relaxed);
}

// Threads are held above half of the limit and let go at three eighths (so that each hold lets the
// device complete a good share of the queued work before the program runs on).
bool take_cupti_buffer(size_t bytes) {
    const uint64_t out = g_cupti_bytes_out.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (out > max_buffer_bytes()) {
        g_cupti_bytes_out.fetch_sub(bytes, std::memory_order_relaxed);
        return false;
    }
    if (out > max_buffer_bytes() / 2) g_cupti_pressure.store(true, std::memory_order_relaxed);
    return true;
}

void give_back_cupti_buffer(size_t bytes) {
    const uint64_t out = g_cupti_bytes_out.fetch_sub(bytes, std::memory_order_relaxed) - bytes;
    if (out <= max_buffer_bytes() / 8 * 3) g_cupti_pressure.store(false, std::memory_order_relaxed);
}

void note_cupti_refusal() {
    const uint64_t now = host_monotonic_ns();
    uint64_t expected = 0;
    g_first_refusal_host_ns.compare_exchange_strong(expected, now, std::memory_order_relaxed);
    g_last_refusal_host_ns.store(now, std::memory_order_relaxed);
}

void take_cupti_refusal_times(uint64_t& first_host_ns, uint64_t& last_host_ns) {
    last_host_ns = g_last_refusal_host_ns.exchange(0, std::memory_order_relaxed);
    first_host_ns = g_first_refusal_host_ns.exchange(0, std::memory_order_relaxed);
    if (first_host_ns == 0) first_host_ns = last_host_ns;
}

Totals totals() {
    Totals t;
    t.ring_held_ns = g_ring_held_duration_ns.load(std::memory_order_relaxed);
    t.cupti_held_ns = g_cupti_held_duration_ns.load(std::memory_order_relaxed);
    t.ring_holds = g_ring_holds.load(std::memory_order_relaxed);
    t.cupti_holds = g_cupti_holds.load(std::memory_order_relaxed);
    return t;
}

void reset_after_fork() {
    g_cupti_pressure.store(false);
    g_cupti_bytes_out.store(0);
    g_first_refusal_host_ns.store(0);
    g_last_refusal_host_ns.store(0);
    g_ring_held_duration_ns.store(0);
    g_cupti_held_duration_ns.store(0);
    g_ring_holds.store(0);
    g_cupti_holds.store(0);
}

}  // namespace tbdprof::collector::back_pressure
