// The per-thread rings, in a fixed array so the writer (and a crash handler) can find them without
// locks. A thread takes a free slot at its first event and gives it back when it exits; the writer
// drains a retired slot before it is reused. Ring memory is mapped once per slot and kept.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tbdprof/collector/spsc_ring.h"

namespace tbdprof::collector {

enum class SlotState : uint32_t { Free = 0, Active = 1, Retired = 2 };

struct RingSlot {
    std::atomic<uint32_t> state{0};
    uint32_t tid = 0;
    std::atomic<uint64_t> dropped{0};  // records the producer could not fit (ring full)
    uint64_t dropped_reported = 0;     // writer-only: how many of them were already written out
    // When the drops not yet reported happened (CLOCK_MONOTONIC; first 0 = none since the last report).
    std::atomic<uint64_t> first_drop_ns{0};
    std::atomic<uint64_t> last_drop_ns{0};
    SpscRing ring;
};

class RingRegistry {
public:
    static constexpr size_t kMaxSlots = 512;

    explicit constexpr RingRegistry(size_t ring_bytes) : ring_bytes_(ring_bytes) {}

    // Producer thread: a slot of its own, or null (no slot left, or no memory).
    RingSlot* acquire(uint32_t tid);
    // Producer thread at exit: the writer drains the ring and then frees the slot.
    void retire(RingSlot* slot);

    // Writer: every slot that may hold records.
    template <typename F>
    void for_each_used(F&& f) {
        const size_t used = high_water_.load(std::memory_order_acquire);
        for (size_t i = 0; i < used; ++i) {
            RingSlot& slot = slots_[i];
            const auto state = static_cast<SlotState>(slot.state.load(std::memory_order_acquire));
            if (state != SlotState::Free) f(slot, state);
        }
    }
    // Writer: a retired slot whose ring is empty becomes free again.
    void release(RingSlot& slot) { slot.state.store(static_cast<uint32_t>(SlotState::Free), std::memory_order_release); }

    // Fork child: the parent's threads do not exist here, their records belong to the parent's file.
    void reset_after_fork();

    size_t ring_bytes() const { return ring_bytes_; }
    // Tests only (TBDPROF_TEST_RING_KB): smaller rings, to make them fill. Before any thread records.
    void set_ring_bytes(size_t bytes) { ring_bytes_ = bytes; }

private:
    size_t ring_bytes_;
    std::atomic<size_t> high_water_{0};
    RingSlot slots_[kMaxSlots];
};

}  // namespace tbdprof::collector
