// The process-wide state behind the Activity API: which kinds are enabled, the buffers, the
// timestamp translation, and the sink through which the driver reports every piece of work.
#pragma once

#include <cupti_activity.h>
#include <simgpu/private_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "activity_buffers.h"
#include "driver_link.h"
#include "memory_kinds.h"

namespace tbdsim::cupti {

class ActivitySession {
public:
    // The session, created (and attached to the driver) on first use; null without a driver.
    static ActivitySession* get();

    static bool supported_kind(CUpti_ActivityKind kind);
    void set_enabled(CUpti_ActivityKind kind, bool enabled);

    ActivityBuffers& buffers() { return buffers_; }

    // Host/device timestamps as the client sees them.
    uint64_t now_ns() const;
    void set_timestamp_callback(CUpti_TimestampCallbackFunc callback);

    // cuptiFinalize: disables everything, returns all buffers, detaches from the driver.
    void finalize();

private:
    explicit ActivitySession(const DriverLink& driver);
    static void sink(const TbdsimRecord* record, void* user);
    void on_record(const TbdsimRecord& record);
    static void runtime_call(int entering, void* user);
    void on_runtime_call(bool entering);
    bool enabled(CUpti_ActivityKind kind) const { return enabled_[kind].load(std::memory_order_relaxed); }
    void attach_locked();

    const DriverLink& driver_;
    std::array<std::atomic<bool>, CUPTI_ACTIVITY_KIND_COUNT> enabled_{};
    ActivityBuffers buffers_;
    MemoryKinds memory_kinds_;
    std::atomic<int64_t> timestamp_offset_ns_{0};
    std::atomic<CUpti_TimestampCallbackFunc> timestamp_callback_{nullptr};
    std::mutex attach_mutex_;
    int sink_slot_ = -1;
    bool runtime_listener_added_ = false;
};

}  // namespace tbdsim::cupti
