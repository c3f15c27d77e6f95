// Run-time half of "cuBLAS reaches the driver only through cuGetProcAddress": this executable
// exports its own definitions of the driver entry points cuBLAS needs. Had libcublas referenced any
// of them by symbol, the dynamic linker would bind that reference here (the executable comes first
// in the global scope). Each definition counts calls coming from libcublas and forwards to the
// driver, so the driver keeps working even if it calls its own exports.
#include "driver_interposers.h"

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>

namespace {

std::atomic<int> calls_from_cublas{0};

void count_if_from_cublas(const void* return_address) {
    Dl_info info{};
    if (dladdr(return_address, &info) != 0 && info.dli_fname != nullptr &&
        std::strstr(info.dli_fname, "libcublas") != nullptr) {
        calls_from_cublas.fetch_add(1);
    }
}

// The driver's own definition, found by a lookup scoped to libcuda (never this executable).
template <typename Fn>
Fn driver_definition(const char* exported_name) {
    static void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return reinterpret_cast<Fn>(dlsym(driver, exported_name));
}

}  // namespace

namespace tbdsim::testing {
int driver_calls_by_symbol_from_cublas() { return calls_from_cublas.load(); }
}  // namespace tbdsim::testing

#define TBDSIM_INTERPOSE(name, params, args)                                                  \
    extern "C" __attribute__((visibility("default"))) CUresult name params {                 \
        count_if_from_cublas(__builtin_return_address(0));                                   \
        static const auto forward = driver_definition<CUresult(*) params>(#name);            \
        return forward != nullptr ? forward args : CUDA_ERROR_NOT_FOUND;                      \
    }

TBDSIM_INTERPOSE(cuInit, (unsigned int flags), (flags))
TBDSIM_INTERPOSE(cuCtxGetCurrent, (CUcontext * context), (context))
TBDSIM_INTERPOSE(cuModuleLoadData, (CUmodule * module, const void* image), (module, image))
TBDSIM_INTERPOSE(cuModuleGetFunction, (CUfunction * function, CUmodule module, const char* name),
                 (function, module, name))
TBDSIM_INTERPOSE(cuMemAlloc_v2, (CUdeviceptr * pointer, size_t bytes), (pointer, bytes))
TBDSIM_INTERPOSE(cuMemFree_v2, (CUdeviceptr pointer), (pointer))
TBDSIM_INTERPOSE(cuLaunchKernel,
                 (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                  unsigned shared, CUstream stream, void** params, void** extra),
                 (f, gx, gy, gz, bx, by, bz, shared, stream, params, extra))
TBDSIM_INTERPOSE(cuGetExportTable, (const void** table, const CUuuid* id), (table, id))
