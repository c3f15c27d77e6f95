// Stream-ordered memory pools: cudaMemPool* and cudaMallocFromPoolAsync map onto the driver calls of
// the same meaning (cudaMemPool_t is CUmemoryPool, cudaMemPoolProps has CUmemPoolProps' layout,
// cudaMemPoolAttr values are CUmemPool_attribute's).
#include <cstdint>

#include "context.h"

using namespace tbdsim::rt;

extern "C" TBDSIM_CUDART_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool,
                                                                         cudaStream_t stream);

namespace {

static_assert(sizeof(cudaMemPoolProps) == sizeof(CUmemPoolProps));

cudaError_t from_pool(bool per_thread, void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
    if (ptr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        CUdeviceptr address = 0;
        cudaError_t error =
            call_driver(api.cuMemAllocFromPoolAsync, &address, size, reinterpret_cast<CUmemoryPool>(pool), stream);
        if (error == cudaSuccess) *ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
        return error;
    });
}

CUmemoryPool driver_pool(cudaMemPool_t pool) {
    return reinterpret_cast<CUmemoryPool>(pool);
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t* memPool, const struct cudaMemPoolProps* props) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuMemPoolCreate, reinterpret_cast<CUmemoryPool*>(memPool),
                           reinterpret_cast<const CUmemPoolProps*>(props));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
    return api_call(false,
                    [&](const DriverApi& api) { return call_driver(api.cuMemPoolDestroy, driver_pool(memPool)); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                                         cudaStream_t stream) {
    return from_pool(false, ptr, size, memPool, stream);
}
cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
    return from_pool(true, ptr, size, memPool, stream);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr,
                                                         void* value) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuMemPoolSetAttribute, driver_pool(memPool), static_cast<CUmemPool_attribute>(attr),
                           value);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr,
                                                         void* value) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuMemPoolGetAttribute, driver_pool(memPool), static_cast<CUmemPool_attribute>(attr),
                           value);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuMemPoolTrimTo, driver_pool(memPool), minBytesToKeep);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        if (cudaError_t e = device_handle(device, &handle); e != cudaSuccess) return e;
        return call_driver(api.cuDeviceGetDefaultMemPool, reinterpret_cast<CUmemoryPool*>(memPool), handle);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        if (cudaError_t e = device_handle(device, &handle); e != cudaSuccess) return e;
        return call_driver(api.cuDeviceGetMemPool, reinterpret_cast<CUmemoryPool*>(memPool), handle);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        if (cudaError_t e = device_handle(device, &handle); e != cudaSuccess) return e;
        return call_driver(api.cuDeviceSetMemPool, handle, driver_pool(memPool));
    });
}
