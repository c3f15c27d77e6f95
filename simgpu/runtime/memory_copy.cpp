// Copies and sets: cudaMemcpy/Async, 2D copies, memsets and symbol copies, each with its
// per-thread-default-stream variant (_ptds for synchronous calls, _ptsz for asynchronous ones).
#include <cstdint>

#include "context.h"
#include "registration.h"

using namespace tbdsim::rt;

extern "C" {
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                                      cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch,
                                                   size_t width, size_t height, cudaMemcpyKind kind);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch,
                                                        size_t width, size_t height, cudaMemcpyKind kind,
                                                        cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemset_ptds(void* devPtr, int value, size_t count);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemset2D_ptds(void* devPtr, size_t pitch, int value, size_t width,
                                                   size_t height);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void* devPtr, size_t pitch, int value, size_t width,
                                                        size_t height, cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t count,
                                                         size_t offset, cudaMemcpyKind kind);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t count,
                                                           size_t offset, cudaMemcpyKind kind);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t count,
                                                              size_t offset, cudaMemcpyKind kind,
                                                              cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t count,
                                                                size_t offset, cudaMemcpyKind kind,
                                                                cudaStream_t stream);
}

namespace {

CUdeviceptr device_address(const void* pointer) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
}

// A synchronous call passes no stream; the driver table (legacy or per-thread) decides which
// default stream it is ordered with.
cudaError_t copy_linear(const DriverApi& api, void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                        bool async, cudaStream_t stream) {
    if (count == 0) return kind <= cudaMemcpyDefault ? cudaSuccess : cudaErrorInvalidMemcpyDirection;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return async ? call_driver(api.cuMemcpyHtoDAsync, device_address(dst), src, count, stream)
                     : call_driver(api.cuMemcpyHtoD, device_address(dst), src, count);
    case cudaMemcpyDeviceToHost:
        return async ? call_driver(api.cuMemcpyDtoHAsync, dst, device_address(src), count, stream)
                     : call_driver(api.cuMemcpyDtoH, dst, device_address(src), count);
    case cudaMemcpyDeviceToDevice:
        return async ? call_driver(api.cuMemcpyDtoDAsync, device_address(dst), device_address(src), count, stream)
                     : call_driver(api.cuMemcpyDtoD, device_address(dst), device_address(src), count);
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
        // Unified addressing: the driver tells host from device memory by the pointers themselves.
        return async ? call_driver(api.cuMemcpyAsync, device_address(dst), device_address(src), count, stream)
                     : call_driver(api.cuMemcpy, device_address(dst), device_address(src), count);
    }
    return cudaErrorInvalidMemcpyDirection;
}

void describe_side(bool is_host, const void* pointer, size_t pitch, CUmemorytype& type, const void*& host,
                   CUdeviceptr& device, size_t& pitch_out, bool unified) {
    pitch_out = pitch;
    if (unified) {
        type = CU_MEMORYTYPE_UNIFIED;
        device = device_address(pointer);
    } else if (is_host) {
        type = CU_MEMORYTYPE_HOST;
        host = pointer;
    } else {
        type = CU_MEMORYTYPE_DEVICE;
        device = device_address(pointer);
    }
}

cudaError_t copy_2d(bool per_thread, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                    size_t height, cudaMemcpyKind kind, bool async, cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        if (kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
        if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
        if (width == 0 || height == 0) return cudaSuccess;
        const bool unified = kind == cudaMemcpyDefault || kind == cudaMemcpyHostToHost;
        const bool src_host = kind == cudaMemcpyHostToDevice;
        const bool dst_host = kind == cudaMemcpyDeviceToHost;
        CUDA_MEMCPY2D copy{};
        const void* src_host_pointer = nullptr;
        const void* dst_host_pointer = nullptr;
        describe_side(src_host, src, spitch, copy.srcMemoryType, src_host_pointer, copy.srcDevice, copy.srcPitch,
                      unified);
        describe_side(dst_host, dst, dpitch, copy.dstMemoryType, dst_host_pointer, copy.dstDevice, copy.dstPitch,
                      unified);
        copy.srcHost = src_host_pointer;
        copy.dstHost = const_cast<void*>(dst_host_pointer);
        copy.WidthInBytes = width;
        copy.Height = height;
        return async ? call_driver(api.cuMemcpy2DAsync, &copy, stream) : call_driver(api.cuMemcpy2D, &copy);
    });
}

cudaError_t copy(bool per_thread, void* dst, const void* src, size_t count, cudaMemcpyKind kind, bool async,
                 cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) {
        return copy_linear(api, dst, src, count, kind, async, stream);
    });
}

cudaError_t set(bool per_thread, void* pointer, int value, size_t count, bool async, cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        if (count == 0) return cudaSuccess;
        const auto byte = static_cast<unsigned char>(value);
        return async ? call_driver(api.cuMemsetD8Async, device_address(pointer), byte, count, stream)
                     : call_driver(api.cuMemsetD8, device_address(pointer), byte, count);
    });
}

