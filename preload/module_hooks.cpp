// Module and library unloads: the kernel catalog keys kernels by CUfunction address, which a later
// module may reuse for another kernel. After an unload every entry is described again at its next
// launch (kernel_catalog.h), so a launch never reads its parameter array by another kernel's layout.
#include "hook_support.h"
#include "kernel_catalog.h"

namespace tbdprof::preload {
namespace {

template <auto& Real, ApiPath>
CUresult module_unload(CUmodule module) {
    const CUresult result = Real.get()(module);
    if (result == CUDA_SUCCESS) forget_kernel_layouts();
    return result;
}

template <auto& Real, ApiPath>
CUresult library_unload(CUlibrary library) {
    const CUresult result = Real.get()(library);
    if (result == CUDA_SUCCESS) forget_kernel_layouts();
    return result;
}

using ModuleUnloadFn = decltype(&cuModuleUnload);
using LibraryUnloadFn = decltype(&cuLibraryUnload);

}  // namespace

TBD_DRIVER_HOOK(cuModuleUnload, ModuleUnloadFn, module_unload, (CUmodule m), (m))
TBD_DRIVER_HOOK(cuLibraryUnload, LibraryUnloadFn, library_unload, (CUlibrary l), (l))

void add_module_hooks(std::vector<HookedSymbol>& out) {
    out.push_back(TBD_HOOK_ENTRY(cuModuleUnload, module_unload));
    out.push_back(TBD_HOOK_ENTRY(cuLibraryUnload, library_unload));
}

}  // namespace tbdprof::preload
