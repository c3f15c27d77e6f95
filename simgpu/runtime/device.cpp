// Device selection and device-wide operations: count, current device, flags, attributes, limits,
// synchronisation, reset and versions.
#include "context.h"

using namespace tbdsim::rt;

namespace {
// Flags cudaSetDeviceFlags accepts (schedule mode, map-host, local-memory resize), as documented.
constexpr unsigned kDeviceFlagMask = cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax;
}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) return record_error(cudaErrorInvalidValue);
    // As observed with the real runtime, a failed initialisation leaves *count untouched.
    return api_call_without_context([&](const DriverApi&) -> cudaError_t {
        CUdevice ignored = 0;
        cudaError_t error = device_handle(0, &ignored);  // loads the device count
        if (error != cudaSuccess) return error;
        *count = device_count();
        return cudaSuccess;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi&) -> cudaError_t {
        *device = current_device();
        return cudaSuccess;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaSetDevice(int device) { return record_error(select_device(device)); }

TBDSIM_CUDART_EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
    if (flags != 0 || (deviceFlags & ~kDeviceFlagMask) != 0) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        cudaError_t error = device_handle(device, &handle);
        if (error == cudaSuccess && deviceFlags != 0) {
            error = call_driver(api.cuDevicePrimaryCtxSetFlags, handle, deviceFlags);
        }
        if (error != cudaSuccess) return error;
        // Initialise on this thread without changing its current device.
        const int previous = current_device();
        error = select_device(device);
        if (error == cudaSuccess && previous != device) error = select_device(previous);
        return error;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags) {
    if ((flags & ~kDeviceFlagMask) != 0) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        cudaError_t error = device_handle(current_device(), &handle);
        if (error != cudaSuccess) return error;
        return call_driver(api.cuDevicePrimaryCtxSetFlags, handle, flags & ~cudaDeviceMapHost);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
    if (flags == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        cudaError_t error = device_handle(current_device(), &handle);
        unsigned context_flags = 0;
        int active = 0;
        if (error == cudaSuccess) error = call_driver(api.cuDevicePrimaryCtxGetState, handle, &context_flags, &active);
        if (error != cudaSuccess) return error;
        // Mapped pinned memory is always enabled since CUDA 12, and the runtime reports it so.
        *flags = context_flags | cudaDeviceMapHost;
        return cudaSuccess;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
    if (value == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        cudaError_t error = device_handle(device, &handle);
        if (error != cudaSuccess) return error;
        // cudaDeviceAttr values are the CUdevice_attribute values.
        return call_driver(api.cuDeviceGetAttribute, value, static_cast<CUdevice_attribute>(attr), handle);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
    if (canAccessPeer == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        CUdevice peer = 0;
        cudaError_t error = device_handle(device, &handle);
        if (error == cudaSuccess) error = device_handle(peerDevice, &peer);
        if (error != cudaSuccess) return error;
        if (device == peerDevice) {
            *canAccessPeer = 0;
            return cudaSuccess;
        }
        return call_driver(api.cuDeviceCanAccessPeer, canAccessPeer, handle, peer);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop) {
    if (device == nullptr || prop == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi&) -> cudaError_t {
        *device = current_device();
        return cudaSuccess;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceSynchronize(void) {
    return api_call(false, [](const DriverApi& api) { return call_driver(api.cuCtxSynchronize); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceReset(void) {
    return record_error(reset_current_device());
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
    if (value == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuCtxGetLimit, value, static_cast<CUlimit>(limit));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuCtxSetLimit, static_cast<CUlimit>(limit), value);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuCtxGetStreamPriorityRange, leastPriority, greatestPriority);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuMemGetInfo, free, total); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
    if (runtimeVersion == nullptr) return record_error(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDriverGetVersion(int* driverVersion) {
    if (driverVersion == nullptr) return record_error(cudaErrorInvalidValue);
    // Without a loadable driver the real runtime reports version 0 and success.
    if (driver_init() != cudaSuccess || driver_api(false).cuDriverGetVersion == nullptr) {
        *driverVersion = 0;
        return cudaSuccess;
    }
    return record_error(call_driver(driver_api(false).cuDriverGetVersion, driverVersion));
}
