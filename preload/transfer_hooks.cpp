// Copies and sets (synchronous, asynchronous, per-thread default stream variants), each with the
// sequence number CUPTI's record is correlated with.
#include "graph_capture.h"
#include "hook_support.h"

namespace tbdprof::preload {
namespace {

using raw::CopyKind;

struct CopyDescription {
    uint64_t dst, src, bytes;
    CUstream stream;
    CopyKind kind;
    bool async;
};

struct SetDescription {
    uint64_t dst, bytes;
    CUstream stream;
    uint32_t value;
    bool async;
};

// Runs `call` with CUPTI's records tied to a new sequence number, which it returns with the start time.
template <typename Call>
CUresult correlated_call(uint64_t& sequence, uint64_t& start, Call&& call) {
    sequence = collector::next_sequence();
    start = collector::host_monotonic_ns();
    CorrelationScope correlation(sequence);
    return call();
}

// Records a copy or set: the fields every transfer has come from here, `fill` adds its own.
// `entry`: the real entry point's name (its _ptsz/_ptds suffix says what stream 0 means).
template <typename Record, typename Fill, typename Call>
CUresult record_transfer(ApiPath path, const char* entry, raw::RecordKind kind, Fill&& fill, Call&& call) {
    if (!collector::capture::admits(collector::capture::Event::Other)) return call();
    HookGuard guard;
    if (!guard.recording()) return call();
    ThreadState& thread = guard.state();
    uint64_t sequence = 0, start = 0;
    const CUresult result = correlated_call(sequence, start, call);
    if (result != CUDA_SUCCESS) return result;
    Record record{};
    record.host_ns = start;
    record.sequence = sequence;
    record.device = current_device(thread);
    record.api = effective_path(thread, path);
    fill(record);
    // While anything captures, an async copy or set may have become a graph node instead of running.
    if (capture_may_be_active()) [[unlikely]]
        record.captured = stream_is_capturing(record.stream, entry) ? 1 : 0;
    collector::emit_record(thread, kind, record);
    return result;
}

template <typename Call>
CUresult record_copy(ApiPath path, const char* entry, const CopyDescription& d, Call&& call) {
    return record_transfer<raw::RawCopy>(path, entry, raw::RecordKind::Copy, [&](raw::RawCopy& r) {
        r.dst = d.dst;
        r.src = d.src;
        r.bytes = d.bytes;
        r.stream = reinterpret_cast<uint64_t>(d.stream);
        r.copy_kind = d.kind;
        r.async = d.async ? 1 : 0;
    }, call);
}

template <typename Call>
CUresult record_set(ApiPath path, const char* entry, const SetDescription& d, Call&& call) {
    return record_transfer<raw::RawSet>(path, entry, raw::RecordKind::Set, [&](raw::RawSet& r) {
        r.dst = d.dst;
        r.bytes = d.bytes;
        r.stream = reinterpret_cast<uint64_t>(d.stream);
        r.value = d.value;
        r.async = d.async ? 1 : 0;
    }, call);
}

uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

CopyKind kind_of_2d(const CUDA_MEMCPY2D& c) {
    const bool src_device = c.srcMemoryType == CU_MEMORYTYPE_DEVICE || c.srcMemoryType == CU_MEMORYTYPE_ARRAY;
    const bool dst_device = c.dstMemoryType == CU_MEMORYTYPE_DEVICE || c.dstMemoryType == CU_MEMORYTYPE_ARRAY;
    if (c.srcMemoryType == CU_MEMORYTYPE_UNIFIED || c.dstMemoryType == CU_MEMORYTYPE_UNIFIED) return CopyKind::Default;
    if (src_device) return dst_device ? CopyKind::DeviceToDevice : CopyKind::DeviceToHost;
    return dst_device ? CopyKind::HostToDevice : CopyKind::HostToHost;
}

uint64_t source_of_2d(const CUDA_MEMCPY2D& c) {
    return c.srcMemoryType == CU_MEMORYTYPE_HOST ? address(c.srcHost) : c.srcDevice;
}
uint64_t destination_of_2d(const CUDA_MEMCPY2D& c) {
    return c.dstMemoryType == CU_MEMORYTYPE_HOST ? address(c.dstHost) : c.dstDevice;
}

// ---- copies
template <auto& Real, ApiPath Path>
CUresult copy_htod(CUdeviceptr dst, const void* src, size_t n) {
    return record_copy(Path, Real.name, {dst, address(src), n, nullptr, CopyKind::HostToDevice, false},
                       [&] { return Real.get()(dst, src, n); });
}
template <auto& Real, ApiPath Path>
CUresult copy_dtoh(void* dst, CUdeviceptr src, size_t n) {
    return record_copy(Path, Real.name, {address(dst), src, n, nullptr, CopyKind::DeviceToHost, false},
                       [&] { return Real.get()(dst, src, n); });
}
template <auto& Real, ApiPath Path>
CUresult copy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return record_copy(Path, Real.name, {dst, src, n, nullptr, CopyKind::DeviceToDevice, false},
                       [&] { return Real.get()(dst, src, n); });
}
// Peer copies between contexts (devices): device-to-device copies.
template <auto& Real, ApiPath Path>
CUresult copy_peer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n) {
    return record_copy(Path, Real.name, {dst, src, n, nullptr, CopyKind::DeviceToDevice, false},
                       [&] { return Real.get()(dst, dc, src, sc, n); });
}
template <auto& Real, ApiPath Path>
CUresult copy_peer_async(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s) {
    return record_copy(Path, Real.name, {dst, src, n, s, CopyKind::DeviceToDevice, true},
                       [&] { return Real.get()(dst, dc, src, sc, n, s); });
}
template <auto& Real, ApiPath Path>
CUresult copy_default(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return record_copy(Path, Real.name, {dst, src, n, nullptr, CopyKind::Default, false}, [&] { return Real.get()(dst, src, n); });
}
template <auto& Real, ApiPath Path>
CUresult copy_htod_async(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
    return record_copy(Path, Real.name, {dst, address(src), n, s, CopyKind::HostToDevice, true},
                       [&] { return Real.get()(dst, src, n, s); });
}
template <auto& Real, ApiPath Path>
CUresult copy_dtoh_async(void* dst, CUdeviceptr src, size_t n, CUstream s) {
    return record_copy(Path, Real.name, {address(dst), src, n, s, CopyKind::DeviceToHost, true},
                       [&] { return Real.get()(dst, src, n, s); });
}
template <auto& Real, ApiPath Path>
CUresult copy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return record_copy(Path, Real.name, {dst, src, n, s, CopyKind::DeviceToDevice, true}, [&] { return Real.get()(dst, src, n, s); });
}
template <auto& Real, ApiPath Path>
CUresult copy_default_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return record_copy(Path, Real.name, {dst, src, n, s, CopyKind::Default, true}, [&] { return Real.get()(dst, src, n, s); });
}
template <auto& Real, ApiPath Path>
CUresult copy_2d(const CUDA_MEMCPY2D* c) {
    if (c == nullptr) return Real.get()(c);
    return record_copy(Path, Real.name,
                       {destination_of_2d(*c), source_of_2d(*c), c->WidthInBytes * c->Height, nullptr, kind_of_2d(*c), false},
                       [&] { return Real.get()(c); });
}
template <auto& Real, ApiPath Path>
CUresult copy_2d_async(const CUDA_MEMCPY2D* c, CUstream s) {
    if (c == nullptr) return Real.get()(c, s);
    return record_copy(Path, Real.name, {destination_of_2d(*c), source_of_2d(*c), c->WidthInBytes * c->Height, s, kind_of_2d(*c), true},
                       [&] { return Real.get()(c, s); });
}

