#include "driver_entry_points.h"

#include <dlfcn.h>

namespace tbdsim::blas {
namespace {

// The toolkit version cuBLAS 13 and cuBLASLt 13 are built for: cuGetProcAddress hands out the entry points with the
// ABI of that version (cuMemAlloc -> cuMemAlloc_v2 and so on).
constexpr int kRequestedCudaVersion = CUDA_VERSION;

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

template <typename Fn>
bool resolve(GetProcAddressFn get_proc_address, const char* symbol, Fn& out) {
    void* pointer = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (get_proc_address(symbol, &pointer, kRequestedCudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
            CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS || pointer == nullptr) {
        return false;
    }
    out = reinterpret_cast<Fn>(pointer);
    return true;
}

DriverEntryPoints load() {
    DriverEntryPoints entry_points;
    // Never closed: function pointers into the driver stay valid for the life of the process.
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver == nullptr) return entry_points;
    auto get_proc_address = reinterpret_cast<GetProcAddressFn>(dlsym(driver, "cuGetProcAddress_v2"));
    if (get_proc_address == nullptr) return entry_points;

    DriverEntryPoints resolved;
    const bool complete = resolve(get_proc_address, "cuInit", resolved.init) &&
                          resolve(get_proc_address, "cuCtxGetCurrent", resolved.ctx_get_current) &&
                          resolve(get_proc_address, "cuCtxSetCurrent", resolved.ctx_set_current) &&
                          resolve(get_proc_address, "cuDeviceGet", resolved.device_get) &&
                          resolve(get_proc_address, "cuDeviceGetAttribute", resolved.device_get_attribute) &&
                          resolve(get_proc_address, "cuDevicePrimaryCtxRetain", resolved.primary_ctx_retain) &&
                          resolve(get_proc_address, "cuDevicePrimaryCtxRelease", resolved.primary_ctx_release) &&
                          resolve(get_proc_address, "cuModuleLoadData", resolved.module_load_data) &&
                          resolve(get_proc_address, "cuModuleUnload", resolved.module_unload) &&
                          resolve(get_proc_address, "cuModuleGetFunction", resolved.module_get_function) &&
                          resolve(get_proc_address, "cuMemAlloc", resolved.mem_alloc) &&
                          resolve(get_proc_address, "cuMemFree", resolved.mem_free) &&
                          resolve(get_proc_address, "cuMemAllocHost", resolved.mem_alloc_host) &&
                          resolve(get_proc_address, "cuMemFreeHost", resolved.mem_free_host) &&
                          resolve(get_proc_address, "cuLaunchKernel", resolved.launch_kernel) &&
                          resolve(get_proc_address, "cuStreamSynchronize", resolved.stream_synchronize) &&
                          resolve(get_proc_address, "cuMemcpy2D", resolved.memcpy_2d) &&
                          resolve(get_proc_address, "cuMemcpy2DAsync", resolved.memcpy_2d_async) &&
                          resolve(get_proc_address, "cuGetExportTable", resolved.get_export_table);
    if (!complete) return entry_points;

    const void* table = nullptr;
    if (resolved.get_export_table(&table, &TBDSIM_PRIVATE_API_ID) == CUDA_SUCCESS && table != nullptr) {
        const auto* api = static_cast<const TbdsimPrivateApi*>(table);
        // Only use the table if it is at least as new as the fields we call.
        if (api->struct_size >= offsetof(TbdsimPrivateApi, annotate_next_launch) + sizeof(api->annotate_next_launch)) {
            resolved.private_api = api;
        }
    }
    return resolved;
}

}  // namespace

const DriverEntryPoints* driver_entry_points() {
    static const DriverEntryPoints entry_points = load();
    return entry_points.launch_kernel != nullptr ? &entry_points : nullptr;
}

}  // namespace tbdsim::blas
