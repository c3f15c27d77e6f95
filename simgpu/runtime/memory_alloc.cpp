// Allocation entry points: device, stream-ordered, pinned host, managed and pitched memory, and
// pointer queries. Each maps onto the driver call of the same meaning.
#include <cstdint>

#include "context.h"

using namespace tbdsim::rt;

extern "C" {
TBDSIM_CUDART_EXPORT cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream);
TBDSIM_CUDART_EXPORT cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream);
}

namespace {

CUdeviceptr as_device_pointer(const void* pointer) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
}

void* as_host_pointer(CUdeviceptr pointer) { return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer)); }

cudaError_t malloc_async(bool per_thread, void** pointer, size_t size, cudaStream_t stream) {
    if (pointer == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        CUdeviceptr address = 0;
        cudaError_t error = call_driver(api.cuMemAllocAsync, &address, size, stream);
        if (error == cudaSuccess) *pointer = as_host_pointer(address);
        return error;
    });
}

cudaError_t free_async(bool per_thread, void* pointer, cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) {
        return call_driver(api.cuMemFreeAsync, as_device_pointer(pointer), stream);
    });
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaMalloc(void** devPtr, size_t size) {
    if (devPtr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        // A zero-byte request succeeds with a null pointer (the driver would reject size 0).
        if (size == 0) {
            *devPtr = nullptr;
            return cudaSuccess;
        }
        CUdeviceptr address = 0;
        cudaError_t error = call_driver(api.cuMemAlloc, &address, size);
        if (error == cudaSuccess) *devPtr = as_host_pointer(address);
        return error;
    });
}

// cudaFree(nullptr) is the idiomatic way to initialise the runtime: binds the context, does nothing.
TBDSIM_CUDART_EXPORT cudaError_t cudaFree(void* devPtr) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        if (devPtr == nullptr) return cudaSuccess;
        return call_driver(api.cuMemFree, as_device_pointer(devPtr));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
    return malloc_async(false, devPtr, size, hStream);
}
cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
    return malloc_async(true, devPtr, size, hStream);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
    return free_async(false, devPtr, hStream);
}
cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) { return free_async(true, devPtr, hStream); }

TBDSIM_CUDART_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size) {
    if (ptr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        // As for cudaMalloc: zero bytes succeed with a null pointer (frameworks pin 0-byte buffers).
        if (size == 0) {
            *ptr = nullptr;
            return cudaSuccess;
        }
        return call_driver(api.cuMemAllocHost, ptr, size);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
    if (pHost == nullptr) return record_error(cudaErrorInvalidValue);
    // cudaHostAlloc* flags are the CU_MEMHOSTALLOC_* flags.
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        if (size == 0) {
            *pHost = nullptr;
            return cudaSuccess;
        }
        return call_driver(api.cuMemHostAlloc, pHost, size, flags);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaFreeHost(void* ptr) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        if (ptr == nullptr) return cudaSuccess;
        return call_driver(api.cuMemFreeHost, ptr);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
    if (pDevice == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdeviceptr address = 0;
        cudaError_t error = call_driver(api.cuMemHostGetDevicePointer, &address, pHost, flags);
        if (error == cudaSuccess) *pDevice = as_host_pointer(address);
        return error;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuMemHostGetFlags, pFlags, pHost); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
    if (devPtr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdeviceptr address = 0;
        cudaError_t error = call_driver(api.cuMemAllocManaged, &address, size, flags);
        if (error == cudaSuccess) *devPtr = as_host_pointer(address);
        return error;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
    if (devPtr == nullptr || pitch == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdeviceptr address = 0;
        // 16-byte elements: the widest access the driver aligns a pitched row for.
        cudaError_t error = call_driver(api.cuMemAllocPitch, &address, pitch, width, height, 16u);
        if (error == cudaSuccess) *devPtr = as_host_pointer(address);
        return error;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
    if (attributes == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        unsigned memory_type = 0;
        int device = -2;
        CUdeviceptr device_pointer = 0;
        void* host_pointer = nullptr;
        unsigned is_managed = 0;
        CUpointer_attribute queried[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                         CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                         CU_POINTER_ATTRIBUTE_IS_MANAGED};
        void* values[] = {&memory_type, &device, &device_pointer, &host_pointer, &is_managed};
        cudaError_t error = call_driver(api.cuPointerGetAttributes, 5u, queried, values, as_device_pointer(ptr));
        if (error != cudaSuccess) return error;
        cudaPointerAttributes filled{};
        if (memory_type == 0) {
            // Memory the driver does not know: ordinary pageable host memory.
            filled.type = cudaMemoryTypeUnregistered;
            filled.device = -2;
            filled.hostPointer = const_cast<void*>(ptr);
        } else {
            if (is_managed != 0) {
                filled.type = cudaMemoryTypeManaged;
            } else if (memory_type == CU_MEMORYTYPE_HOST) {
                filled.type = cudaMemoryTypeHost;
            } else {
                filled.type = cudaMemoryTypeDevice;
            }
            filled.device = device;
            filled.devicePointer = as_host_pointer(device_pointer);
            filled.hostPointer = host_pointer;
        }
        *attributes = filled;
        return cudaSuccess;
    });
}
