// The exported Activity API functions of libcupti.so.13.
#include <cupti_activity.h>
#include <cupti_result.h>

#include <cstring>

#include "activity_session.h"
#include "driver_link.h"
#include "external_correlation.h"
#include "record_translation.h"

#define TBDSIM_CUPTI_EXPORT extern "C" __attribute__((visibility("default")))

using tbdsim::cupti::ActivitySession;

namespace {

bool valid_kind(CUpti_ActivityKind kind) {
    return kind > CUPTI_ACTIVITY_KIND_INVALID && kind < CUPTI_ACTIVITY_KIND_COUNT;
}

CUptiResult set_kind_enabled(CUpti_ActivityKind kind, bool enabled) {
    if (!valid_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
    // Kinds whose activity the simulated driver does not report (API calls, overhead, ...) are refused
    // rather than silently producing nothing.
    if (!ActivitySession::supported_kind(kind)) return CUPTI_ERROR_NOT_SUPPORTED;
    ActivitySession* session = ActivitySession::get();
    if (session == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    session->set_enabled(kind, enabled);
    return CUPTI_SUCCESS;
}

CUpti_ActivityKind kind_at(const uint8_t* record) {
    CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_INVALID;
    std::memcpy(&kind, record, sizeof kind);
    return kind;
}

}  // namespace

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) { return set_kind_enabled(kind, true); }

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
    return set_kind_enabled(kind, false);
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                               CUpti_BuffersCallbackCompleteFunc complete) {
    if (request == nullptr || complete == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    ActivitySession* session = ActivitySession::get();
    if (session == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    session->buffers().set_callbacks(request, complete);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) {
    ActivitySession* session = ActivitySession::get();
    if (session == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    if (!session->buffers().has_callbacks()) return CUPTI_ERROR_INVALID_OPERATION;
    session->buffers().flush((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
    return CUPTI_SUCCESS;
}

// Deprecated: context and stream are ignored, as in real CUPTI.
TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityFlush(CUcontext /*context*/, uint32_t /*streamId*/, uint32_t flag) {
    return cuptiActivityFlushAll(flag);
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t period_ms) {
    ActivitySession* session = ActivitySession::get();
    if (session == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    session->buffers().set_flush_period_ms(period_ms);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_bytes,
                                                           CUpti_Activity** record) {
    if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    const uint8_t* const end = buffer + valid_bytes;
    uint8_t* next = buffer;
    if (*record != nullptr) {
        auto* previous = reinterpret_cast<uint8_t*>(*record);
        const size_t previous_size = tbdsim::cupti::activity_record_size(kind_at(previous));
        if (previous_size == 0) return CUPTI_ERROR_INVALID_KIND;
        next = previous + previous_size;
    }
    if (next >= end) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    if (static_cast<size_t>(end - next) < sizeof(CUpti_Activity)) return CUPTI_ERROR_INVALID_KIND;
    const size_t size = tbdsim::cupti::activity_record_size(kind_at(next));
    if (size == 0 || static_cast<size_t>(end - next) < size) return CUPTI_ERROR_INVALID_KIND;
    *record = reinterpret_cast<CUpti_Activity*>(next);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext /*context*/, uint32_t /*streamId*/,
                                                                  size_t* dropped) {
    if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    ActivitySession* session = ActivitySession::get();
    if (session == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    // All buffers are global (as in CUPTI since 6.0), so the count is the global one.
    *dropped = session->buffers().take_dropped();
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
    if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    ActivitySession* session = ActivitySession::get();
    if (session == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    *timestamp = session->now_ns();
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc callback) {
    if (callback == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    ActivitySession* session = ActivitySession::get();
    if (session == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    session->set_timestamp_callback(callback);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                                       uint64_t id) {
    if (!tbdsim::cupti::valid_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
    tbdsim::cupti::push_external_id(kind, id);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                                      uint64_t* last_id) {
    if (!tbdsim::cupti::valid_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
    return tbdsim::cupti::pop_external_id(kind, last_id) ? CUPTI_SUCCESS : CUPTI_ERROR_QUEUE_EMPTY;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiFinalize(void) {
    if (ActivitySession* session = ActivitySession::get(); session != nullptr) session->finalize();
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetContextId(CUcontext context, uint32_t* context_id) {
    if (context_id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    const tbdsim::cupti::DriverLink* driver = tbdsim::cupti::driver_link();
    if (driver == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    unsigned long long id = 0;
    if (context == nullptr || driver->ctx_get_id(context, &id) != CUDA_SUCCESS) return CUPTI_ERROR_INVALID_CONTEXT;
    *context_id = static_cast<uint32_t>(id);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetStreamIdEx(CUcontext /*context*/, CUstream stream, uint8_t per_thread_stream,
                                                   uint32_t* stream_id) {
    if (stream_id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    const tbdsim::cupti::DriverLink* driver = tbdsim::cupti::driver_link();
    if (driver == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
    // The null stream means the per-thread default stream only when the caller says so.
    const CUstream resolved = stream == nullptr && per_thread_stream != 0 ? CU_STREAM_PER_THREAD : stream;
    unsigned long long id = 0;
    if (driver->stream_get_id(resolved, &id) != CUDA_SUCCESS) return CUPTI_ERROR_INVALID_STREAM;
    *stream_id = static_cast<uint32_t>(id);
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t* stream_id) {
    return cuptiGetStreamIdEx(context, stream, 0, stream_id);
}
