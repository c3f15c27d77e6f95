// A single-producer single-consumer byte ring holding whole raw records (raw_format.h). The producer
// is one application thread; the consumer is the writer (or the crash handler, which takes the
// writer's drain lock first). Records never straddle the end of the buffer: when one does not fit,
// the producer writes a padding header (kind 0) that tells the consumer to continue at offset 0.
//
// No locks, no system calls, no allocation: reserve() + commit() are a few loads and stores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tbdprof/raw_format.h"

namespace tbdprof::collector {

class SpscRing {
public:
    // `memory` must hold `capacity` bytes; capacity a power of two, at least 4 KiB.
    void attach(uint8_t* memory, size_t capacity) {
        data_ = memory;
        capacity_ = capacity;
        reset();
    }
    void reset() {
        head_.store(0, std::memory_order_relaxed);
        tail_.store(0, std::memory_order_relaxed);
        pending_head_ = 0;
    }
    bool attached() const { return data_ != nullptr; }
    size_t capacity() const { return capacity_; }

    // Producer: room for one record of `bytes` (multiple of 8), contiguous; null when full.
    uint8_t* reserve(size_t bytes) {
        const uint64_t head = head_.load(std::memory_order_relaxed);
        const uint64_t tail = tail_.load(std::memory_order_acquire);
        const size_t pos = static_cast<size_t>(head & (capacity_ - 1));
        size_t padding = 0;
        if (pos + bytes > capacity_) padding = capacity_ - pos;
        if (bytes + padding > capacity_ - (head - tail)) return nullptr;
        if (padding != 0) {
            raw::RawRecordHeader pad{};  // kind 0: skip to the start of the buffer
            std::memcpy(data_ + pos, &pad, sizeof pad);
            pending_head_ = head + padding;
            return data_;
        }
        pending_head_ = head;
        return data_ + pos;
    }
    // Producer: publishes the record written at the last reserve().
    void commit(size_t bytes) { head_.store(pending_head_ + bytes, std::memory_order_release); }

    // Consumer: bytes produced and not yet consumed.
    size_t used() const {
        return static_cast<size_t>(head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_relaxed));
    }

    // Consumer: hands every contiguous run of whole records to `sink(const uint8_t*, size_t)` and
    // frees each run's space as soon as the sink returns (runs are at most kMaxRunBytes, so a producer
    // filling the ring while a large drain is written gets room back early). Returns the bytes of
    // records consumed (padding not counted).
    static constexpr size_t kMaxRunBytes = size_t{256} << 10;
    template <typename Sink>
    size_t consume(Sink&& sink) {
        const uint64_t head = head_.load(std::memory_order_acquire);
        uint64_t tail = tail_.load(std::memory_order_relaxed);
        size_t consumed = 0;
        while (tail < head) {
            const size_t pos = static_cast<size_t>(tail & (capacity_ - 1));
            raw::RawRecordHeader h;
            std::memcpy(&h, data_ + pos, sizeof h);
            if (static_cast<uint16_t>(h.kind) == 0) {  // padding: continue at the start
                tail += capacity_ - pos;
                tail_.store(tail, std::memory_order_release);
                continue;
            }
            // The run ends at padding, at the end of the buffer, at the head, or after the record that
            // crosses kMaxRunBytes (records are whole up to the head and never cross the buffer's end).
            size_t run = 0;
            const size_t limit = static_cast<size_t>(std::min<uint64_t>(head - tail, capacity_ - pos));
            const size_t soft_limit = std::min(limit, kMaxRunBytes);
            while (run < soft_limit) {
                std::memcpy(&h, data_ + pos + run, sizeof h);
                if (static_cast<uint16_t>(h.kind) == 0 || h.size == 0) break;
                run += h.size;
            }
            if (run == 0) break;  // cannot happen with a well-behaved producer
            sink(data_ + pos, run);
            consumed += run;
            tail += run;
            tail_.store(tail, std::memory_order_release);
        }
        return consumed;
    }

private:
    uint8_t* data_ = nullptr;
    size_t capacity_ = 0;
    uint64_t pending_head_ = 0;  // producer-only
    alignas(64) std::atomic<uint64_t> head_{0};
    alignas(64) std::atomic<uint64_t> tail_{0};
};

}  // namespace tbdprof::collector
