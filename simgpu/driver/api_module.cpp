// Modules (context-bound) and libraries (context-independent, CUDA 12+), functions and kernels.
// CUkernel and CUfunction handles point at the same Function object: with one context per device a
// kernel's function is the kernel, and cuLaunchKernel accepts either, as the real driver does.
#include "driver_api.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace tbdsim::driver;

namespace {

CUresult load_image(const void* image, Context* ctx, bool is_library, Module*& out) {
    if (!image) return CUDA_ERROR_INVALID_VALUE;
    ImageError error = ImageError::None;
    auto parsed = parse_module_image(image, error);
    if (!parsed) return CUDA_ERROR_INVALID_IMAGE;
    int arch = ctx->device->model->cc_major * 10 + ctx->device->model->cc_minor;
    if (!image_runs_on(*parsed, arch)) return CUDA_ERROR_NO_BINARY_FOR_GPU;
    auto module = std::make_unique<Module>();
    module->image = std::move(*parsed);
    module->context = ctx;
    module->is_library = is_library;
    for (const auto& kernel : module->image.kernels) {
        auto f = std::make_unique<Function>();
        f->info = &kernel;
        f->module = module.get();
        f->record_name = persistent_kernel_name(kernel.name);
        state().live_functions.insert(f.get());
        module->functions.push_back(std::move(f));
    }
    for (const auto& global : module->image.globals) {
        void* p = std::calloc(1, global.size);
        if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
        if (!global.initial.empty()) std::memcpy(p, global.initial.data(), global.initial.size());
        module->globals[global.name] = {p, global.size};
        Allocation a{reinterpret_cast<uintptr_t>(p), global.size, 0, MemoryKind::ModuleGlobal, ctx, false};
        state().allocations[a.address] = a;
    }
    out = module.release();
    state().live_modules.insert(out);
    return CUDA_SUCCESS;
}

void unload(Module* module) {
    for (auto& f : module->functions) state().live_functions.erase(f.get());
    for (auto& [name, global] : module->globals) {
        state().allocations.erase(reinterpret_cast<uintptr_t>(global.first));
        std::free(global.first);
    }
    state().live_modules.erase(module);
    delete module;
}

Module* live_module(const void* handle, bool library) {
    auto* m = static_cast<Module*>(const_cast<void*>(handle));
    if (!handle || !state().live_modules.count(m) || m->is_library != library) return nullptr;
    return m;
}

const Function* live_function(const void* handle) {
    auto* f = static_cast<const Function*>(handle);
    return handle && state().live_functions.count(f) ? f : nullptr;
}

const Function* find_function(const Module& m, const char* name) {
    for (const auto& f : m.functions)
        if (f->info->name == name) return f.get();
    return nullptr;
}

CUresult get_global(CUdeviceptr* dptr, size_t* bytes, const Module& m, const char* name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    auto it = m.globals.find(name);
    if (it == m.globals.end()) return CUDA_ERROR_NOT_FOUND;
    if (dptr) *dptr = reinterpret_cast<CUdeviceptr>(it->second.first);
    if (bytes) *bytes = it->second.second;
    return CUDA_SUCCESS;
}

CUresult param_info(const void* handle, size_t index, size_t* offset, size_t* size) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Function* f = live_function(handle);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (index >= f->info->params.size()) return CUDA_ERROR_INVALID_VALUE;
    if (offset) *offset = f->info->params[index].offset;
    if (size) *size = f->info->params[index].size;
    return CUDA_SUCCESS;
}

CUresult function_attribute(int* value, CUfunction_attribute attribute, const void* handle) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Function* f = live_function(handle);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    const KernelInfo& k = *f->info;
    const GpuModel& m = *f->module->context->device->model;
    switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = static_cast<int>(k.max_threads_per_block); break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = static_cast<int>(k.static_shared_bytes); break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = static_cast<int>(k.registers); break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = m.cc_major * 10 + m.cc_minor; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *value = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *value = 49152 - static_cast<int>(k.static_shared_bytes);
        break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *value = -1; break;
    default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
    if (!module) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Module* m = nullptr;
    if (CUresult rc = load_image(image, ctx, false, m); rc != CUDA_SUCCESS) return rc;
    *module = reinterpret_cast<CUmodule>(m);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, CUjit_option*,
                                            void**) {
    return cuModuleLoadData(module, image);
}

SIM_API CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fat_cubin) {
    return cuModuleLoadData(module, fat_cubin);
}

SIM_API CUresult CUDAAPI cuModuleLoad(CUmodule* module, const char* path) {
    if (!module || !path) return CUDA_ERROR_INVALID_VALUE;
    std::ifstream in(path, std::ios::binary);
    if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
    // The image must outlive the module (kernel names point into the parsed copy, not the file).
    auto* bytes = new std::vector<char>(std::istreambuf_iterator<char>(in), {});
    bytes->push_back('\0');
    return cuModuleLoadData(module, bytes->data());
}