cudaError_t set_2d(bool per_thread, void* pointer, size_t pitch, int value, size_t width, size_t height, bool async,
                   cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        if (width > pitch && height > 1) return cudaErrorInvalidPitchValue;
        if (width == 0 || height == 0) return cudaSuccess;
        const auto byte = static_cast<unsigned char>(value);
        return async ? call_driver(api.cuMemsetD2D8Async, device_address(pointer), pitch, byte, width, height, stream)
                     : call_driver(api.cuMemsetD2D8, device_address(pointer), pitch, byte, width, height);
    });
}

// Symbol copies: the symbol is the host shadow of a __device__/__constant__ variable.
cudaError_t copy_symbol(bool per_thread, bool to_symbol, void* other, const void* symbol, size_t count, size_t offset,
                        cudaMemcpyKind kind, bool async, cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        const cudaMemcpyKind host_kind = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        if (kind != host_kind && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) {
            return cudaErrorInvalidMemcpyDirection;
        }
        CUdeviceptr address = 0;
        size_t size = 0;
        cudaError_t error = variable_address(symbol, &address, &size);
        if (error != cudaSuccess) return error;
        if (offset > size || count > size - offset) return cudaErrorInvalidValue;
        auto* symbol_pointer = reinterpret_cast<void*>(static_cast<uintptr_t>(address + offset));
        return to_symbol ? copy_linear(api, symbol_pointer, other, count, kind, async, stream)
                         : copy_linear(api, other, symbol_pointer, count, kind, async, stream);
    });
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    return copy(false, dst, src, count, kind, false, nullptr);
}
cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    return copy(true, dst, src, count, kind, false, nullptr);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                                 cudaStream_t stream) {
    return copy(false, dst, src, count, kind, true, stream);
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
    return copy(true, dst, src, count, kind, true, stream);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                              size_t height, cudaMemcpyKind kind) {
    return copy_2d(false, dst, dpitch, src, spitch, width, height, kind, false, nullptr);
}
cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind) {
    return copy_2d(true, dst, dpitch, src, spitch, width, height, kind, false, nullptr);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                                   size_t width, size_t height, cudaMemcpyKind kind,
                                                   cudaStream_t stream) {
    return copy_2d(false, dst, dpitch, src, spitch, width, height, kind, true, stream);
}
cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
    return copy_2d(true, dst, dpitch, src, spitch, width, height, kind, true, stream);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
    return set(false, devPtr, value, count, false, nullptr);
}
cudaError_t cudaMemset_ptds(void* devPtr, int value, size_t count) {
    return set(true, devPtr, value, count, false, nullptr);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
    return set(false, devPtr, value, count, true, stream);
}
cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream) {
    return set(true, devPtr, value, count, true, stream);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
    return set_2d(false, devPtr, pitch, value, width, height, false, nullptr);
}
cudaError_t cudaMemset2D_ptds(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
    return set_2d(true, devPtr, pitch, value, width, height, false, nullptr);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width,
                                                   size_t height, cudaStream_t stream) {
    return set_2d(false, devPtr, pitch, value, width, height, true, stream);
}
cudaError_t cudaMemset2DAsync_ptsz(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream) {
    return set_2d(true, devPtr, pitch, value, width, height, true, stream);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                                                    cudaMemcpyKind kind) {
    return copy_symbol(false, true, const_cast<void*>(src), symbol, count, offset, kind, false, nullptr);
}
cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind) {
    return copy_symbol(true, true, const_cast<void*>(src), symbol, count, offset, kind, false, nullptr);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                                      cudaMemcpyKind kind) {
    return copy_symbol(false, false, dst, symbol, count, offset, kind, false, nullptr);
}
cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind) {
    return copy_symbol(true, false, dst, symbol, count, offset, kind, false, nullptr);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count,
                                                         size_t offset, cudaMemcpyKind kind, cudaStream_t stream) {
    return copy_symbol(false, true, const_cast<void*>(src), symbol, count, offset, kind, true, stream);
}
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t count, size_t offset,
                                         cudaMemcpyKind kind, cudaStream_t stream) {
    return copy_symbol(true, true, const_cast<void*>(src), symbol, count, offset, kind, true, stream);
}
TBDSIM_CUDART_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count,
                                                           size_t offset, cudaMemcpyKind kind, cudaStream_t stream) {
    return copy_symbol(false, false, dst, symbol, count, offset, kind, true, stream);
}
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t count, size_t offset,
                                           cudaMemcpyKind kind, cudaStream_t stream) {
    return copy_symbol(true, false, dst, symbol, count, offset, kind, true, stream);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
    if (devPtr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi&) -> cudaError_t {
        CUdeviceptr address = 0;
        size_t size = 0;
        cudaError_t error = variable_address(symbol, &address, &size);
        if (error == cudaSuccess) *devPtr = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
        return error;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
    if (size == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi&) -> cudaError_t {
        CUdeviceptr address = 0;
        return variable_address(symbol, &address, size);
    });
}
