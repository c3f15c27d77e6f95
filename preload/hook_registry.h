// Every driver and cuBLAS entry point we record, with the real function and our wrappers. A wrapper
// exists per API path (raw::ApiPath): the exported symbol is the Driver path (programs linked
// against libcuda); pointers handed out by cuGetProcAddress are the Runtime path when libcudart asked
// and DriverViaProcAddress otherwise (cuBLAS, cuDNN, NCCL, applications).
#pragma once

#include <atomic>
#include <vector>

#include "tbdprof/raw_format.h"

namespace tbdprof::preload {

using raw::ApiPath;

// The real driver's address of `name` (dlopen of libcuda.so.1 on first use, then the real dlsym).
void* real_driver_symbol(const char* name);
void* real_dlsym(void* handle, const char* name);
void resolve_real_dl_functions();

template <typename F>
struct RealFunction {
    const char* name;
    std::atomic<F> fn{nullptr};

    F get() {
        F f = fn.load(std::memory_order_acquire);
        if (f != nullptr) [[likely]]
            return f;
        return resolve();
    }
    // Out of line, so that a hook's fast path saves no register for it.
    [[gnu::noinline, gnu::cold]] F resolve() {
        F f = reinterpret_cast<F>(real_driver_symbol(name));
        fn.store(f, std::memory_order_release);
        return f;
    }
};

struct HookedSymbol {
    const char* name;
    void* (*real)();    // resolves the real function's address
    void* wrappers[5];  // indexed by ApiPath value; [Library] unused
};

// The hook files, each listing its symbols.
void add_memory_hooks(std::vector<HookedSymbol>& out);
void add_launch_hooks(std::vector<HookedSymbol>& out);
void add_transfer_hooks(std::vector<HookedSymbol>& out);
void add_sync_hooks(std::vector<HookedSymbol>& out);
void add_module_hooks(std::vector<HookedSymbol>& out);
void add_proc_address_hooks(std::vector<HookedSymbol>& out);
void add_graph_hooks(std::vector<HookedSymbol>& out);
void add_profiler_hooks(std::vector<HookedSymbol>& out);
void add_vmm_hooks(std::vector<HookedSymbol>& out);

// A pointer cuGetProcAddress returned: our wrapper for `path` when it is one we record, else itself.
void* substitute_proc_address(void* real, ApiPath path);
// A dlsym/dlvsym result for `name`: our wrapper when `result` is the real driver or cuBLAS function.
void* substitute_looked_up_symbol(const char* name, void* result);
// cuBLAS's part of the above (cublas_hooks.cpp): null when `name` is not a cuBLAS entry point we hook.
void* substitute_cublas_symbol(const char* name, void* result);
// cuBLAS level-1/2 entry points (cublas_vector_hooks.cpp), likewise.
void* substitute_cublas_vector_symbol(const char* name, void* result);
// NCCL's communication calls (nccl_hooks.cpp), likewise.
void* substitute_nccl_symbol(const char* name, void* result);
// cuBLAS level-3 entry points beyond the real GEMMs (cublas_level3_hooks.cpp), likewise.
void* substitute_cublas_level3_symbol(const char* name, void* result);
// cuBLASLt's part (cublaslt_hooks.cpp), likewise.
void* substitute_cublaslt_symbol(const char* name, void* result);

// Which path a cuGetProcAddress caller is: Runtime for libcudart, DriverViaProcAddress otherwise.
ApiPath path_of_caller(const void* return_address);

}  // namespace tbdprof::preload
