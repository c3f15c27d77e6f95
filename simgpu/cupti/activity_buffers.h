// Buffer discipline of the CUPTI Activity API: records go into buffers the client hands out through
// its request callback; a full buffer is returned through the completion callback by a CUPTI-owned
// worker thread once its records are complete (their device end time has passed), and
// cuptiActivityFlushAll returns buffers on the calling thread. Without a buffer, records are dropped
// and counted. The client's callbacks are never called with the lock held: they may call into CUPTI.
#pragma once

#include <cupti_activity.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace tbdsim::cupti {

class ActivityBuffers {
public:
    // Clock that decides whether records are complete (the driver's device clock).
    using Clock = uint64_t (*)();

    explicit ActivityBuffers(Clock clock) : clock_(clock) {}
    ~ActivityBuffers() { stop_worker(); }
    // In a forked child: the worker thread exists only in the parent; the child has a copy of its
    // std::thread object, which must never be joined, detached or destroyed (joinable: terminate).
    // Forgets it and the parent's pending buffers, and starts from fresh locks.
    void forget_worker_after_fork();
    ActivityBuffers(const ActivityBuffers&) = delete;
    ActivityBuffers& operator=(const ActivityBuffers&) = delete;

    void set_callbacks(CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete);
    bool has_callbacks() const;

    // Appends `record_count` records (already laid out, each 8-byte aligned) that are complete at
    // device time `complete_at_ns`. All of them land in one buffer or are all dropped.
    void append(const uint8_t* bytes, std::size_t length, std::size_t record_count, uint64_t complete_at_ns);

    // cuptiActivityFlushAll: delivers the buffers whose records are all complete, or every buffer
    // holding records when `forced`, and waits for deliveries in progress on the worker.
    void flush(bool forced);

    // Number of records dropped since the last call; resets the count.
    std::size_t take_dropped();

    void set_flush_period_ms(uint32_t period_ms);
    void stop_worker();

private:
    struct Buffer {
        uint8_t* data = nullptr;
        std::size_t size = 0;
        std::size_t used = 0;
        std::size_t max_records = 0;  // 0: as many as fit
        std::size_t records = 0;
        uint64_t complete_at_ns = 0;
    };

    bool fits(const Buffer& buffer, std::size_t length) const;
    void retire_current_locked();
    void deliver(const Buffer& buffer, CUpti_BuffersCallbackCompleteFunc complete);
    void ensure_worker_locked();
    void worker_loop();

    const Clock clock_;
    mutable std::mutex mutex_;
    std::condition_variable worker_wakeup_;
    std::condition_variable deliveries_done_;
    CUpti_BuffersCallbackRequestFunc request_ = nullptr;
    CUpti_BuffersCallbackCompleteFunc complete_ = nullptr;
    std::optional<Buffer> current_;
    std::deque<Buffer> spare_;     // obtained while another thread already installed a buffer
    std::deque<Buffer> retired_;   // full, waiting for their records to complete
    std::size_t dropped_ = 0;
    int deliveries_in_progress_ = 0;
    uint32_t flush_period_ms_ = 0;
    bool stopping_ = false;
    std::thread worker_;
};

}  // namespace tbdsim::cupti