SIM_API CUresult CUDAAPI cuModuleUnload(CUmodule handle) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Module* m = live_module(handle, false);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    unload(m);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuModuleGetFunction(CUfunction* out, CUmodule handle, const char* name) {
    if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Module* m = live_module(handle, false);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    const Function* f = find_function(*m, name);
    if (!f) return CUDA_ERROR_NOT_FOUND;
    *out = reinterpret_cast<CUfunction>(const_cast<Function*>(f));
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int* count, CUmodule handle) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, false);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned>(m->functions.size());
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction* functions, unsigned int n, CUmodule handle) {
    if (!functions) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, false);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < n && i < m->functions.size(); ++i)
        functions[i] = reinterpret_cast<CUfunction>(m->functions[i].get());
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule handle,
                                           const char* name) {  // cuModuleGetGlobal_v2
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Module* m = live_module(handle, false);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    return get_global(dptr, bytes, *m, name);
}

// --- libraries ------------------------------------------------------------------------------------

SIM_API CUresult CUDAAPI cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option*, void**,
                                           unsigned int, CUlibraryOption*, void**, unsigned int) {
    if (!library) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    // Libraries are context-independent; ours bind to the current context, else device 0's primary.
    Context* ctx = current_context();
    if (!ctx && !state().devices.empty()) {
        Device& d = *state().devices.front();
        if (!d.primary) {
            state().mutex.unlock();
            CUcontext c = nullptr;
            CUresult rc = cuDevicePrimaryCtxRetain(&c, 0);
            state().mutex.lock();
            if (rc != CUDA_SUCCESS) return rc;
        }
        ctx = d.primary;
    }
    if (!ctx) return CUDA_ERROR_NO_DEVICE;
    Module* m = nullptr;
    if (CUresult rc = load_image(code, ctx, true, m); rc != CUDA_SUCCESS) return rc;
    *library = reinterpret_cast<CUlibrary>(m);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLibraryUnload(CUlibrary handle) {
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, true);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    unload(m);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLibraryGetKernel(CUkernel* out, CUlibrary handle, const char* name) {
    if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, true);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    const Function* f = find_function(*m, name);
    if (!f) return CUDA_ERROR_NOT_FOUND;
    *out = reinterpret_cast<CUkernel>(const_cast<Function*>(f));
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int* count, CUlibrary handle) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, true);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned>(m->functions.size());
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int n, CUlibrary handle) {
    if (!kernels) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, true);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < n && i < m->functions.size(); ++i)
        kernels[i] = reinterpret_cast<CUkernel>(m->functions[i].get());
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLibraryGetModule(CUmodule* out, CUlibrary handle) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, true);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    *out = reinterpret_cast<CUmodule>(m);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary handle, const char* name) {
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, true);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    return get_global(dptr, bytes, *m, name);
}

// __managed__ variables are globals of the module whose address the host uses too: device memory is
// host memory on the simulated GPU, so the global's storage serves both sides.
SIM_API CUresult CUDAAPI cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary handle, const char* name) {
    std::lock_guard lock(state().mutex);
    Module* m = live_module(handle, true);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    return get_global(dptr, bytes, *m, name);
}

SIM_API CUresult CUDAAPI cuKernelGetFunction(CUfunction* out, CUkernel kernel) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!live_function(kernel)) return CUDA_ERROR_INVALID_HANDLE;
    *out = reinterpret_cast<CUfunction>(kernel);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuKernelGetName(const char** name, CUkernel kernel) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    const Function* f = live_function(kernel);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    *name = f->info->name.c_str();
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t* offset, size_t* size) {
    return param_info(kernel, index, offset, size);
}

SIM_API CUresult CUDAAPI cuKernelGetAttribute(int* value, CUfunction_attribute attribute, CUkernel kernel,
                                              CUdevice) {
    return function_attribute(value, attribute, kernel);
}

SIM_API CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute, int, CUkernel kernel, CUdevice) {
    std::lock_guard lock(state().mutex);
    return live_function(kernel) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// --- functions ------------------------------------------------------------------------------------

SIM_API CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction f) {
    return cuKernelGetName(name, reinterpret_cast<CUkernel>(f));
}

SIM_API CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset, size_t* size) {
    return param_info(f, index, offset, size);
}

SIM_API CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction f) {
    return function_attribute(value, attribute, f);
}

SIM_API CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute, int) {
    std::lock_guard lock(state().mutex);
    return live_function(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_API CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction f, CUfunc_cache) {
    std::lock_guard lock(state().mutex);
    return live_function(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SIM_API CUresult CUDAAPI cuFuncGetModule(CUmodule* out, CUfunction f) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    const Function* fn = live_function(f);
    if (!fn) return CUDA_ERROR_INVALID_HANDLE;
    *out = reinterpret_cast<CUmodule>(fn->module);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuFuncIsLoaded(CUfunctionLoadingState* loading, CUfunction f) {
    if (!loading) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!live_function(f)) return CUDA_ERROR_INVALID_HANDLE;
    *loading = CU_FUNCTION_LOADING_STATE_LOADED;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuFuncLoad(CUfunction f) {
    std::lock_guard lock(state().mutex);
    return live_function(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
