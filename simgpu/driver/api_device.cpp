// Initialization, version, devices and their attributes, primary contexts and the context stack.
#include "driver_api.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace tbdsim::driver;

namespace {

constexpr int kDriverVersion = 13000;

CUresult create_devices() {
    const GpuModel* model = &default_gpu_model();
    if (const char* key = std::getenv("TBDSIM_MODEL"); key && *key) {
        model = find_gpu_model(key);
        if (!model) {
            std::fprintf(stderr, "simgpu: unknown TBDSIM_MODEL '%s' (known: %s)\n", key,
                         known_gpu_model_keys().c_str());
            return CUDA_ERROR_NO_DEVICE;
        }
    }
    int count = 1;
    if (const char* n = std::getenv("TBDSIM_DEVICE_COUNT"); n && *n) count = std::atoi(n);
    if (count < 0 || count > 16) count = 1;
    uint64_t memory = model->memory_bytes;
    if (const char* m = std::getenv("TBDSIM_MEMORY_BYTES"); m && *m) {
        char* end = nullptr;
        errno = 0;
        const unsigned long long v = std::strtoull(m, &end, 10);
        if (errno == 0 && end && *end == '\0' && v > 0 && m[0] != '-') {
            memory = v;
        } else {  // said once, when the devices are made: a silently ignored setting misleads
            std::fprintf(stderr, "simgpu: ignoring TBDSIM_MEMORY_BYTES='%s' (want a positive number of bytes); "
                                 "the device has the model's %llu bytes\n",
                         m, static_cast<unsigned long long>(memory));
        }
    }
    auto& s = state();
    for (int i = 0; i < count; ++i) {
        auto device = std::make_unique<Device>();
        device->ordinal = i;
        device->model = model;
        device->memory_bytes = memory;
        s.devices.push_back(std::move(device));
    }
    return CUDA_SUCCESS;
}

}  // namespace

Device* tbdsim::driver::device_at(CUdevice ordinal) {
    auto& devices = state().devices;
    if (ordinal < 0 || ordinal >= static_cast<int>(devices.size())) return nullptr;
    return devices[size_t(ordinal)].get();
}

Context* tbdsim::driver::make_context(Device& device) {
    auto context = std::make_unique<Context>();
    context->id = state().next_context_id++;
    context->device = &device;
    context->legacy_stream.id = 7;  // CUPTI's id for the legacy default stream
    context->legacy_stream.context = context.get();
    context->legacy_stream.legacy = true;
    Context* raw = context.get();
    state().contexts.push_back(std::move(context));
    return raw;
}

namespace {

Context* make_primary(Device& device) { return make_context(device); }

int attribute_value(const Device& d, CUdevice_attribute attribute, bool& known) {
    const GpuModel& m = *d.model;
    known = true;
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return m.cc_major >= 9 ? 232448 : 166912;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return m.cc_major >= 9 ? 233472 : 167936;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return m.clock_khz;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return m.sm_count;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: return 0;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return 0x18 + d.ordinal;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: return 0;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return m.memory_clock_khz;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return m.memory_bus_width_bits;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return m.l2_cache_bytes;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return m.cc_major >= 8 && m.cc_minor == 9 ? 1536 : 2048;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return m.cc_major;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return m.cc_minor;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: return 0;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return 0;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return m.l2_cache_bytes * 3 / 4;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: return 1;  // cuIpcGetEventHandle (api_ipc.cpp)
    default: known = false; return 0;
    }
}

}  // namespace

SIM_API CUresult CUDAAPI cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (state().initialized) return CUDA_SUCCESS;
    if (state().forked_after_init) return CUDA_ERROR_NOT_INITIALIZED;  // CUDA does not survive fork
    CUresult rc = create_devices();
    if (rc != CUDA_SUCCESS) return rc;
    state().initialized = true;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDriverGetVersion(int* version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = kDriverVersion;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetCount(int* count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *count = static_cast<int>(state().devices.size());
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!device_at(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    std::snprintf(name, size_t(len), "%s", d->model->name);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) {  // cuDeviceTotalMem_v2
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = d->memory_bytes;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice dev) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    bool known = false;
    int v = attribute_value(*d, attribute, known);
    // Attributes we do not model read as 0 ("not supported"), as the real driver does for features a
    // device lacks; values outside the enum are invalid.
    if (!known && (attribute <= 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX)) return CUDA_ERROR_INVALID_VALUE;
    *value = v;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {  // cuDeviceGetUuid_v2
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!device_at(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::memset(uuid->bytes, 0, sizeof uuid->bytes);
    std::memcpy(uuid->bytes, "tbdsim-gpu-", 11);
    uuid->bytes[15] = static_cast<char>(dev);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
    if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    *major = d->model->cc_major;
    *minor = d->model->cc_minor;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetPCIBusId(char* bus_id, int len, CUdevice dev) {
    if (!bus_id || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!device_at(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::snprintf(bus_id, size_t(len), "00000000:%02X:00.0", 0x18 + dev);
    return CUDA_SUCCESS;
}

// --- primary contexts -----------------------------------------------------------------------------

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    if (!d->primary) d->primary = make_primary(*d);
    ++d->primary_refcount;
    *pctx = reinterpret_cast<CUcontext>(d->primary);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {  // _v2
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    if (d->primary_refcount == 0) return CUDA_ERROR_INVALID_CONTEXT;
    // The context object stays: handles held elsewhere keep working, as they do on a real driver
    // until the count reaches zero and the context is torn down lazily.
    --d->primary_refcount;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    *flags = d->primary_flags;
    *active = d->primary_refcount > 0;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {  // _v2
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    d->primary_flags = flags;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) {  // _v2
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* d = device_at(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    d->primary_refcount = 0;
    return CUDA_SUCCESS;
}

// --- the context stack ------------------------------------------------------------------------------

namespace {
bool valid_context(CUcontext ctx) {
    for (const auto& c : state().contexts)
        if (reinterpret_cast<CUcontext>(c.get()) == ctx) return !c->destroyed;
    return false;
}
}  // namespace

SIM_API CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (ctx && !valid_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    set_current_context(reinterpret_cast<Context*>(ctx));
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *pctx = reinterpret_cast<CUcontext>(current_context());
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {  // _v2
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx || !valid_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    context_stack().push_back(reinterpret_cast<Context*>(ctx));
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx) {  // _v2
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    auto& stack = context_stack();
    if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = reinterpret_cast<CUcontext>(stack.back());
    stack.pop_back();
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    *device = ctx->device->ordinal;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long* id) {
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* c = ctx ? reinterpret_cast<Context*>(ctx) : current_context();
    if (!c || !valid_context(reinterpret_cast<CUcontext>(c))) return CUDA_ERROR_INVALID_CONTEXT;
    *id = c->id;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    (void)ctx;
    *version = 3020;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxGetFlags(unsigned int* flags) {
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    *flags = ctx->device->primary_flags;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxSetFlags(unsigned int flags) {
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    std::lock_guard lock(state().mutex);
    ctx->device->primary_flags = flags;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxGetLimit(size_t* value, CUlimit limit) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    switch (limit) {
    case CU_LIMIT_STACK_SIZE: *value = 1024; break;
    case CU_LIMIT_PRINTF_FIFO_SIZE: *value = 1 << 20; break;
    case CU_LIMIT_MALLOC_HEAP_SIZE: *value = 8 << 20; break;
    default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuCtxSetLimit(CUlimit, size_t) { return CUDA_SUCCESS; }
