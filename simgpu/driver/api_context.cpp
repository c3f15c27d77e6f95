// Contexts created by the program (cuCtxCreate in its CUDA 3.2, 11.4 and 12.5/13 forms) and their
// destruction. Primary contexts and the context stack are in api_device.cpp.
#include "driver_api.h"

#include <utility>
#include <vector>

using namespace tbdsim::driver;

namespace {

// Pushes a new context for `dev` onto the calling thread's stack, as cuCtxCreate documents.
CUresult create_context(CUcontext* pctx, unsigned flags, CUdevice dev) {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* device = device_at(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    constexpr unsigned kKnownFlags = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                                     CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS;
    if (flags & ~kKnownFlags) return CUDA_ERROR_INVALID_VALUE;
    Context* context = make_context(*device);
    context->created = true;
    context->flags = flags;
    context_stack().push_back(context);
    *pctx = reinterpret_cast<CUcontext>(context);
    return CUDA_SUCCESS;
}

Context* live_context(CUcontext handle) {
    for (const auto& c : state().contexts)
        if (reinterpret_cast<CUcontext>(c.get()) == handle && !c->destroyed) return c.get();
    return nullptr;
}

}  // namespace

extern "C" {
CUresult ctx_create_v2(CUcontext*, unsigned, CUdevice) __asm__("cuCtxCreate_v2");
CUresult ctx_create_v3(CUcontext*, CUexecAffinityParam*, int, unsigned, CUdevice) __asm__("cuCtxCreate_v3");
CUresult ctx_create_v4(CUcontext*, CUctxCreateParams*, unsigned, CUdevice) __asm__("cuCtxCreate_v4");
CUresult ctx_destroy_v2(CUcontext) __asm__("cuCtxDestroy_v2");
}

SIM_API CUresult ctx_create_v2(CUcontext* pctx, unsigned flags, CUdevice dev) {
    return create_context(pctx, flags, dev);
}

// Execution affinity (SM partitions) and CIG (shared graphics contexts) are not modelled.
SIM_API CUresult ctx_create_v3(CUcontext* pctx, CUexecAffinityParam* params, int count, unsigned flags, CUdevice dev) {
    if (count < 0 || (count > 0 && !params)) return CUDA_ERROR_INVALID_VALUE;
    if (count > 0) return CUDA_ERROR_NOT_SUPPORTED;
    return create_context(pctx, flags, dev);
}

SIM_API CUresult ctx_create_v4(CUcontext* pctx, CUctxCreateParams* params, unsigned flags, CUdevice dev) {
    if (params) {
        if (params->numExecAffinityParams < 0) return CUDA_ERROR_INVALID_VALUE;
        if (params->numExecAffinityParams > 0 || params->cigParams) return CUDA_ERROR_NOT_SUPPORTED;
    }
    return create_context(pctx, flags, dev);
}

// Frees what the context owns (its allocations, after its work finished: cuMemFree synchronizes) and
// invalidates the handle; the calling thread's stack loses it. A primary context cannot be destroyed.
SIM_API CUresult ctx_destroy_v2(CUcontext handle) {
    std::vector<std::pair<CUdeviceptr, MemoryKind>> owned;
    {
        std::lock_guard lock(state().mutex);
        if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
        Context* context = live_context(handle);
        if (!context || !context->created) return CUDA_ERROR_INVALID_CONTEXT;
        for (const auto& [address, allocation] : state().allocations)
            if (allocation.context == context && allocation.kind != MemoryKind::ModuleGlobal &&
                allocation.kind != MemoryKind::Mapped && !allocation.registered)  // the program's to undo
                owned.emplace_back(address, allocation.kind);
    }
    for (const auto& [address, kind] : owned) {
        if (kind == MemoryKind::PinnedHost)
            cuMemFreeHost(reinterpret_cast<void*>(static_cast<uintptr_t>(address)));
        else
            cuMemFree(address);
    }
    std::lock_guard lock(state().mutex);
    Context* context = live_context(handle);
    if (!context) return CUDA_ERROR_INVALID_CONTEXT;  // destroyed meanwhile by another thread
    context->destroyed = true;
    auto& stack = context_stack();
    std::erase(stack, context);
    return CUDA_SUCCESS;
}