// ---- sets (bytes = elements * element size)
template <auto& Real, ApiPath Path, typename Value, size_t ElementBytes>
CUresult set_1d(CUdeviceptr dst, Value v, size_t n) {
    return record_set(Path, Real.name, {dst, n * ElementBytes, nullptr, static_cast<uint32_t>(v), false},
                      [&] { return Real.get()(dst, v, n); });
}
template <auto& Real, ApiPath Path, typename Value, size_t ElementBytes>
CUresult set_1d_async(CUdeviceptr dst, Value v, size_t n, CUstream s) {
    return record_set(Path, Real.name, {dst, n * ElementBytes, s, static_cast<uint32_t>(v), true},
                      [&] { return Real.get()(dst, v, n, s); });
}
template <auto& Real, ApiPath Path, typename Value, size_t ElementBytes>
CUresult set_2d(CUdeviceptr dst, size_t pitch, Value v, size_t w, size_t h) {
    return record_set(Path, Real.name, {dst, w * h * ElementBytes, nullptr, static_cast<uint32_t>(v), false},
                      [&] { return Real.get()(dst, pitch, v, w, h); });
}
template <auto& Real, ApiPath Path, typename Value, size_t ElementBytes>
CUresult set_2d_async(CUdeviceptr dst, size_t pitch, Value v, size_t w, size_t h, CUstream s) {
    return record_set(Path, Real.name, {dst, w * h * ElementBytes, s, static_cast<uint32_t>(v), true},
                      [&] { return Real.get()(dst, pitch, v, w, h, s); });
}

