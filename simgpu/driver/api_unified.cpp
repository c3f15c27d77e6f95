// Unified memory advice and prefetch, host memory registration, and peer access between the simulated
// devices. The simulator has no page migration, so advice and prefetches are validated as the real
// driver validates them and change nothing else; registered host memory becomes pinned memory (copies
// from it count as pinned, cuMemHostGetDevicePointer works); peer copies are device-to-device copies
// (all simulated devices share the host's address space) placed on the timeline like any copy.
#include "driver_api.h"

#include <cstring>

using namespace tbdsim::driver;

extern "C" {
CUresult dtod_ptds(CUdeviceptr, CUdeviceptr, size_t) __asm__("cuMemcpyDtoD_v2_ptds");
CUresult dtod_async_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream) __asm__("cuMemcpyDtoDAsync_v2_ptsz");
CUresult peer_copy_ptds(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t) __asm__("cuMemcpyPeer_ptds");
CUresult peer_copy_async_ptsz(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,
                              CUstream) __asm__("cuMemcpyPeerAsync_ptsz");
CUresult prefetch_ptsz(CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream) __asm__("cuMemPrefetchAsync_v2_ptsz");
}

namespace {

// [address, address + bytes) inside one managed allocation. Caller holds the mutex.
bool managed_range(CUdeviceptr address, size_t bytes) {
    const Allocation* a = find_allocation(address);
    return a && a->kind == MemoryKind::Managed && address + bytes <= a->address + a->bytes;
}

bool valid_location(const CUmemLocation& location, bool host_allowed) {
    switch (location.type) {
        case CU_MEM_LOCATION_TYPE_DEVICE:
            return device_at(location.id) != nullptr;
        case CU_MEM_LOCATION_TYPE_HOST:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
            return host_allowed;
        default:
            return false;
    }
}

Context* live_context(CUcontext handle) {
    for (const auto& c : state().contexts)
        if (reinterpret_cast<CUcontext>(c.get()) == handle && !c->destroyed) return c.get();
    return nullptr;
}

CUresult prefetch(CUdeviceptr ptr, size_t bytes, CUmemLocation location, unsigned flags, CUstream handle,
                  bool per_thread) {
    if (bytes == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    if (!resolve_stream(handle, per_thread)) return CUDA_ERROR_INVALID_HANDLE;
    if (!managed_range(ptr, bytes) || !valid_location(location, true)) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;  // nothing to migrate: device and host share the memory here
}

CUresult peer_contexts_ok(CUcontext dst, CUcontext src) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    return live_context(dst) && live_context(src) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

}  // namespace

SIM_API CUresult CUDAAPI cuMemAdvise(CUdeviceptr ptr, size_t bytes, CUmem_advise advice,
                                     CUmemLocation location) {  // cuMemAdvise_v2, the CUDA 13 form
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
        return CUDA_ERROR_INVALID_VALUE;
    // Read-mostly advice ignores the location; the others name a device or the host.
    const bool needs_location = advice != CU_MEM_ADVISE_SET_READ_MOSTLY && advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY;
    if (!managed_range(ptr, bytes) || (needs_location && !valid_location(location, true)))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr ptr, size_t bytes, CUmemLocation location, unsigned flags,
                                            CUstream stream) {  // cuMemPrefetchAsync_v2
    return prefetch(ptr, bytes, location, flags, stream, false);
}
SIM_API CUresult prefetch_ptsz(CUdeviceptr ptr, size_t bytes, CUmemLocation location, unsigned flags, CUstream stream) {
    return prefetch(ptr, bytes, location, flags, stream, true);
}

SIM_API CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytes, unsigned int flags) {  // _v2
    constexpr unsigned kKnown = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    if (!p || bytes == 0 || (flags & ~kKnown)) return CUDA_ERROR_INVALID_VALUE;
    if (flags & CU_MEMHOSTREGISTER_IOMEMORY) return CUDA_ERROR_NOT_SUPPORTED;  // no I/O memory here
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    const auto start = reinterpret_cast<uintptr_t>(p);
    for (const auto& [address, a] : state().allocations)
        if (address < start + bytes && start < address + a.bytes) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    Allocation a{start, bytes, 0, MemoryKind::PinnedHost, ctx, false};
    a.registered = true;
    state().allocations[start] = a;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemHostUnregister(void* p) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    auto it = state().allocations.find(reinterpret_cast<uintptr_t>(p));
    if (it == state().allocations.end() || !it->second.registered) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    state().allocations.erase(it);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceCanAccessPeer(int* can_access, CUdevice dev, CUdevice peer) {
    if (!can_access) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!device_at(dev) || !device_at(peer)) return CUDA_ERROR_INVALID_DEVICE;
    *can_access = dev != peer;  // NVLink-connected GPUs of one node, as in the modelled systems
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attribute, CUdevice src,
                                                 CUdevice dst) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!device_at(src) || !device_at(dst) || src == dst) return CUDA_ERROR_INVALID_DEVICE;
    switch (attribute) {
        case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
            *value = 0;
            break;
        case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
        case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
        case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
            *value = 1;
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Context* other = live_context(peer);
    if (!other) return CUDA_ERROR_INVALID_CONTEXT;
    if (other->device == ctx->device) return CUDA_ERROR_INVALID_DEVICE;
    if (!ctx->peers.insert(other).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peer) {
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Context* other = live_context(peer);
    if (!other) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx->peers.erase(other) == 0) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    return CUDA_SUCCESS;
}

// Peer copies need no peer access (the driver stages them otherwise); they run on the current
// context's stream, as the device-to-device copies they are here.
SIM_API CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                                      size_t bytes) {
    if (CUresult rc = peer_contexts_ok(dst_ctx, src_ctx); rc != CUDA_SUCCESS) return rc;
    return cuMemcpyDtoD(dst, src, bytes);
}
SIM_API CUresult peer_copy_ptds(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes) {
    if (CUresult rc = peer_contexts_ok(dst_ctx, src_ctx); rc != CUDA_SUCCESS) return rc;
    return dtod_ptds(dst, src, bytes);
}
SIM_API CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                                           size_t bytes, CUstream stream) {
    if (CUresult rc = peer_contexts_ok(dst_ctx, src_ctx); rc != CUDA_SUCCESS) return rc;
    return cuMemcpyDtoDAsync(dst, src, bytes, stream);
}
SIM_API CUresult peer_copy_async_ptsz(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                                      size_t bytes, CUstream stream) {
    if (CUresult rc = peer_contexts_ok(dst_ctx, src_ctx); rc != CUDA_SUCCESS) return rc;
    return dtod_async_ptsz(dst, src, bytes, stream);
}
