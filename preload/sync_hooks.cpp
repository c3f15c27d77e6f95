// Synchronizations (host begin/end), cuInit (where the session starts: writer, CUPTI) and the context
// switches that invalidate a thread's cached current device.
#include "hook_support.h"

namespace tbdprof::preload {
namespace {

using raw::SyncKind;

template <typename Call>
CUresult record_sync(SyncKind kind, uint64_t handle, Call&& call) {
    if (!collector::capture::admits(collector::capture::Event::Other)) return call();
    HookGuard guard;
    if (!guard.recording()) return call();
    raw::RawSync record{};
    record.begin_host_ns = collector::host_monotonic_ns();
    const CUresult result = call();
    record.end_host_ns = collector::host_monotonic_ns();
    record.handle = handle;
    record.sync_kind = kind;
    collector::emit_record(guard.state(), raw::RecordKind::Sync, record);
    return result;
}

template <auto& Real, ApiPath>
CUresult ctx_synchronize() {
    return record_sync(SyncKind::Device, 0, [] { return Real.get()(); });
}
template <auto& Real, ApiPath>
CUresult ctx_synchronize_v2(CUcontext ctx) {
    return record_sync(SyncKind::Device, 0, [&] { return Real.get()(ctx); });
}
template <auto& Real, ApiPath>
CUresult stream_synchronize(CUstream s) {
    return record_sync(SyncKind::Stream, reinterpret_cast<uint64_t>(s), [&] { return Real.get()(s); });
}
template <auto& Real, ApiPath>
CUresult event_synchronize(CUevent e) {
    return record_sync(SyncKind::Event, reinterpret_cast<uint64_t>(e), [&] { return Real.get()(e); });
}
template <auto& Real, ApiPath>
CUresult stream_wait_event(CUstream s, CUevent e, unsigned flags) {
    return record_sync(SyncKind::StreamWaitEvent, reinterpret_cast<uint64_t>(e), [&] { return Real.get()(s, e, flags); });
}

// The first driver call of a CUDA program: start recording here so CUPTI sees everything after it.
template <auto& Real, ApiPath>
CUresult init(unsigned flags) {
    HookGuard guard;  // starts the session when enabled
    return Real.get()(flags);
}

void forget_device() {
    if (collector::collector_enabled()) collector::thread_state().device = -1;
}
template <auto& Real, ApiPath>
CUresult ctx_set_current(CUcontext ctx) {
    const CUresult result = Real.get()(ctx);
    forget_device();
    return result;
}
template <auto& Real, ApiPath>
CUresult ctx_push_current(CUcontext ctx) {
    const CUresult result = Real.get()(ctx);
    forget_device();
    return result;
}
template <auto& Real, ApiPath>
CUresult ctx_pop_current(CUcontext* ctx) {
    const CUresult result = Real.get()(ctx);
    forget_device();
    return result;
}

using CtxSyncFn = CUresult (*)();
using CtxSyncV2Fn = CUresult (*)(CUcontext);
using StreamSyncFn = decltype(&cuStreamSynchronize);
using EventSyncFn = decltype(&cuEventSynchronize);
using WaitEventFn = decltype(&cuStreamWaitEvent);
using InitFn = decltype(&cuInit);
using SetCurrentFn = decltype(&cuCtxSetCurrent);
using PushCurrentFn = decltype(&cuCtxPushCurrent_v2);
using PopCurrentFn = decltype(&cuCtxPopCurrent_v2);

}  // namespace

TBD_DRIVER_HOOK(cuCtxSynchronize, CtxSyncFn, ctx_synchronize, (), ())
TBD_DRIVER_HOOK(cuCtxSynchronize_v2, CtxSyncV2Fn, ctx_synchronize_v2, (CUcontext c), (c))
TBD_DRIVER_HOOK(cuStreamSynchronize, StreamSyncFn, stream_synchronize, (CUstream s), (s))
TBD_DRIVER_HOOK(cuStreamSynchronize_ptsz, StreamSyncFn, stream_synchronize, (CUstream s), (s))
TBD_DRIVER_HOOK(cuEventSynchronize, EventSyncFn, event_synchronize, (CUevent e), (e))
TBD_DRIVER_HOOK(cuStreamWaitEvent, WaitEventFn, stream_wait_event, (CUstream s, CUevent e, unsigned f), (s, e, f))
TBD_DRIVER_HOOK(cuStreamWaitEvent_ptsz, WaitEventFn, stream_wait_event, (CUstream s, CUevent e, unsigned f), (s, e, f))
TBD_DRIVER_HOOK(cuInit, InitFn, init, (unsigned f), (f))
TBD_DRIVER_HOOK(cuCtxSetCurrent, SetCurrentFn, ctx_set_current, (CUcontext c), (c))
TBD_DRIVER_HOOK(cuCtxPushCurrent_v2, PushCurrentFn, ctx_push_current, (CUcontext c), (c))
TBD_DRIVER_HOOK(cuCtxPopCurrent_v2, PopCurrentFn, ctx_pop_current, (CUcontext * c), (c))

void add_sync_hooks(std::vector<HookedSymbol>& out) {
    out.push_back(TBD_HOOK_ENTRY(cuCtxSynchronize, ctx_synchronize));
    out.push_back(TBD_HOOK_ENTRY(cuCtxSynchronize_v2, ctx_synchronize_v2));
    out.push_back(TBD_HOOK_ENTRY(cuStreamSynchronize, stream_synchronize));
    out.push_back(TBD_HOOK_ENTRY(cuStreamSynchronize_ptsz, stream_synchronize));
    out.push_back(TBD_HOOK_ENTRY(cuEventSynchronize, event_synchronize));
    out.push_back(TBD_HOOK_ENTRY(cuStreamWaitEvent, stream_wait_event));
    out.push_back(TBD_HOOK_ENTRY(cuStreamWaitEvent_ptsz, stream_wait_event));
    out.push_back(TBD_HOOK_ENTRY(cuInit, init));
    out.push_back(TBD_HOOK_ENTRY(cuCtxSetCurrent, ctx_set_current));
    out.push_back(TBD_HOOK_ENTRY(cuCtxPushCurrent_v2, ctx_push_current));
    out.push_back(TBD_HOOK_ENTRY(cuCtxPopCurrent_v2, ctx_pop_current));
}

}  // namespace tbdprof::preload
