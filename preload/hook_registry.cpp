#include "hook_registry.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "tbdprof/collector/recorder.h"

namespace tbdprof::preload {

namespace {

struct Registry {
    std::vector<HookedSymbol> symbols;
    std::vector<void*> real;  // resolved real addresses, same order
};

// Built on first use (not by a static initializer: a hook may run before ours did).
Registry& registry() {
    static Registry* instance = [] {
        auto* r = new Registry;
        add_memory_hooks(r->symbols);
        add_launch_hooks(r->symbols);
        add_transfer_hooks(r->symbols);
        add_sync_hooks(r->symbols);
        add_module_hooks(r->symbols);
        add_proc_address_hooks(r->symbols);
        add_graph_hooks(r->symbols);
        add_profiler_hooks(r->symbols);
        add_vmm_hooks(r->symbols);
        r->real.reserve(r->symbols.size());
        for (const auto& s : r->symbols) r->real.push_back(s.real());
        return r;
    }();
    return *instance;
}

void* driver_handle() {
    // The driver the program uses: already loaded when anything asks, or loaded now by its soname.
    static void* handle = [] {
        void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h == nullptr) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        return h;
    }();
    return handle;
}

}  // namespace

void* real_driver_symbol(const char* name) {
    void* handle = driver_handle();
    return handle != nullptr ? real_dlsym(handle, name) : nullptr;
}

void* substitute_proc_address(void* real, ApiPath path) {
    if (real == nullptr) return real;
    Registry& r = registry();
    for (size_t i = 0; i < r.real.size(); ++i) {
        if (r.real[i] == real) {
            void* wrapper = r.symbols[i].wrappers[static_cast<int>(path)];
            return wrapper != nullptr ? wrapper : real;
        }
    }
    return real;
}

void* substitute_looked_up_symbol(const char* name, void* result) {
    if (name[0] == 'n' && name[1] == 'c') {
        void* nccl = substitute_nccl_symbol(name, result);
        return nccl != nullptr ? nccl : result;
    }
    if (name[0] != 'c' || name[1] != 'u') return result;
    if (void* cublaslt = substitute_cublaslt_symbol(name, result); cublaslt != nullptr) return cublaslt;
    if (void* cublas = substitute_cublas_symbol(name, result); cublas != nullptr) return cublas;
    if (void* vector = substitute_cublas_vector_symbol(name, result); vector != nullptr) return vector;
    if (void* level3 = substitute_cublas_level3_symbol(name, result); level3 != nullptr) return level3;
    Registry& r = registry();
    for (size_t i = 0; i < r.symbols.size(); ++i) {
        if (std::strcmp(r.symbols[i].name, name) != 0) continue;
        // Only the real driver's function is swapped (a lookup may already have found our export).
        if (r.real[i] == result) return r.symbols[i].wrappers[static_cast<int>(ApiPath::Driver)];
        return result;
    }
    return result;
}

ApiPath path_of_caller(const void* return_address) {
    Dl_info info{};
    if (dladdr(return_address, &info) != 0 && info.dli_fname != nullptr &&
        std::strstr(info.dli_fname, "libcudart") != nullptr) {
        return ApiPath::Runtime;
    }
    return ApiPath::DriverViaProcAddress;
}

}  // namespace tbdprof::preload
