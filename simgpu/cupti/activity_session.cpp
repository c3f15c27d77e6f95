#include "activity_session.h"

#include <pthread.h>

#include <algorithm>

#include "external_correlation.h"
#include "record_translation.h"
#include "runtime_api_records.h"

namespace tbdsim::cupti {
namespace {

// Stops the delivery thread when the library is unloaded or the process exits. The session itself
// is never destroyed: a client's exit handler may still flush after static destructors ran.
struct WorkerStopper {
    ActivitySession* session = nullptr;
    ~WorkerStopper() {
        if (session != nullptr) session->buffers().stop_worker();
    }
};
WorkerStopper worker_stopper;

void forget_worker_in_fork_child() {
    if (worker_stopper.session != nullptr) worker_stopper.session->buffers().forget_worker_after_fork();
}

// Graph replays: their records share the graph launch's correlation id and arrive one after another on
// the launching thread; only the first brings the API record and the external correlations. Out of
// line so the common path (ordinary work) computes no thread-local address for it.
[[gnu::noinline, gnu::cold]] bool new_graph_launch(uint32_t correlation_id) {
    thread_local constinit uint32_t last_graph_launch = 0;
    if (correlation_id == last_graph_launch) return false;
    last_graph_launch = correlation_id;
    return true;
}

}  // namespace

ActivitySession* ActivitySession::get() {
    static ActivitySession* const session = []() -> ActivitySession* {
        const DriverLink* driver = driver_link();
        if (driver == nullptr) return nullptr;
        auto* created = new ActivitySession(*driver);
        worker_stopper.session = created;
        pthread_atfork(nullptr, nullptr, forget_worker_in_fork_child);
        return created;
    }();
    return session;
}

ActivitySession::ActivitySession(const DriverLink& driver) : driver_(driver), buffers_(driver.private_api->now_ns) {
    for (auto& flag : enabled_) flag.store(false);
}

bool ActivitySession::supported_kind(CUpti_ActivityKind kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_MEMCPY:
        case CUPTI_ACTIVITY_KIND_MEMSET:
        case CUPTI_ACTIVITY_KIND_MEMORY2:
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER:
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return true;
        default: return false;
    }
}

void ActivitySession::attach_locked() {
    if (sink_slot_ < 0) sink_slot_ = driver_.private_api->add_record_sink(&ActivitySession::sink, this);
    // Added once and kept (the driver has no removal): it does nothing while RUNTIME is off.
    if (!runtime_listener_added_ &&
        driver_.private_api->struct_size >= offsetof(TbdsimPrivateApi, add_runtime_call_listener) + sizeof(void*)) {
        runtime_listener_added_ =
            driver_.private_api->add_runtime_call_listener(&ActivitySession::runtime_call, this) >= 0;
    }
}

void ActivitySession::runtime_call(int entering, void* user) {
    static_cast<ActivitySession*>(user)->on_runtime_call(entering != 0);
}

void ActivitySession::on_runtime_call(bool entering) {
    if (entering) {
        if (enabled(CUPTI_ACTIVITY_KIND_RUNTIME)) begin_runtime_call(now_ns());
        return;
    }
    RecordBytes out;
    end_runtime_call(now_ns(), enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), out);
    if (out.count == 0 || !enabled(CUPTI_ACTIVITY_KIND_RUNTIME)) return;
    buffers_.append(out.bytes, out.size, out.count, driver_.private_api->now_ns());
}

void ActivitySession::set_enabled(CUpti_ActivityKind kind, bool enabled) {
    std::lock_guard lock(attach_mutex_);
    // The sink stays attached from the first enable on: it also tracks pinned and managed ranges.
    if (enabled) attach_locked();
    enabled_[kind].store(enabled);
}

uint64_t ActivitySession::now_ns() const {
    if (CUpti_TimestampCallbackFunc callback = timestamp_callback_.load(); callback != nullptr) return callback();
    return driver_.private_api->now_ns();
}

