// Unified memory advice and prefetch (the CUDA 13 forms, with cudaMemLocation), host memory
// registration, IPC memory handles, and peer access and copies between devices: each maps onto the driver call of the
// same meaning (docs/simgpu.md says what the simulated driver does with them).
#include <cstdint>
#include <cstring>

#include "context.h"

using namespace tbdsim::rt;

extern "C" {
TBDSIM_CUDART_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void* devPtr, size_t count,
                                                           struct cudaMemLocation location, unsigned int flags,
                                                           cudaStream_t stream);
}

namespace {

CUdeviceptr device_pointer(const void* p) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

// cudaMemLocationType and CUmemLocationType share their values.
CUmemLocation driver_location(const cudaMemLocation& location) {
    CUmemLocation out{};
    out.type = static_cast<CUmemLocationType>(location.type);
    out.id = location.id;
    return out;
}

// The primary context of a runtime device (retained once per process for peers, as the runtime keeps
// primary contexts alive).
cudaError_t primary_context(const DriverApi& api, int device, CUcontext* out) {
    CUdevice handle = 0;
    if (cudaError_t error = device_handle(device, &handle); error != cudaSuccess) return error;
    return call_driver(api.cuDevicePrimaryCtxRetain, out, handle);
}

cudaError_t prefetch(bool per_thread, const void* p, size_t count, cudaMemLocation location, unsigned flags,
                     cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) {
        return call_driver(api.cuMemPrefetchAsync, device_pointer(p), count, driver_location(location), flags, stream);
    });
}

// The real runtime has no per-thread forms of the peer copies: they use the legacy stream semantics.
cudaError_t copy_peer(bool per_thread, bool async, void* dst, int dst_device, const void* src, int src_device,
                      size_t count, cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        if (count == 0) return cudaSuccess;
        CUcontext dst_ctx = nullptr, src_ctx = nullptr;
        if (cudaError_t e = primary_context(api, dst_device, &dst_ctx); e != cudaSuccess) return e;
        if (cudaError_t e = primary_context(api, src_device, &src_ctx); e != cudaSuccess) return e;
        if (async)
            return call_driver(api.cuMemcpyPeerAsync, device_pointer(dst), dst_ctx, device_pointer(src), src_ctx, count,
                               stream);
        return call_driver(api.cuMemcpyPeer, device_pointer(dst), dst_ctx, device_pointer(src), src_ctx, count);
    });
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaMemAdvise(const void* devPtr, size_t count, enum cudaMemoryAdvise advice,
                                               struct cudaMemLocation location) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuMemAdvise, device_pointer(devPtr), count, static_cast<CUmem_advise>(advice),
                           driver_location(location));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, struct cudaMemLocation location,
                                                      unsigned int flags, cudaStream_t stream) {
    return prefetch(false, devPtr, count, location, flags, stream);
}
cudaError_t cudaMemPrefetchAsync_ptsz(const void* devPtr, size_t count, struct cudaMemLocation location,
                                      unsigned int flags, cudaStream_t stream) {
    return prefetch(true, devPtr, count, location, flags, stream);
}

// cudaHostRegister* flags are the CU_MEMHOSTREGISTER_* flags.
TBDSIM_CUDART_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuMemHostRegister, ptr, size, flags); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaHostUnregister(void* ptr) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuMemHostUnregister, ptr); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUcontext peer = nullptr;
        if (cudaError_t e = primary_context(api, peerDevice, &peer); e != cudaSuccess) return e;
        return call_driver(api.cuCtxEnablePeerAccess, peer, flags);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUcontext peer = nullptr;
        if (cudaError_t e = primary_context(api, peerDevice, &peer); e != cudaSuccess) return e;
        return call_driver(api.cuCtxDisablePeerAccess, peer);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice,
                                                size_t count) {
    return copy_peer(false, false, dst, dstDevice, src, srcDevice, count, nullptr);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                                     size_t count, cudaStream_t stream) {
    return copy_peer(false, true, dst, dstDevice, src, srcDevice, count, stream);
}

// cudaIpcMemHandle_t and CUipcMemHandle are the same 64 bytes.
static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(CUipcMemHandle));

TBDSIM_CUDART_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* devPtr) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuIpcGetMemHandle, reinterpret_cast<CUipcMemHandle*>(handle), device_pointer(devPtr));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaIpcOpenMemHandle(void** devPtr, cudaIpcMemHandle_t handle, unsigned int flags) {
    if (devPtr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUipcMemHandle driver_handle{};
        std::memcpy(&driver_handle, &handle, sizeof driver_handle);
        CUdeviceptr address = 0;
        cudaError_t error = call_driver(api.cuIpcOpenMemHandle, &address, driver_handle, flags);
        if (error == cudaSuccess) *devPtr = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
        return error;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaIpcCloseMemHandle(void* devPtr) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuIpcCloseMemHandle, device_pointer(devPtr));
    });
}

// cudaIpcEventHandle_t and CUipcEventHandle too.
static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(CUipcEventHandle));

TBDSIM_CUDART_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
    if (handle == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuIpcGetEventHandle, reinterpret_cast<CUipcEventHandle*>(handle), event);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
    if (event == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) {
        CUipcEventHandle driver_handle{};
        std::memcpy(&driver_handle, &handle, sizeof driver_handle);
        return call_driver(api.cuIpcOpenEventHandle, event, driver_handle);
    });
}
