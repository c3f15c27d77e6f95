#include "driver_table.h"

#include <dlfcn.h>
#include <simgpu/private_api.h>

#include <atomic>
#include <cstddef>
#include <mutex>

#include "errors.h"

namespace tbdsim::rt {

namespace {

DriverApi g_legacy_api;
DriverApi g_per_thread_api;
cudaError_t g_init_error = cudaErrorInitializationError;
std::atomic<bool> g_init_attempted{false};
std::atomic<void (*)(int)> g_runtime_call_boundary{nullptr};
thread_local constinit int t_runtime_call_depth = 0;

// The driver's private table, for the runtime call boundaries; absent from a driver that is not ours.
void resolve_runtime_call_boundary(decltype(&::cuGetExportTable) get_export_table) {
    const void* table = nullptr;
    if (get_export_table == nullptr || get_export_table(&table, &TBDSIM_PRIVATE_API_ID) != CUDA_SUCCESS) return;
    const auto* api = static_cast<const TbdsimPrivateApi*>(table);
    if (api == nullptr || api->struct_size < offsetof(TbdsimPrivateApi, add_runtime_call_listener) + sizeof(void*))
        return;
    g_runtime_call_boundary.store(api->runtime_call_boundary, std::memory_order_release);
}

// Functions a driver may legitimately lack stay null; callers check before use (see call_driver).
void resolve_table(DriverApi& api, decltype(&::cuGetProcAddress_v2) get_proc, cuuint64_t flags) {
    api.getProcAddress = get_proc;
#define TBDSIM_RT_RESOLVE(name)                                                                        \
    {                                                                                                  \
        void* entry = nullptr;                                                                         \
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                   \
        if (get_proc(#name, &entry, kRuntimeCudaVersion, flags, &found) == CUDA_SUCCESS &&             \
            found == CU_GET_PROC_ADDRESS_SUCCESS) {                                                    \
            api.name = reinterpret_cast<decltype(api.name)>(entry);                                    \
        }                                                                                              \
    }
    TBDSIM_RT_DRIVER_FUNCTIONS(TBDSIM_RT_RESOLVE)
    TBDSIM_RT_GRAPH_MEMORY_FUNCTIONS(TBDSIM_RT_RESOLVE)
#undef TBDSIM_RT_RESOLVE
}

cudaError_t load_driver() {
    // RTLD_LOCAL: the application must not start resolving cu* symbols through us by accident.
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return cudaErrorInsufficientDriver;
    auto get_proc = reinterpret_cast<decltype(&::cuGetProcAddress_v2)>(dlsym(library, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) return cudaErrorInsufficientDriver;

    resolve_table(g_legacy_api, get_proc, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
    resolve_table(g_per_thread_api, get_proc, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    if (g_legacy_api.cuInit == nullptr || g_legacy_api.cuDriverGetVersion == nullptr) {
        return cudaErrorInsufficientDriver;
    }
    int driver_version = 0;
    if (g_legacy_api.cuDriverGetVersion(&driver_version) != CUDA_SUCCESS ||
        driver_version < kRuntimeCudaVersion) {
        return cudaErrorInsufficientDriver;
    }
    CUresult init = g_legacy_api.cuInit(0);
    if (init != CUDA_SUCCESS) return to_runtime_error(init);
    resolve_runtime_call_boundary(g_legacy_api.cuGetExportTable);
    return cudaSuccess;
}

}  // namespace

cudaError_t driver_init() {
    static std::once_flag once;
    std::call_once(once, [] {
        g_init_error = load_driver();
        g_init_attempted.store(true, std::memory_order_release);
    });
    return g_init_error;
}

cudaError_t driver_init_failure() {
    return g_init_attempted.load(std::memory_order_acquire) ? g_init_error : cudaSuccess;
}

const DriverApi& driver_api(bool per_thread_stream) {
    return per_thread_stream ? g_per_thread_api : g_legacy_api;
}

RuntimeCallScope::RuntimeCallScope() {
    if (t_runtime_call_depth++ != 0) return;
    if (auto boundary = g_runtime_call_boundary.load(std::memory_order_acquire); boundary != nullptr) {
        boundary(1);
        announced_ = true;
    }
}

RuntimeCallScope::~RuntimeCallScope() {
    --t_runtime_call_depth;
    if (announced_) g_runtime_call_boundary.load(std::memory_order_relaxed)(0);
}

}  // namespace tbdsim::rt
