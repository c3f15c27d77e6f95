#include "context.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace tbdsim::rt {

namespace {

struct PrimaryContexts {
    std::mutex mutex;
    std::vector<CUcontext> retained;  // per device; null until retained (again, after a reset)
    // Bumped by cudaDeviceReset so that every thread re-binds instead of using a stale handle.
    std::atomic<unsigned> generation{0};
    int count = -1;
};

// Deliberately leaked: registration and atexit handlers may run after static destructors.
PrimaryContexts& primary_contexts() {
    static auto* contexts = new PrimaryContexts;
    return *contexts;
}

thread_local int t_current_device = 0;
thread_local int t_bound_device = -1;
thread_local unsigned t_bound_generation = 0;

cudaError_t load_device_count() {
    PrimaryContexts& contexts = primary_contexts();
    std::lock_guard lock(contexts.mutex);
    if (contexts.count >= 0) return cudaSuccess;
    int count = 0;
    cudaError_t error = call_driver(driver_api(false).cuDeviceGetCount, &count);
    if (error != cudaSuccess) return error;
    if (count == 0) return cudaErrorNoDevice;
    contexts.retained.assign(static_cast<size_t>(count), nullptr);
    contexts.count = count;
    return cudaSuccess;
}

cudaError_t retained_context(int device, CUcontext* context) {
    PrimaryContexts& contexts = primary_contexts();
    std::lock_guard lock(contexts.mutex);
    CUcontext& slot = contexts.retained[static_cast<size_t>(device)];
    if (slot == nullptr) {
        CUdevice handle = 0;
        cudaError_t error = call_driver(driver_api(false).cuDeviceGet, &handle, device);
        if (error == cudaSuccess) error = call_driver(driver_api(false).cuDevicePrimaryCtxRetain, &slot, handle);
        if (error != cudaSuccess) return error;
    }
    *context = slot;
    return cudaSuccess;
}

}  // namespace

int device_count() {
    const int count = primary_contexts().count;
    return count < 0 ? 0 : count;
}

int current_device() { return t_current_device; }

cudaError_t device_handle(int device, CUdevice* handle) {
    cudaError_t error = driver_init();
    if (error == cudaSuccess) error = load_device_count();
    if (error != cudaSuccess) return error;
    if (device < 0 || device >= device_count()) return cudaErrorInvalidDevice;
    return call_driver(driver_api(false).cuDeviceGet, handle, device);
}

cudaError_t bind_current_context() {
    cudaError_t error = driver_init();
    if (error == cudaSuccess) error = load_device_count();
    if (error != cudaSuccess) return error;
    const unsigned generation = primary_contexts().generation.load(std::memory_order_acquire);
    if (t_bound_device == t_current_device && t_bound_generation == generation) return cudaSuccess;
    CUcontext context = nullptr;
    error = retained_context(t_current_device, &context);
    if (error == cudaSuccess) error = call_driver(driver_api(false).cuCtxSetCurrent, context);
    if (error != cudaSuccess) return error;
    t_bound_device = t_current_device;
    t_bound_generation = generation;
    return cudaSuccess;
}

cudaError_t select_device(int device) {
    cudaError_t error = driver_init();
    if (error == cudaSuccess) error = load_device_count();
    if (error != cudaSuccess) return error;
    if (device < 0 || device >= device_count()) return cudaErrorInvalidDevice;
    t_current_device = device;
    return bind_current_context();
}

cudaError_t reset_current_device() {
    cudaError_t error = bind_current_context();
    if (error != cudaSuccess) return error;
    PrimaryContexts& contexts = primary_contexts();
    CUdevice handle = 0;
    error = call_driver(driver_api(false).cuDeviceGet, &handle, t_current_device);
    if (error == cudaSuccess) error = call_driver(driver_api(false).cuDevicePrimaryCtxReset, handle);
    if (error != cudaSuccess) return error;
    {
        std::lock_guard lock(contexts.mutex);
        contexts.retained[static_cast<size_t>(t_current_device)] = nullptr;
    }
    contexts.generation.fetch_add(1, std::memory_order_acq_rel);
    return cudaSuccess;
}

}  // namespace tbdsim::rt
