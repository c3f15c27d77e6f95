#include "driver_link.h"

#include <dlfcn.h>

#include <cstddef>

namespace tbdsim::cupti {
namespace {

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

template <typename Fn>
bool resolve(GetProcAddressFn get_proc_address, const char* symbol, Fn& out) {
    void* pointer = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (get_proc_address(symbol, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS || pointer == nullptr) {
        return false;
    }
    out = reinterpret_cast<Fn>(pointer);
    return true;
}

DriverLink load() {
    DriverLink link;
    // Never closed: the driver outlives every record CUPTI hands out.
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver == nullptr) return link;
    auto get_proc_address = reinterpret_cast<GetProcAddressFn>(dlsym(driver, "cuGetProcAddress_v2"));
    if (get_proc_address == nullptr) return link;
    decltype(&::cuGetExportTable) get_export_table = nullptr;
    DriverLink resolved;
    if (!resolve(get_proc_address, "cuGetExportTable", get_export_table) ||
        !resolve(get_proc_address, "cuCtxGetId", resolved.ctx_get_id) ||
        !resolve(get_proc_address, "cuStreamGetId", resolved.stream_get_id)) {
        return link;
    }
    const void* table = nullptr;
    if (get_export_table(&table, &TBDSIM_PRIVATE_API_ID) != CUDA_SUCCESS || table == nullptr) return link;
    const auto* api = static_cast<const TbdsimPrivateApi*>(table);
    // Every field up to device_idle_at_ns is used.
    if (api->struct_size < offsetof(TbdsimPrivateApi, device_idle_at_ns) + sizeof(api->device_idle_at_ns)) {
        return link;
    }
    resolved.private_api = api;
    return resolved;
}

}  // namespace

const DriverLink* driver_link() {
    static const DriverLink link = load();
    return link.private_api != nullptr ? &link : nullptr;
}

}  // namespace tbdsim::cupti