void ActivitySession::set_timestamp_callback(CUpti_TimestampCallbackFunc callback) {
    // Device records carry driver-clock times; they are shifted by the offset between the client's
    // clock and the driver's, measured once here by bracketing a client read between two driver
    // reads (best of a few tries). A client value inside the bracket is indistinguishable from the
    // driver's clock, so the offset is then exactly 0 (a CLOCK_MONOTONIC client gets the truth).
    int64_t best_offset = 0;
    uint64_t best_width = UINT64_MAX;
    for (int attempt = 0; attempt < 5; ++attempt) {
        const uint64_t before = driver_.private_api->now_ns();
        const uint64_t client_now = callback();
        const uint64_t after = driver_.private_api->now_ns();
        if (after - before >= best_width) continue;
        best_width = after - before;
        best_offset = client_now >= before && client_now <= after
                          ? 0
                          : static_cast<int64_t>(client_now - (before + (after - before) / 2));
    }
    timestamp_offset_ns_.store(best_offset);
    timestamp_callback_.store(callback);
}

void ActivitySession::finalize() {
    {
        std::lock_guard lock(attach_mutex_);
        for (auto& flag : enabled_) flag.store(false);
        if (sink_slot_ >= 0) driver_.private_api->remove_record_sink(sink_slot_);
        sink_slot_ = -1;
    }
    if (buffers_.has_callbacks()) buffers_.flush(/*forced=*/true);
    buffers_.stop_worker();
    buffers_.set_callbacks(nullptr, nullptr);
    buffers_.take_dropped();
    timestamp_callback_.store(nullptr);
    timestamp_offset_ns_.store(0);
}

void ActivitySession::sink(const TbdsimRecord* record, void* user) {
    static_cast<ActivitySession*>(user)->on_record(*record);
}

void ActivitySession::on_record(const TbdsimRecord& record) {
    memory_kinds_.observe(record);
    const int64_t offset = timestamp_offset_ns_.load(std::memory_order_relaxed);
    RecordBytes out;
    // Real CUPTI writes external correlation records only in front of API records ("the activity API
    // record will be preceded by a CUpti_ActivityExternalCorrelation record", cupti_activity.h): with
    // neither RUNTIME nor DRIVER enabled there are none. The DRIVER record of the call that enqueued the
    // work comes now, with the ids pushed at this moment; a runtime call's record when that call ends
    // (runtime_api_records.h). Once per API call (a graph replay is one call).
    if (record.graph_id == 0 || new_graph_launch(record.correlation_id)) {
        if (enabled(CUPTI_ACTIVITY_KIND_DRIVER)) {
            if (enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION))
                add_external_correlations_of_this_thread(record.correlation_id, out);
            const uint64_t enqueued_ns = record.host_launch_ns + static_cast<uint64_t>(offset);
            add_api_record(CUPTI_ACTIVITY_KIND_DRIVER, record.correlation_id, enqueued_ns, enqueued_ns, out);
        }
        note_runtime_work(record.correlation_id);
    }
    switch (record.kind) {
        case TBDSIM_RECORD_KERNEL:
            if (enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
                add_kernel_record(record, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, offset, out);
            } else if (enabled(CUPTI_ACTIVITY_KIND_KERNEL)) {
                add_kernel_record(record, CUPTI_ACTIVITY_KIND_KERNEL, offset, out);
            }
            break;
        case TBDSIM_RECORD_MEMCPY:
            if (enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) add_memcpy_record(record, memory_kinds_, offset, out);
            break;
        case TBDSIM_RECORD_MEMSET:
            if (enabled(CUPTI_ACTIVITY_KIND_MEMSET)) add_memset_record(record, memory_kinds_, offset, out);
            break;
        case TBDSIM_RECORD_ALLOC:
        case TBDSIM_RECORD_FREE:
            if (enabled(CUPTI_ACTIVITY_KIND_MEMORY2)) add_memory_record(record, offset, out);
            break;
        default: break;
    }
    if (out.count == 0) return;
    buffers_.append(out.bytes, out.size, out.count, std::max(record.start_ns, record.end_ns));
}

}  // namespace tbdsim::cupti
