// Device, stream-ordered, pinned-host and managed allocations and their frees, recorded after the
// driver succeeded, each with its call stack.
#include "hook_support.h"
#include "tbdprof/collector/stack_capture.h"

namespace tbdprof::preload {
namespace {

using collector::emit_record;
using raw::MemoryKind;
using raw::RecordKind;

void record_alloc(ThreadState& thread, ApiPath path, MemoryKind kind, uint64_t address, uint64_t bytes,
                  CUstream stream) {
    // cublasCreate's own workspace: the largest of the allocations it makes (on the real H200 it made
    // 1 KiB, 128 KiB and then the 64 MiB workspace; the first is not the workspace).
    if (thread.capture_first_alloc && bytes > thread.captured_alloc_bytes) {
        thread.captured_alloc_address = address;
        thread.captured_alloc_bytes = bytes;
    }
    collector::note_allocated_range(address, bytes);
    raw::RawAlloc record{};
    record.host_ns = collector::host_monotonic_ns();
    record.address = address;
    record.bytes = bytes;
    record.stream = reinterpret_cast<uint64_t>(stream);
    record.stack_id = collector::capture_stack(thread);
    record.device = current_device(thread);
    record.memory_kind = kind;
    record.api = effective_path(thread, path);
    emit_record(thread, RecordKind::Alloc, record);
}

void record_free(ThreadState& thread, ApiPath path, MemoryKind kind, uint64_t address, CUstream stream) {
    raw::RawFree record{};
    record.host_ns = collector::host_monotonic_ns();
    record.address = address;
    record.stream = reinterpret_cast<uint64_t>(stream);
    record.device = current_device(thread);
    record.memory_kind = kind;
    record.api = effective_path(thread, path);
    emit_record(thread, RecordKind::Free, record);
}

template <auto& Real, ApiPath Path>
CUresult mem_alloc(CUdeviceptr* dptr, size_t bytes) {
    HookGuard guard;
    const CUresult result = Real.get()(dptr, bytes);
    if (guard.recording() && result == CUDA_SUCCESS && dptr != nullptr)
        record_alloc(guard.state(), Path, MemoryKind::Device, *dptr, bytes, nullptr);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_alloc_pitch(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height, unsigned element_bytes) {
    HookGuard guard;
    const CUresult result = Real.get()(dptr, pitch, width, height, element_bytes);
    if (guard.recording() && result == CUDA_SUCCESS && dptr != nullptr && pitch != nullptr)
        record_alloc(guard.state(), Path, MemoryKind::Device, *dptr, *pitch * height, nullptr);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_free(CUdeviceptr dptr) {
    HookGuard guard;
    const CUresult result = Real.get()(dptr);
    if (guard.recording() && result == CUDA_SUCCESS && dptr != 0)
        record_free(guard.state(), Path, MemoryKind::Device, dptr, nullptr);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_alloc_async(CUdeviceptr* dptr, size_t bytes, CUstream stream) {
    HookGuard guard;
    const CUresult result = Real.get()(dptr, bytes, stream);
    if (guard.recording() && result == CUDA_SUCCESS && dptr != nullptr)
        record_alloc(guard.state(), Path, MemoryKind::DeviceAsync, *dptr, bytes, stream);
    return result;
}

// From a pool the program created: a stream-ordered allocation like cuMemAllocAsync's (its free is
// cuMemFreeAsync, recorded at its stream-ordered time the same way).
template <auto& Real, ApiPath Path>
CUresult mem_alloc_from_pool(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream) {
    HookGuard guard;
    const CUresult result = Real.get()(dptr, bytes, pool, stream);
    if (guard.recording() && result == CUDA_SUCCESS && dptr != nullptr)
        record_alloc(guard.state(), Path, MemoryKind::DeviceAsync, *dptr, bytes, stream);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_free_async(CUdeviceptr dptr, CUstream stream) {
    HookGuard guard;
    const CUresult result = Real.get()(dptr, stream);
    if (guard.recording() && result == CUDA_SUCCESS && dptr != 0)
        record_free(guard.state(), Path, MemoryKind::DeviceAsync, dptr, stream);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_alloc_host(void** pointer, size_t bytes) {
    HookGuard guard;
    const CUresult result = Real.get()(pointer, bytes);
    if (guard.recording() && result == CUDA_SUCCESS && pointer != nullptr)
        record_alloc(guard.state(), Path, MemoryKind::PinnedHost, reinterpret_cast<uint64_t>(*pointer), bytes, nullptr);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_host_alloc(void** pointer, size_t bytes, unsigned flags) {
    HookGuard guard;
    const CUresult result = Real.get()(pointer, bytes, flags);
    if (guard.recording() && result == CUDA_SUCCESS && pointer != nullptr)
        record_alloc(guard.state(), Path, MemoryKind::PinnedHost, reinterpret_cast<uint64_t>(*pointer), bytes, nullptr);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_free_host(void* pointer) {
    HookGuard guard;
    const CUresult result = Real.get()(pointer);
    if (guard.recording() && result == CUDA_SUCCESS && pointer != nullptr)
        record_free(guard.state(), Path, MemoryKind::PinnedHost, reinterpret_cast<uint64_t>(pointer), nullptr);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_alloc_managed(CUdeviceptr* dptr, size_t bytes, unsigned flags) {
    HookGuard guard;
    const CUresult result = Real.get()(dptr, bytes, flags);
    if (guard.recording() && result == CUDA_SUCCESS && dptr != nullptr)
        record_alloc(guard.state(), Path, MemoryKind::Managed, *dptr, bytes, nullptr);
    return result;
}

using AllocFn = decltype(&cuMemAlloc_v2);
using AllocPitchFn = decltype(&cuMemAllocPitch_v2);
using FreeFn = decltype(&cuMemFree_v2);
using AllocAsyncFn = decltype(&cuMemAllocAsync);
using AllocFromPoolFn = decltype(&cuMemAllocFromPoolAsync);
using FreeAsyncFn = decltype(&cuMemFreeAsync);
using AllocHostFn = decltype(&cuMemAllocHost_v2);
using HostAllocFn = decltype(&cuMemHostAlloc);
using FreeHostFn = decltype(&cuMemFreeHost);
using AllocManagedFn = decltype(&cuMemAllocManaged);

}  // namespace
}  // namespace tbdprof::preload

namespace tbdprof::preload {
TBD_DRIVER_HOOK(cuMemAlloc_v2, AllocFn, mem_alloc, (CUdeviceptr * p, size_t n), (p, n))
TBD_DRIVER_HOOK(cuMemAllocPitch_v2, AllocPitchFn, mem_alloc_pitch,
                (CUdeviceptr * p, size_t* pitch, size_t w, size_t h, unsigned e), (p, pitch, w, h, e))
TBD_DRIVER_HOOK(cuMemFree_v2, FreeFn, mem_free, (CUdeviceptr p), (p))
TBD_DRIVER_HOOK(cuMemAllocAsync, AllocAsyncFn, mem_alloc_async, (CUdeviceptr * p, size_t n, CUstream s), (p, n, s))
TBD_DRIVER_HOOK(cuMemAllocAsync_ptsz, AllocAsyncFn, mem_alloc_async, (CUdeviceptr * p, size_t n, CUstream s),
                (p, n, s))
TBD_DRIVER_HOOK(cuMemAllocFromPoolAsync, AllocFromPoolFn, mem_alloc_from_pool,
                (CUdeviceptr * p, size_t n, CUmemoryPool pool, CUstream s), (p, n, pool, s))
TBD_DRIVER_HOOK(cuMemAllocFromPoolAsync_ptsz, AllocFromPoolFn, mem_alloc_from_pool,
                (CUdeviceptr * p, size_t n, CUmemoryPool pool, CUstream s), (p, n, pool, s))
TBD_DRIVER_HOOK(cuMemFreeAsync, FreeAsyncFn, mem_free_async, (CUdeviceptr p, CUstream s), (p, s))
TBD_DRIVER_HOOK(cuMemFreeAsync_ptsz, FreeAsyncFn, mem_free_async, (CUdeviceptr p, CUstream s), (p, s))
TBD_DRIVER_HOOK(cuMemAllocHost_v2, AllocHostFn, mem_alloc_host, (void** p, size_t n), (p, n))
TBD_DRIVER_HOOK(cuMemHostAlloc, HostAllocFn, mem_host_alloc, (void** p, size_t n, unsigned f), (p, n, f))
TBD_DRIVER_HOOK(cuMemFreeHost, FreeHostFn, mem_free_host, (void* p), (p))
TBD_DRIVER_HOOK(cuMemAllocManaged, AllocManagedFn, mem_alloc_managed, (CUdeviceptr * p, size_t n, unsigned f),
                (p, n, f))

void add_memory_hooks(std::vector<HookedSymbol>& out) {
    out.push_back(TBD_HOOK_ENTRY(cuMemAlloc_v2, mem_alloc));
    out.push_back(TBD_HOOK_ENTRY(cuMemAllocPitch_v2, mem_alloc_pitch));
    out.push_back(TBD_HOOK_ENTRY(cuMemFree_v2, mem_free));
    out.push_back(TBD_HOOK_ENTRY(cuMemAllocAsync, mem_alloc_async));
    out.push_back(TBD_HOOK_ENTRY(cuMemAllocAsync_ptsz, mem_alloc_async));
    out.push_back(TBD_HOOK_ENTRY(cuMemAllocFromPoolAsync, mem_alloc_from_pool));
    out.push_back(TBD_HOOK_ENTRY(cuMemAllocFromPoolAsync_ptsz, mem_alloc_from_pool));
    out.push_back(TBD_HOOK_ENTRY(cuMemFreeAsync, mem_free_async));
    out.push_back(TBD_HOOK_ENTRY(cuMemFreeAsync_ptsz, mem_free_async));
    out.push_back(TBD_HOOK_ENTRY(cuMemAllocHost_v2, mem_alloc_host));
    out.push_back(TBD_HOOK_ENTRY(cuMemHostAlloc, mem_host_alloc));
    out.push_back(TBD_HOOK_ENTRY(cuMemFreeHost, mem_free_host));
    out.push_back(TBD_HOOK_ENTRY(cuMemAllocManaged, mem_alloc_managed));
}

}  // namespace tbdprof::preload