template <auto& R, ApiPath P> CUresult set_d8(CUdeviceptr d, unsigned char v, size_t n) { return set_1d<R, P, unsigned char, 1>(d, v, n); }
template <auto& R, ApiPath P> CUresult set_d16(CUdeviceptr d, unsigned short v, size_t n) { return set_1d<R, P, unsigned short, 2>(d, v, n); }
template <auto& R, ApiPath P> CUresult set_d32(CUdeviceptr d, unsigned v, size_t n) { return set_1d<R, P, unsigned, 4>(d, v, n); }
template <auto& R, ApiPath P> CUresult set_d8_async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return set_1d_async<R, P, unsigned char, 1>(d, v, n, s); }
template <auto& R, ApiPath P> CUresult set_d16_async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return set_1d_async<R, P, unsigned short, 2>(d, v, n, s); }
template <auto& R, ApiPath P> CUresult set_d32_async(CUdeviceptr d, unsigned v, size_t n, CUstream s) { return set_1d_async<R, P, unsigned, 4>(d, v, n, s); }
template <auto& R, ApiPath P> CUresult set_2d8(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h) { return set_2d<R, P, unsigned char, 1>(d, p, v, w, h); }
template <auto& R, ApiPath P> CUresult set_2d32(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h) { return set_2d<R, P, unsigned, 4>(d, p, v, w, h); }
template <auto& R, ApiPath P> CUresult set_2d8_async(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s) { return set_2d_async<R, P, unsigned char, 1>(d, p, v, w, h, s); }
template <auto& R, ApiPath P> CUresult set_2d32_async(CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h, CUstream s) { return set_2d_async<R, P, unsigned, 4>(d, p, v, w, h, s); }

