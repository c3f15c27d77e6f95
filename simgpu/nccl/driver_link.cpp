#include "driver_link.h"

#include <dlfcn.h>

#include <cstddef>

namespace tbdsim::nccl {
namespace {

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// `version`: the ABI wanted. cuCtxGetDevice is asked for at 12.0: CUDA 13 maps the name to
// cuCtxGetDevice_v2 (a context argument), and the header's declaration we call is the first form.
template <typename Fn>
bool resolve(GetProcAddressFn get_proc_address, const char* symbol, Fn& out, int version = CUDA_VERSION) {
    void* pointer = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (get_proc_address(symbol, &pointer, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS || pointer == nullptr)
        return false;
    out = reinterpret_cast<Fn>(pointer);
    return true;
}

Driver load() {
    Driver d;
    d.base = blas::driver_entry_points();
    if (d.base == nullptr || d.base->private_api == nullptr) return {};
    const TbdsimPrivateApi* api = d.base->private_api;
    if (api->struct_size < offsetof(TbdsimPrivateApi, annotate_next_launch_collective) + sizeof(void*)) return {};
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);  // already loaded: a reference
    if (library == nullptr) return {};
    auto get_proc_address = reinterpret_cast<GetProcAddressFn>(dlsym(library, "cuGetProcAddress_v2"));
    if (get_proc_address == nullptr || !resolve(get_proc_address, "cuCtxGetDevice", d.ctx_get_device, 12000) ||
        !resolve(get_proc_address, "cuDeviceGetName", d.device_get_name) ||
        !resolve(get_proc_address, "cuDeviceGetCount", d.device_get_count) ||
        !resolve(get_proc_address, "cuStreamIsCapturing", d.stream_is_capturing))
        return {};
    d.stream_ready_at_ns = api->stream_ready_at_ns;
    d.annotate_next_launch_collective = api->annotate_next_launch_collective;
    d.now_ns = api->now_ns;
    return d;
}

}  // namespace

const Driver* driver() {
    static const Driver instance = load();
    return instance.base != nullptr ? &instance : nullptr;
}

}  // namespace tbdsim::nccl
