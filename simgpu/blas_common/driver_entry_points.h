// The driver functions cuBLAS and cuBLASLt use, resolved the way the real libraries resolve them:
// libcuda.so.1 is dlopen'ed, cuGetProcAddress_v2 is the only symbol looked up by name, and every other
// entry point comes from cuGetProcAddress (so neither library has a link-time dependency on the
// driver or runtime).
#pragma once

#include <cuda.h>
#include <simgpu/private_api.h>

namespace tbdsim::blas {

struct DriverEntryPoints {
    decltype(&::cuInit) init = nullptr;
    decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
    decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
    decltype(&::cuDeviceGet) device_get = nullptr;
    decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;  // what cublasCreate allocates
    decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
    decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;
    decltype(&::cuModuleLoadData) module_load_data = nullptr;
    decltype(&::cuModuleUnload) module_unload = nullptr;
    decltype(&::cuModuleGetFunction) module_get_function = nullptr;
    decltype(&::cuMemAlloc) mem_alloc = nullptr;
    decltype(&::cuMemFree) mem_free = nullptr;
    decltype(&::cuMemAllocHost) mem_alloc_host = nullptr;  // cudnnCreate's pinned word
    decltype(&::cuMemFreeHost) mem_free_host = nullptr;
    decltype(&::cuLaunchKernel) launch_kernel = nullptr;
    decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;  // level-1 results in host memory
    decltype(&::cuMemcpy2D) memcpy_2d = nullptr;                 // cublasSetMatrix / GetMatrix
    decltype(&::cuMemcpy2DAsync) memcpy_2d_async = nullptr;     // their Async forms
    decltype(&::cuGetExportTable) get_export_table = nullptr;
    // The simulated driver's private interface (annotations for the cost model); null on a driver
    // that does not offer it, in which case launches simply go unannotated.
    const TbdsimPrivateApi* private_api = nullptr;
};

// Resolves everything once per process (thread-safe). Null when libcuda.so.1 cannot be loaded or
// lacks one of the functions above.
const DriverEntryPoints* driver_entry_points();

}  // namespace tbdsim::blas