using HtoDFn = decltype(&cuMemcpyHtoD_v2);
using DtoHFn = decltype(&cuMemcpyDtoH_v2);
using DtoDFn = decltype(&cuMemcpyDtoD_v2);
using CopyFn = decltype(&cuMemcpy);
using HtoDAsyncFn = decltype(&cuMemcpyHtoDAsync_v2);
using DtoHAsyncFn = decltype(&cuMemcpyDtoHAsync_v2);
using DtoDAsyncFn = decltype(&cuMemcpyDtoDAsync_v2);
using CopyAsyncFn = decltype(&cuMemcpyAsync);
using PeerFn = decltype(&cuMemcpyPeer);
using PeerAsyncFn = decltype(&cuMemcpyPeerAsync);
using Copy2DFn = decltype(&cuMemcpy2D_v2);
using Copy2DAsyncFn = decltype(&cuMemcpy2DAsync_v2);
using SetD8Fn = decltype(&cuMemsetD8_v2);
using SetD16Fn = decltype(&cuMemsetD16_v2);
using SetD32Fn = decltype(&cuMemsetD32_v2);
using SetD8AsyncFn = decltype(&cuMemsetD8Async);
using SetD16AsyncFn = decltype(&cuMemsetD16Async);
using SetD32AsyncFn = decltype(&cuMemsetD32Async);
using Set2D8Fn = decltype(&cuMemsetD2D8_v2);
using Set2D32Fn = decltype(&cuMemsetD2D32_v2);
using Set2D8AsyncFn = decltype(&cuMemsetD2D8Async);
using Set2D32AsyncFn = decltype(&cuMemsetD2D32Async);

}  // namespace

// Synchronous variants have a _ptds twin, asynchronous ones a _ptsz twin: same signature, other stream.
#define TBD_TWIN_HOOKS(base, twin, type, HOOK, PARAMS, ARGS) \
    TBD_DRIVER_HOOK(base, type, HOOK, PARAMS, ARGS)          \
    TBD_DRIVER_HOOK(twin, type, HOOK, PARAMS, ARGS)

TBD_TWIN_HOOKS(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, HtoDFn, copy_htod, (CUdeviceptr d, const void* s, size_t n), (d, s, n))
TBD_TWIN_HOOKS(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, DtoHFn, copy_dtoh, (void* d, CUdeviceptr s, size_t n), (d, s, n))
TBD_TWIN_HOOKS(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, DtoDFn, copy_dtod, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n))
TBD_TWIN_HOOKS(cuMemcpy, cuMemcpy_ptds, CopyFn, copy_default, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n))
TBD_TWIN_HOOKS(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, HtoDAsyncFn, copy_htod_async,
               (CUdeviceptr d, const void* s, size_t n, CUstream st), (d, s, n, st))
