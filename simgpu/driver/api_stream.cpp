// Streams, events and synchronization. Host waits sleep in wall-clock time until the device timeline
// has reached the awaited point, so host-side gaps become GPU idle time as on real hardware.
#include "driver_api.h"
#include "graph_state.h"

#include <algorithm>

using namespace tbdsim::driver;

namespace {

CUresult create_stream(CUstream* out, unsigned flags, int priority) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~unsigned(CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    auto* stream = new Stream;
    stream->id = state().next_stream_id++;
    stream->context = ctx;
    stream->flags = flags;
    stream->priority = std::clamp(priority, -5, 0);  // greatest (-5) to least (0) on Hopper
    ctx->streams.insert(stream);
    state().live_streams.insert(stream);
    *out = reinterpret_cast<CUstream>(stream);
    return CUDA_SUCCESS;
}

// Resolves `handle` under the lock and returns when its work is done (0 for an invalid handle).
CUresult stream_done(CUstream handle, bool per_thread, uint64_t& done) {
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Stream* stream = resolve_stream(handle, per_thread);
    if (!stream) return CUDA_ERROR_INVALID_HANDLE;
    // Waiting for or querying a capturing stream is illegal: its work never runs.
    if (CUresult rc = check_not_capturing(*stream); rc != CUDA_SUCCESS) return rc;
    done = stream_done_ns(*stream);
    return CUDA_SUCCESS;
}

CUresult stream_synchronize(CUstream handle, bool per_thread) {
    uint64_t done = 0;
    if (CUresult rc = stream_done(handle, per_thread, done); rc != CUDA_SUCCESS) return rc;
    wait_until_ns(done);
    std::unique_lock lock(state().mutex);
    state().host_calls_done.wait(lock, [&] {
        Stream* s = resolve_stream(handle, per_thread);
        return !s || s->pending_host_calls == 0;
    });
    return CUDA_SUCCESS;
}

CUresult stream_query(CUstream handle, bool per_thread) {
    uint64_t done = 0;
    if (CUresult rc = stream_done(handle, per_thread, done); rc != CUDA_SUCCESS) return rc;
    return now_ns() >= done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

Event* live_event(CUevent handle) {
    auto* event = reinterpret_cast<Event*>(handle);
    if (!handle || !state().live_events.count(event)) return nullptr;
    load_shared_record(*event);  // another process may have recorded an interprocess event
    return event;
}

}  // namespace

Event* tbdsim::driver::find_event(CUevent handle) {
    return live_event(handle);
}

namespace {

CUresult event_record(CUevent handle, CUstream stream_handle, bool per_thread) {
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Event* event = live_event(handle);
    if (!event) return CUDA_ERROR_INVALID_HANDLE;
    Stream* stream = resolve_stream(stream_handle, per_thread);
    if (!stream) return CUDA_ERROR_INVALID_HANDLE;
    if (stream->context != event->context) return CUDA_ERROR_INVALID_CONTEXT;
    // Event nodes (fork/join of captures across streams) are not modelled.
    if (CUresult rc = check_not_capturing(*stream); rc != CUDA_SUCCESS) return rc;
    // An event is a zero-length marker in the stream: the device timestamps it when it gets there
    // (never before the launch latency has passed), and later synchronization includes it.
    event->time_ns = place_work(*stream, 0).second;
    event->recorded = true;
    store_shared_record(*event);
    return CUDA_SUCCESS;
}

CUresult stream_wait_event(CUstream stream_handle, CUevent handle, unsigned flags, bool per_thread) {
    if (flags & ~unsigned(CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Event* event = live_event(handle);
    if (!event) return CUDA_ERROR_INVALID_HANDLE;
    Stream* stream = resolve_stream(stream_handle, per_thread);
    if (!stream) return CUDA_ERROR_INVALID_HANDLE;
    if (CUresult rc = check_not_capturing(*stream); rc != CUDA_SUCCESS) return rc;
    if (event->recorded) stream->ready_ns = std::max(stream->ready_ns, event->time_ns);
    return CUDA_SUCCESS;
}

CUresult stream_get(CUstream handle, bool per_thread, Stream*& out) {
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    out = resolve_stream(handle, per_thread);
    return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace

SIM_API CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int flags) {
    return create_stream(stream, flags, 0);
}

SIM_API CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority) {
    return create_stream(stream, flags, priority);
}

SIM_API CUresult CUDAAPI cuStreamDestroy(CUstream handle) {  // cuStreamDestroy_v2
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    auto* stream = reinterpret_cast<Stream*>(handle);
    if (!handle || !state().live_streams.count(stream) || stream->per_thread)
        return CUDA_ERROR_INVALID_HANDLE;
    // Pending work still completes (its end is already on the timeline); dependencies on the
    // stream by the legacy stream disappear with it only once that work is over, so keep its end.
    stream->context->legacy_stream.ready_ns =
        std::max(stream->context->legacy_stream.ready_ns,
                 (stream->flags & CU_STREAM_NON_BLOCKING) ? 0 : stream->ready_ns);
    stream->context->streams.erase(stream);
    state().live_streams.erase(stream);
    delete stream;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuStreamSynchronize(CUstream s) { return stream_synchronize(s, false); }
SIM_API CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream s) { return stream_synchronize(s, true); }
SIM_API CUresult CUDAAPI cuStreamQuery(CUstream s) { return stream_query(s, false); }
SIM_API CUresult CUDAAPI cuStreamQuery_ptsz(CUstream s) { return stream_query(s, true); }

SIM_API CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
    return stream_wait_event(s, e, flags, false);
}
SIM_API CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int flags) {
    return stream_wait_event(s, e, flags, true);
}

#define SIM_STREAM_GETTER(name, type, expr)                                                         \
    namespace {                                                                                     \
    CUresult name##_impl(CUstream handle, type* out, bool per_thread) {                             \
        if (!out) return CUDA_ERROR_INVALID_VALUE;                                                  \
        std::lock_guard lock(state().mutex);                                                        \
        Stream* s = nullptr;                                                                        \
        if (CUresult rc = stream_get(handle, per_thread, s); rc != CUDA_SUCCESS) return rc;        \
        *out = (expr);                                                                              \
        return CUDA_SUCCESS;                                                                        \
    }                                                                                               \
    }                                                                                               \
    SIM_API CUresult CUDAAPI name(CUstream h, type* out) { return name##_impl(h, out, false); }    \
    SIM_API CUresult CUDAAPI name##_ptsz(CUstream h, type* out) { return name##_impl(h, out, true); }

SIM_STREAM_GETTER(cuStreamGetPriority, int, s->priority)
SIM_STREAM_GETTER(cuStreamGetFlags, unsigned int, s->flags)
SIM_STREAM_GETTER(cuStreamGetId, unsigned long long, s->id)
SIM_STREAM_GETTER(cuStreamGetCtx, CUcontext, reinterpret_cast<CUcontext>(s->context))
SIM_STREAM_GETTER(cuStreamGetDevice, CUdevice, s->context->device->ordinal)

SIM_API CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* least, int* greatest) {
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return CUDA_SUCCESS;
}

