// Stream-ordered memory pools: each device's default pool (what cuMemAllocAsync uses unless
// cuDeviceSetMemPool chose another) and pools the program creates (cuMemPoolCreate), allocated from
// with cuMemAllocFromPoolAsync. A pool's memory is its live allocations: the simulator keeps no
// freed-but-reserved memory, so the reserved and used figures are the same and trimming has nothing
// to return. Attributes are stored and read back; high-water marks follow the allocations.
#include "driver_api.h"

#include <cstring>

namespace tbdsim::driver {
struct MemPool {
    Device* device = nullptr;
    bool is_default = false;
    cuuint64_t release_threshold = 0;
    int reuse_follow_event_dependencies = 1, reuse_allow_opportunistic = 1, reuse_allow_internal_dependencies = 1;
    cuuint64_t reserved_high = 0, used_high = 0;
};
}  // namespace tbdsim::driver

using namespace tbdsim::driver;

extern "C" CUresult alloc_from_pool_ptsz(CUdeviceptr*, size_t, CUmemoryPool,
                                         CUstream) __asm__("cuMemAllocFromPoolAsync_ptsz");

namespace {

cuuint64_t used_bytes(const MemPool& pool) {
    cuuint64_t used = 0;
    for (const auto& [address, a] : state().allocations)
        if (a.kind == MemoryKind::DeviceAsync && a.pool == &pool) used += a.bytes;
    return used;
}

CUresult from_pool(CUdeviceptr* dptr, size_t bytes, CUmemoryPool handle, CUstream stream, bool per_thread) {
    {
        std::lock_guard lock(state().mutex);
        if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
        if (!live_pool(handle)) return CUDA_ERROR_INVALID_VALUE;
    }
    return allocate_stream_ordered(dptr, bytes, stream, per_thread, reinterpret_cast<MemPool*>(handle));
}

}  // namespace

MemPool* tbdsim::driver::live_pool(CUmemoryPool handle) {
    auto* pool = reinterpret_cast<MemPool*>(handle);
    return state().pools.count(pool) ? pool : nullptr;
}

MemPool* tbdsim::driver::default_pool_of(Device& device) {
    if (!device.default_pool) {
        device.default_pool = new MemPool{&device, true};
        state().pools.insert(device.default_pool);
    }
    return device.default_pool;
}

void tbdsim::driver::note_pool_use(MemPool& pool) {
    const cuuint64_t used = used_bytes(pool);
    pool.used_high = std::max(pool.used_high, used);
    pool.reserved_high = std::max(pool.reserved_high, used);
}

SIM_API CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice dev) {
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* device = device_at(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    *pool = reinterpret_cast<CUmemoryPool>(default_pool_of(*device));
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* device = device_at(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    *pool = reinterpret_cast<CUmemoryPool>(device->current_pool ? device->current_pool : default_pool_of(*device));
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool handle) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* device = device_at(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    MemPool* pool = live_pool(handle);
    if (!pool || pool->device != device) return CUDA_ERROR_INVALID_VALUE;
    device->current_pool = pool;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool* out, const CUmemPoolProps* props) {
    if (!out || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    // Pools shared with other processes (exportable handles) are not modelled.
    if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE) return CUDA_ERROR_NOT_SUPPORTED;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* device = device_at(props->location.id);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    auto* pool = new MemPool{device, false};
    state().pools.insert(pool);
    *out = reinterpret_cast<CUmemoryPool>(pool);
    return CUDA_SUCCESS;
}

// Allocations still out keep their memory until freed (as documented); the pool handle goes now.
SIM_API CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool handle) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    MemPool* pool = live_pool(handle);
    if (!pool || pool->is_default) return CUDA_ERROR_INVALID_VALUE;
    if (pool->device->current_pool == pool) pool->device->current_pool = nullptr;
    for (auto& [address, a] : state().allocations)
        if (a.pool == pool) a.pool = default_pool_of(*pool->device);
    state().pools.erase(pool);
    delete pool;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool handle, CUmemPool_attribute attribute, void* value) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    MemPool* pool = live_pool(handle);
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    cuuint64_t u64 = 0;
    int i32 = 0;
    std::memcpy(&u64, value, sizeof u64);
    std::memcpy(&i32, value, sizeof i32);
    switch (attribute) {
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            pool->release_threshold = u64;
            break;
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
            pool->reuse_follow_event_dependencies = i32 != 0;
            break;
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
            pool->reuse_allow_opportunistic = i32 != 0;
            break;
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
            pool->reuse_allow_internal_dependencies = i32 != 0;
            break;
        // The high-water marks can only be reset (to the current figure), as documented.
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
            if (u64 != 0) return CUDA_ERROR_INVALID_VALUE;
            (attribute == CU_MEMPOOL_ATTR_USED_MEM_HIGH ? pool->used_high : pool->reserved_high) = used_bytes(*pool);
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;  // the current figures are read-only
    }
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool handle, CUmemPool_attribute attribute, void* value) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    MemPool* pool = live_pool(handle);
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    auto put64 = [&](cuuint64_t v) { std::memcpy(value, &v, sizeof v); };
    auto put32 = [&](int v) { std::memcpy(value, &v, sizeof v); };
    switch (attribute) {
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            put64(pool->release_threshold);
            break;
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
            put32(pool->reuse_follow_event_dependencies);
            break;
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
            put32(pool->reuse_allow_opportunistic);
            break;
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
            put32(pool->reuse_allow_internal_dependencies);
            break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
            put64(used_bytes(*pool));
            break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
            put64(pool->reserved_high);
            break;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
            put64(pool->used_high);
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool handle, size_t) {
    std::lock_guard lock(state().mutex);
    return live_pool(handle) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;  // nothing reserved beyond use
}

SIM_API CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool handle, const CUmemAccessDesc* map, size_t count) {
    if (!map && count) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!live_pool(handle)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i)
        if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !device_at(map[i].location.id))
            return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;  // every simulated device reaches every pool already
}

SIM_API CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool handle, CUmemLocation* location) {
    if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!live_pool(handle)) return CUDA_ERROR_INVALID_VALUE;
    if (location->type != CU_MEM_LOCATION_TYPE_DEVICE || !device_at(location->id)) return CUDA_ERROR_INVALID_DEVICE;
    *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream) {
    return from_pool(dptr, bytes, pool, stream, false);
}
SIM_API CUresult alloc_from_pool_ptsz(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream) {
    return from_pool(dptr, bytes, pool, stream, true);
}