TBD_TWIN_HOOKS(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, DtoHAsyncFn, copy_dtoh_async,
               (void* d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
TBD_TWIN_HOOKS(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz, DtoDAsyncFn, copy_dtod_async,
               (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
TBD_TWIN_HOOKS(cuMemcpyAsync, cuMemcpyAsync_ptsz, CopyAsyncFn, copy_default_async,
               (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
TBD_TWIN_HOOKS(cuMemcpyPeer, cuMemcpyPeer_ptds, PeerFn, copy_peer,
               (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n), (d, dc, s, sc, n))
TBD_TWIN_HOOKS(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz, PeerAsyncFn, copy_peer_async,
               (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st),
               (d, dc, s, sc, n, st))
TBD_TWIN_HOOKS(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds, Copy2DFn, copy_2d, (const CUDA_MEMCPY2D* c), (c))
TBD_TWIN_HOOKS(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds, Copy2DFn, copy_2d, (const CUDA_MEMCPY2D* c), (c))
TBD_TWIN_HOOKS(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz, Copy2DAsyncFn, copy_2d_async,
               (const CUDA_MEMCPY2D* c, CUstream st), (c, st))
TBD_TWIN_HOOKS(cuMemsetD8_v2, cuMemsetD8_v2_ptds, SetD8Fn, set_d8, (CUdeviceptr d, unsigned char v, size_t n), (d, v, n))
TBD_TWIN_HOOKS(cuMemsetD16_v2, cuMemsetD16_v2_ptds, SetD16Fn, set_d16, (CUdeviceptr d, unsigned short v, size_t n), (d, v, n))
TBD_TWIN_HOOKS(cuMemsetD32_v2, cuMemsetD32_v2_ptds, SetD32Fn, set_d32, (CUdeviceptr d, unsigned v, size_t n), (d, v, n))
TBD_TWIN_HOOKS(cuMemsetD8Async, cuMemsetD8Async_ptsz, SetD8AsyncFn, set_d8_async,
               (CUdeviceptr d, unsigned char v, size_t n, CUstream s), (d, v, n, s))
TBD_TWIN_HOOKS(cuMemsetD16Async, cuMemsetD16Async_ptsz, SetD16AsyncFn, set_d16_async,
               (CUdeviceptr d, unsigned short v, size_t n, CUstream s), (d, v, n, s))
TBD_TWIN_HOOKS(cuMemsetD32Async, cuMemsetD32Async_ptsz, SetD32AsyncFn, set_d32_async,
               (CUdeviceptr d, unsigned v, size_t n, CUstream s), (d, v, n, s))
TBD_TWIN_HOOKS(cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds, Set2D8Fn, set_2d8,
               (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h), (d, p, v, w, h))
TBD_TWIN_HOOKS(cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds, Set2D32Fn, set_2d32,
               (CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h), (d, p, v, w, h))
TBD_TWIN_HOOKS(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz, Set2D8AsyncFn, set_2d8_async,
               (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s), (d, p, v, w, h, s))
TBD_TWIN_HOOKS(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz, Set2D32AsyncFn, set_2d32_async,
               (CUdeviceptr d, size_t p, unsigned v, size_t w, size_t h, CUstream s), (d, p, v, w, h, s))

void add_transfer_hooks(std::vector<HookedSymbol>& out) {
#define TBD_TWIN_ENTRIES(base, twin, HOOK) \
    out.push_back(TBD_HOOK_ENTRY(base, HOOK)); \
    out.push_back(TBD_HOOK_ENTRY(twin, HOOK));
    TBD_TWIN_ENTRIES(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, copy_htod)
    TBD_TWIN_ENTRIES(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, copy_dtoh)
    TBD_TWIN_ENTRIES(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, copy_dtod)
    TBD_TWIN_ENTRIES(cuMemcpy, cuMemcpy_ptds, copy_default)
    TBD_TWIN_ENTRIES(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, copy_htod_async)
    TBD_TWIN_ENTRIES(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, copy_dtoh_async)
    TBD_TWIN_ENTRIES(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz, copy_dtod_async)
    TBD_TWIN_ENTRIES(cuMemcpyAsync, cuMemcpyAsync_ptsz, copy_default_async)
    TBD_TWIN_ENTRIES(cuMemcpyPeer, cuMemcpyPeer_ptds, copy_peer)
    TBD_TWIN_ENTRIES(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz, copy_peer_async)
    TBD_TWIN_ENTRIES(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds, copy_2d)
    TBD_TWIN_ENTRIES(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds, copy_2d)
    TBD_TWIN_ENTRIES(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz, copy_2d_async)
    TBD_TWIN_ENTRIES(cuMemsetD8_v2, cuMemsetD8_v2_ptds, set_d8)
    TBD_TWIN_ENTRIES(cuMemsetD16_v2, cuMemsetD16_v2_ptds, set_d16)
    TBD_TWIN_ENTRIES(cuMemsetD32_v2, cuMemsetD32_v2_ptds, set_d32)
    TBD_TWIN_ENTRIES(cuMemsetD8Async, cuMemsetD8Async_ptsz, set_d8_async)
    TBD_TWIN_ENTRIES(cuMemsetD16Async, cuMemsetD16Async_ptsz, set_d16_async)
    TBD_TWIN_ENTRIES(cuMemsetD32Async, cuMemsetD32Async_ptsz, set_d32_async)
    TBD_TWIN_ENTRIES(cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds, set_2d8)
    TBD_TWIN_ENTRIES(cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds, set_2d32)
    TBD_TWIN_ENTRIES(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz, set_2d8_async)
    TBD_TWIN_ENTRIES(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz, set_2d32_async)
#undef TBD_TWIN_ENTRIES
}

}  // namespace tbdprof::preload
