// A fixed-size, lock-free set of non-zero 64-bit keys (open addressing, linear probing). Used to emit
// something once per distinct key from any thread: interned strings, call stacks. Never allocates;
// insert() tells the caller whether it was first.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tbdprof::collector {

enum class InsertResult { Inserted, Present, Full };

template <size_t Slots>
class LockFreeHashSet {
    static_assert((Slots & (Slots - 1)) == 0, "Slots must be a power of two");

public:
    InsertResult insert(uint64_t key) {
        if (key == 0) key = 1;
        size_t index = static_cast<size_t>(mix(key)) & (Slots - 1);
        for (size_t probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & (Slots - 1)) {
            uint64_t current = slots_[index].load(std::memory_order_acquire);
            if (current == key) return InsertResult::Present;
            if (current == 0) {
                if (slots_[index].compare_exchange_strong(current, key, std::memory_order_acq_rel)) {
                    return InsertResult::Inserted;
                }
                if (current == key) return InsertResult::Present;
            }
        }
        return InsertResult::Full;
    }

    bool contains(uint64_t key) const {
        if (key == 0) key = 1;
        size_t index = static_cast<size_t>(mix(key)) & (Slots - 1);
        for (size_t probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & (Slots - 1)) {
            uint64_t current = slots_[index].load(std::memory_order_acquire);
            if (current == key) return true;
            if (current == 0) return false;
        }
        return false;
    }

    // Only when no other thread can touch the set (fork child, tests).
    void clear() {
        for (auto& slot : slots_) slot.store(0, std::memory_order_relaxed);
    }

private:
    // Bounded probing keeps the worst case cheap; a set this crowded reports Full instead.
    static constexpr size_t kMaxProbes = 64;
    static uint64_t mix(uint64_t x) {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        return x;
    }
    std::atomic<uint64_t> slots_[Slots] = {};
};

// FNV-1a over bytes, then finalized; never returns 0.
inline uint64_t hash_bytes(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull) {
    const auto* p = static_cast<const uint8_t*>(data);
    uint64_t h = seed;
    for (size_t i = 0; i < size; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h == 0 ? 1 : h;
}

}  // namespace tbdprof::collector
