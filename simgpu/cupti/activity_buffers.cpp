#include "activity_buffers.h"

#include <chrono>
#include <cstring>
#include <new>

namespace tbdsim::cupti {
namespace {

// How often the worker looks at retired buffers when nothing wakes it.
constexpr auto kDefaultWorkerPeriod = std::chrono::milliseconds(10);

}  // namespace

void ActivityBuffers::set_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                    CUpti_BuffersCallbackCompleteFunc complete) {
    std::lock_guard lock(mutex_);
    request_ = request;
    complete_ = complete;
    if (request_ != nullptr) ensure_worker_locked();
}

bool ActivityBuffers::has_callbacks() const {
    std::lock_guard lock(mutex_);
    return request_ != nullptr && complete_ != nullptr;
}

bool ActivityBuffers::fits(const Buffer& buffer, std::size_t length) const {
    const bool has_room = buffer.size - buffer.used >= length;
    const bool under_record_limit = buffer.max_records == 0 || buffer.records < buffer.max_records;
    return has_room && under_record_limit;
}

void ActivityBuffers::retire_current_locked() {
    if (!current_) return;
    retired_.push_back(*current_);
    current_.reset();
    worker_wakeup_.notify_one();
}

void ActivityBuffers::append(const uint8_t* bytes, std::size_t length, std::size_t record_count,
                             uint64_t complete_at_ns) {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (current_ && fits(*current_, length)) {
            std::memcpy(current_->data + current_->used, bytes, length);
            current_->used += length;
            current_->records += record_count;
            if (complete_at_ns > current_->complete_at_ns) current_->complete_at_ns = complete_at_ns;
            return;
        }
        retire_current_locked();
        if (!spare_.empty()) {
            current_ = spare_.front();
            spare_.pop_front();
            continue;
        }
        CUpti_BuffersCallbackRequestFunc request = request_;
        if (request == nullptr) {
            dropped_ += record_count;
            return;
        }
        Buffer fresh;
        lock.unlock();
        request(&fresh.data, &fresh.size, &fresh.max_records);
        lock.lock();
        if (fresh.data == nullptr) {
            dropped_ += record_count;
            return;
        }
        if (fresh.size < length) {
            // Too small for even this record: it goes back to the client empty, the record is lost.
            dropped_ += record_count;
            retired_.push_back(fresh);
            worker_wakeup_.notify_one();
            return;
        }
        if (current_) {
            spare_.push_back(fresh);  // another thread installed one meanwhile; keep ours for later
        } else {
            current_ = fresh;
        }
    }
}

void ActivityBuffers::deliver(const Buffer& buffer, CUpti_BuffersCallbackCompleteFunc complete) {
    // Context and stream arguments are deprecated since CUDA 6.0 and always null/0.
    complete(nullptr, 0, buffer.data, buffer.size, buffer.used);
}

void ActivityBuffers::flush(bool forced) {
    std::unique_lock lock(mutex_);
    CUpti_BuffersCallbackCompleteFunc complete = complete_;
    if (complete == nullptr) return;
    const uint64_t now = clock_();
    std::deque<Buffer> ready;
    // Retired buffers first: they hold the older records.
    for (auto it = retired_.begin(); it != retired_.end();) {
        if (forced || it->complete_at_ns <= now) {
            ready.push_back(*it);
            it = retired_.erase(it);
        } else {
            ++it;
        }
    }
    if (current_ && current_->records > 0 && (forced || current_->complete_at_ns <= now)) {
        ready.push_back(*current_);
        current_.reset();
    }
    if (forced) {
        // A forced flush ends a session: unused buffers go back to the client too.
        ready.insert(ready.end(), spare_.begin(), spare_.end());
        spare_.clear();
    }
    ++deliveries_in_progress_;
    lock.unlock();
    for (const Buffer& buffer : ready) deliver(buffer, complete);
    lock.lock();
    --deliveries_in_progress_;
    deliveries_done_.notify_all();
    // Do not return while the worker is still handing a buffer over.
    deliveries_done_.wait(lock, [this] { return deliveries_in_progress_ == 0; });
}

std::size_t ActivityBuffers::take_dropped() {
    std::lock_guard lock(mutex_);
    const std::size_t dropped = dropped_;
    dropped_ = 0;
    return dropped;
}

void ActivityBuffers::set_flush_period_ms(uint32_t period_ms) {
    std::lock_guard lock(mutex_);
    flush_period_ms_ = period_ms;
    worker_wakeup_.notify_one();
}

void ActivityBuffers::ensure_worker_locked() {
    if (worker_.joinable() || stopping_) return;
    worker_ = std::thread([this] { worker_loop(); });
}

void ActivityBuffers::stop_worker() {
    std::thread worker;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        worker_wakeup_.notify_all();
        worker = std::move(worker_);
    }
    if (worker.joinable() && worker.get_id() != std::this_thread::get_id()) worker.join();
    else if (worker.joinable()) worker.detach();
    std::lock_guard lock(mutex_);
    stopping_ = false;  // a later cuptiActivityRegisterCallbacks may start a new worker
}

void ActivityBuffers::forget_worker_after_fork() {
    // Placement new over the copies: the old objects describe the parent's thread and may be
    // locked by it; running their destructors would terminate or deadlock.
    new (&worker_) std::thread();
    new (&mutex_) std::mutex();
    new (&worker_wakeup_) std::condition_variable();
    new (&deliveries_done_) std::condition_variable();
    // The parent's buffers are the parent's client's: handing them to the child's would deliver its
    // records twice (the child's own records start in buffers it requests).
    current_.reset();
    spare_.clear();
    retired_.clear();
    deliveries_in_progress_ = 0;
    stopping_ = false;
}

void ActivityBuffers::worker_loop() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        // Full buffers go back once their records are complete, oldest first.
        if (!retired_.empty() && complete_ != nullptr && retired_.front().complete_at_ns <= clock_()) {
            const Buffer buffer = retired_.front();
            retired_.pop_front();
            CUpti_BuffersCallbackCompleteFunc complete = complete_;
            ++deliveries_in_progress_;
            lock.unlock();
            deliver(buffer, complete);
            lock.lock();
            --deliveries_in_progress_;
            deliveries_done_.notify_all();
            continue;
        }
        const auto period = flush_period_ms_ > 0 ? std::chrono::milliseconds(flush_period_ms_) : kDefaultWorkerPeriod;
        worker_wakeup_.wait_for(lock, period);
    }
}

}  // namespace tbdsim::cupti
