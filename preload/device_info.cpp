// The current device of a thread (cached; context changes clear the cache) and, once per device, a
// RawDeviceInfo queried from the real driver: name, memory, compute capability, SMs, clock, and
// whether the driver is tbdprof's simulated GPU (only it answers its private export-table id).
#include <tbdprof/gpu_catalog/gpu_catalog.h>
#include <tbdprof/gpu_catalog/simulated_driver.h>

#include <atomic>

#include "hook_support.h"

namespace tbdprof::preload {
namespace {

std::atomic<uint64_t> g_announced_devices{0};  // bit per ordinal 0..63

template <typename F>
F driver_function(const char* name) {
    return reinterpret_cast<F>(real_driver_symbol(name));
}

void announce_device(ThreadState& thread, int ordinal) {
    if (ordinal < 0 || ordinal >= 64) return;
    const uint64_t bit = uint64_t{1} << ordinal;
    if ((g_announced_devices.fetch_or(bit, std::memory_order_relaxed) & bit) != 0) return;

    auto device_get = driver_function<decltype(&cuDeviceGet)>("cuDeviceGet");
    auto get_name = driver_function<decltype(&cuDeviceGetName)>("cuDeviceGetName");
    auto total_mem = driver_function<decltype(&cuDeviceTotalMem_v2)>("cuDeviceTotalMem_v2");
    auto attribute = driver_function<decltype(&cuDeviceGetAttribute)>("cuDeviceGetAttribute");
    auto export_table = driver_function<decltype(&cuGetExportTable)>("cuGetExportTable");
    CUdevice device = 0;
    if (device_get == nullptr || device_get(&device, ordinal) != CUDA_SUCCESS) return;

    raw::RawDeviceInfo info{};
    info.ordinal = ordinal;
    char name[256] = {};
    if (get_name != nullptr && get_name(name, sizeof name - 1, device) == CUDA_SUCCESS) {
        info.name_string = collector::intern_string(thread, name);
    }
    size_t bytes = 0;
    if (total_mem != nullptr && total_mem(&bytes, device) == CUDA_SUCCESS) info.memory_bytes = bytes;
    if (attribute != nullptr) {
        attribute(&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
        attribute(&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
        attribute(&info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
        attribute(&info.clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device);
    }
    info.fp32_lanes_per_sm = gpu_catalog::fp32_lanes_per_sm(info.cc_major, info.cc_minor);
    const void* table = nullptr;
    info.simulated = export_table != nullptr && export_table(&table, &TBDPROF_SIMULATED_DRIVER_TABLE_ID) == CUDA_SUCCESS &&
                     table != nullptr;
    collector::emit_record(thread, raw::RecordKind::DeviceInfo, info);
}

}  // namespace

int current_device_slow(ThreadState& thread) {
    static auto ctx_get_device = driver_function<decltype(&cuCtxGetDevice)>("cuCtxGetDevice");
    CUdevice device = 0;
    if (ctx_get_device == nullptr || ctx_get_device(&device) != CUDA_SUCCESS) return 0;  // no context yet
    thread.device = device;
    announce_device(thread, device);
    return device;
}

}  // namespace tbdprof::preload
