#include "driver_table.h"

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <mutex>

#include <simgpu/private_api.h>

#include "errors.h"

namespace tbdsim::rt {

namespace {

DriverApi g_legacy_api;
DriverApi g_per_thread_api;
cudaError_t g_init_error = cudaErrorInitializationError;
std::atomic<bool> g_init_attempted{false};

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

const TbdsimPrivateApi* g_private_api = nullptr;

void runtime_exit_handler() {
    g_private_api->note_runtime_exit();
}

// The real runtime registers its exit handler when it initializes; what is registered after that
// (a profiler's handler, at a later first call) runs before it. The simulated one only tells the
// driver that the handler ran (private_api.h), so that work left for after it can be caught.
void register_exit_handler(decltype(&::cuGetProcAddress_v2) get_proc) {
    void* pointer = nullptr;
    if (get_proc("cuGetExportTable", &pointer, kRuntimeCudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, nullptr) !=
            CUDA_SUCCESS ||
        pointer == nullptr)
        return;
    const void* table = nullptr;
    if (reinterpret_cast<decltype(&::cuGetExportTable)>(pointer)(&table, &TBDSIM_PRIVATE_API_ID) != CUDA_SUCCESS ||
        table == nullptr)
        return;
    const auto* api = static_cast<const TbdsimPrivateApi*>(table);
    if (api->struct_size < offsetof(TbdsimPrivateApi, runtime_exit_ran) + sizeof(api->runtime_exit_ran)) return;
    g_private_api = api;
    std::atexit(runtime_exit_handler);
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
    register_exit_handler(get_proc);
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

}  // namespace tbdsim::rt
