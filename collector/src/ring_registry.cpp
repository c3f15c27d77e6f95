#include "tbdprof/collector/ring_registry.h"

#include <sys/mman.h>

namespace tbdprof::collector {

RingSlot* RingRegistry::acquire(uint32_t tid) {
    for (size_t i = 0; i < kMaxSlots; ++i) {
        RingSlot& slot = slots_[i];
        uint32_t expected = static_cast<uint32_t>(SlotState::Free);
        if (!slot.state.compare_exchange_strong(expected, static_cast<uint32_t>(SlotState::Active),
                                                std::memory_order_acq_rel)) {
            continue;
        }
        if (!slot.ring.attached()) {
            // Once per slot for the life of the process; pages are touched only as records arrive.
            void* memory = mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (memory == MAP_FAILED) {
                slot.state.store(static_cast<uint32_t>(SlotState::Free), std::memory_order_release);
                return nullptr;
            }
            slot.ring.attach(static_cast<uint8_t*>(memory), ring_bytes_);
        } else {
            slot.ring.reset();  // a retired slot is released only once drained
        }
        slot.tid = tid;
        slot.dropped.store(0, std::memory_order_relaxed);
        slot.dropped_reported = 0;
        slot.first_drop_ns.store(0, std::memory_order_relaxed);
        // Publish the slot count after the slot is fully set up.
        size_t high = high_water_.load(std::memory_order_relaxed);
        while (high < i + 1 && !high_water_.compare_exchange_weak(high, i + 1, std::memory_order_acq_rel)) {
        }
        return &slot;
    }
    return nullptr;
}

void RingRegistry::retire(RingSlot* slot) {
    if (slot != nullptr) slot->state.store(static_cast<uint32_t>(SlotState::Retired), std::memory_order_release);
}

void RingRegistry::reset_after_fork() {
    for (auto& slot : slots_) {
        slot.state.store(static_cast<uint32_t>(SlotState::Free), std::memory_order_relaxed);
        if (slot.ring.attached()) slot.ring.reset();
        slot.dropped.store(0, std::memory_order_relaxed);
        slot.dropped_reported = 0;
    }
}

}  // namespace tbdprof::collector