namespace {
CUresult context_synchronize(Context* ctx) {
    uint64_t done = 0;
    {
        std::lock_guard lock(state().mutex);
        if (CUresult rc = check_context_not_capturing(*ctx); rc != CUDA_SUCCESS) return rc;
        done = context_done_ns(*ctx);
    }
    wait_until_ns(done);
    std::unique_lock lock(state().mutex);
    state().host_calls_done.wait(lock, [&] { return ctx->pending_host_calls == 0; });
    return CUDA_SUCCESS;
}
}  // namespace

SIM_API CUresult CUDAAPI cuCtxSynchronize(void) {
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    return context_synchronize(ctx);
}

SIM_API CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
    if (!ctx) return cuCtxSynchronize();
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    return context_synchronize(reinterpret_cast<Context*>(ctx));
}

// --- events ---------------------------------------------------------------------------------------

SIM_API CUresult CUDAAPI cuEventCreate(CUevent* out, unsigned int flags) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    constexpr unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (flags & ~known) return CUDA_ERROR_INVALID_VALUE;
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    auto* event = new Event;
    event->context = ctx;
    event->flags = flags;
    state().live_events.insert(event);
    *out = reinterpret_cast<CUevent>(event);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuEventDestroy(CUevent handle) {  // cuEventDestroy_v2
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Event* event = live_event(handle);
    if (!event) return CUDA_ERROR_INVALID_HANDLE;
    state().live_events.erase(event);
    release_shared_record(*event);
    delete event;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) { return event_record(e, s, false); }
SIM_API CUresult CUDAAPI cuEventRecord_ptsz(CUevent e, CUstream s) { return event_record(e, s, true); }
SIM_API CUresult CUDAAPI cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int) {
    return event_record(e, s, false);
}
SIM_API CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int) {
    return event_record(e, s, true);
}

SIM_API CUresult CUDAAPI cuEventQuery(CUevent handle) {
    uint64_t t = 0;
    {
        std::lock_guard lock(state().mutex);
        if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
        Event* event = live_event(handle);
        if (!event) return CUDA_ERROR_INVALID_HANDLE;
        t = event->recorded ? event->time_ns : 0;
    }
    return now_ns() >= t ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

SIM_API CUresult CUDAAPI cuEventSynchronize(CUevent handle) {
    uint64_t t = 0;
    {
        std::lock_guard lock(state().mutex);
        if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
        Event* event = live_event(handle);
        if (!event) return CUDA_ERROR_INVALID_HANDLE;
        t = event->recorded ? event->time_ns : 0;
    }
    wait_until_ns(t);
    return CUDA_SUCCESS;
}

namespace {
CUresult elapsed(float* ms, CUevent start_handle, CUevent end_handle) {
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Event* start = live_event(start_handle);
    Event* end = live_event(end_handle);
    if (!start || !end) return CUDA_ERROR_INVALID_HANDLE;
    if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    if (!start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
    uint64_t now = now_ns();
    if (now < start->time_ns || now < end->time_ns) return CUDA_ERROR_NOT_READY;
    *ms = static_cast<float>((double(end->time_ns) - double(start->time_ns)) / 1e6);
    return CUDA_SUCCESS;
}
}  // namespace

SIM_API CUresult CUDAAPI cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
    return elapsed(ms, start, end);
}

// The CUDA 2.0 entry point, still exported by the real driver for old binaries; cuda.h renames the
// plain name to _v2, so it is defined under its symbol name.
extern "C" CUresult legacy_event_elapsed_time(float* ms, CUevent start, CUevent end) __asm__(
    "cuEventElapsedTime");
SIM_API CUresult legacy_event_elapsed_time(float* ms, CUevent start, CUevent end) {
    return elapsed(ms, start, end);
}
