// Device, stream-ordered, pinned-host and managed memory. Device pointers are real host memory, so
// copies and sets move real bytes; capacity is accounted against the modelled device memory.
#include "driver_api.h"
#include "graph_state.h"

#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace tbdsim::driver;

namespace {

constexpr size_t kAlignment = 512;              // cudaMalloc's guaranteed alignment (>= 256)
constexpr size_t kMmapThreshold = 1 << 20;      // big buffers come from mmap, zero pages are free
constexpr size_t kGranularity = 2 << 20;        // cuMemGetInfo moves in 2 MiB pages on a real GPU

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

TbdsimMemoryKind record_kind(MemoryKind kind) {
    switch (kind) {
    case MemoryKind::DeviceAsync: return TBDSIM_MEMORY_DEVICE_ASYNC;
    case MemoryKind::PinnedHost: return TBDSIM_MEMORY_PINNED_HOST;
    case MemoryKind::Managed: return TBDSIM_MEMORY_MANAGED;
    default: return TBDSIM_MEMORY_DEVICE;
    }
}

bool counts_against_device(MemoryKind kind) { return kind != MemoryKind::PinnedHost; }

// Reserves host memory and the capacity for it. Caller holds the mutex.
CUresult allocate(Context& ctx, size_t bytes, MemoryKind kind, Allocation& out) {
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    Device& device = *ctx.device;
    size_t accounted = counts_against_device(kind) ? round_up(bytes, kAlignment) : 0;
    if (accounted > device.memory_bytes - std::min(device.memory_bytes, device.used_bytes))
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t size = round_up(bytes, kAlignment);
    void* p = nullptr;
    bool mmapped = size >= kMmapThreshold;
    if (mmapped) {
        p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) p = nullptr;
    } else {
        p = std::aligned_alloc(kAlignment, size);
    }
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    out = {reinterpret_cast<uintptr_t>(p), bytes, accounted, kind, &ctx, mmapped};
    device.used_bytes += accounted;
    state().allocations[out.address] = out;
    return CUDA_SUCCESS;
}

// Returns host memory and capacity. Caller holds the mutex; `a` is removed from the table.
void release(const Allocation& a) {
    // A graph allocation's memory belongs to its graph (api_graph_memory.cpp): only its use ends.
    if (a.graph_block) return release_graph_allocation(a);
    a.context->device->used_bytes -= a.accounted;
    if (a.ipc_fd >= 0) close(a.ipc_fd);  // importers keep their own mapping of the memfd
    void* p = reinterpret_cast<void*>(a.address);
    if (a.mmapped)
        munmap(p, round_up(a.bytes, kAlignment));
    else
        std::free(p);
}

TbdsimRecord memory_record(TbdsimRecordKind kind, const Allocation& a, uint64_t when, uint32_t stream_id) {
    TbdsimRecord r{};
    r.kind = kind;
    r.device = static_cast<uint32_t>(a.context->device->ordinal);
    r.context_id = a.context->id;
    r.stream_id = stream_id;
    r.correlation_id = next_correlation_id();
    r.sub_kind = record_kind(a.kind);
    r.start_ns = r.end_ns = when;
    r.address = a.address;
    r.bytes = a.bytes;
    r.host_launch_ns = now_ns();
    return r;
}

CUresult alloc_common(CUdeviceptr* dptr, size_t bytes, MemoryKind kind) {
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    TbdsimRecord record;
    {
        std::lock_guard lock(state().mutex);
        Context* ctx = nullptr;
        if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
        // An allocation is not enqueued, so capture would not see it: "potentially unsafe".
        if (CUresult rc = check_unsafe_call(); rc != CUDA_SUCCESS) return rc;
        Allocation a;
        if (CUresult rc = allocate(*ctx, bytes, kind, a); rc != CUDA_SUCCESS) return rc;
        *dptr = a.address;
        record = memory_record(TBDSIM_RECORD_ALLOC, a, now_ns(), 0);
    }
    publish(record);
    return CUDA_SUCCESS;
}

// Frees an allocation of one of `kinds`. cuMemFree synchronizes with the device first, as cudaFree
// does: a framework without a caching allocator pays for that, and so should a simulated one.
CUresult free_common(uintptr_t address, std::initializer_list<MemoryKind> kinds, bool synchronize) {
    if (address == 0) return CUDA_SUCCESS;
    uint64_t wait_for = 0;
    {
        std::lock_guard lock(state().mutex);
        if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
        auto it = state().allocations.find(address);
        if (it == state().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
        bool kind_ok = false;
        for (MemoryKind k : kinds) kind_ok |= it->second.kind == k;
        // Registered host memory and imported IPC memory are undone by their own calls.
        if (!kind_ok || it->second.registered || it->second.imported) return CUDA_ERROR_INVALID_VALUE;
        if (CUresult rc = check_unsafe_call(); rc != CUDA_SUCCESS) return rc;
        if (synchronize) wait_for = context_done_ns(*it->second.context);
    }
    if (wait_for) wait_until_ns(wait_for);
    TbdsimRecord record;
    {
        std::lock_guard lock(state().mutex);
        auto it = state().allocations.find(address);
        if (it == state().allocations.end()) return CUDA_ERROR_INVALID_VALUE;  // freed meanwhile
        Allocation a = it->second;
        state().allocations.erase(it);
        release(a);
        record = memory_record(TBDSIM_RECORD_FREE, a, now_ns(), 0);
    }
    publish(record);
    return CUDA_SUCCESS;
}

// On a capturing stream: an allocation node whose address is fixed now; memory comes at each launch.
CUresult capture_alloc(Capture& capture, Stream& stream, size_t bytes, CUdeviceptr* dptr) {
    std::shared_ptr<GraphMemBlock> block;
    if (CUresult rc = make_graph_block(*capture.graph, *stream.context, bytes, block); rc != CUDA_SUCCESS) return rc;
    GraphNode& node = add_captured_node(capture, GraphNode::Kind::MemAlloc);
    node.memory = block;
    *dptr = block->address;
    return CUDA_SUCCESS;
}

// On a capturing stream: a free node, for an allocation made by an allocation node (of this graph or
// another one that does not free it); memory from elsewhere cannot be freed in a graph.
CUresult capture_free(Capture& capture, Stream& stream, CUdeviceptr dptr) {
    if (!find_graph_block(dptr)) return check_not_capturing(stream);
    std::shared_ptr<GraphMemBlock> block;
    if (CUresult rc = claim_graph_block_for_free(*capture.graph, dptr, block); rc != CUDA_SUCCESS) return rc;
    add_captured_node(capture, GraphNode::Kind::MemFree).memory = block;
    return CUDA_SUCCESS;
}

CUresult alloc_async(CUdeviceptr* dptr, size_t bytes, CUstream handle, bool per_thread, MemPool* pool) {
    if (!dptr) return CUDA_ERROR_INVALID_VALUE;
    TbdsimRecord record;
    {
        std::lock_guard lock(state().mutex);
        Context* ctx = nullptr;
        if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
        Stream* stream = resolve_stream(handle, per_thread);
        if (!stream) return CUDA_ERROR_INVALID_HANDLE;
        // Captured, it becomes a graph allocation node (graph memory, not the pool's).
        CUresult capture_rc = CUDA_SUCCESS;
        if (Capture* capture = capture_for_work(*stream, capture_rc))
            return capture_alloc(*capture, *stream, bytes, dptr);
        if (capture_rc != CUDA_SUCCESS) return capture_rc;
        Device& device = *stream->context->device;
        if (pool == nullptr) pool = device.current_pool ? device.current_pool : default_pool_of(device);
        Allocation a;
        if (CUresult rc = allocate(*stream->context, bytes, MemoryKind::DeviceAsync, a); rc != CUDA_SUCCESS)
            return rc;
        state().allocations[a.address].pool = pool;
        note_pool_use(*pool);
        *dptr = a.address;
        // Stream-ordered: the memory becomes usable when the stream reaches this point.
        uint64_t when = std::max(now_ns(), stream_ready_ns(*stream));
        record = memory_record(TBDSIM_RECORD_ALLOC, a, when, stream->id);
        record.is_async = 1;
    }
    publish(record);
    return CUDA_SUCCESS;
}

CUresult free_async(CUdeviceptr dptr, CUstream handle, bool per_thread) {
    TbdsimRecord record;
    {
        std::lock_guard lock(state().mutex);
        Context* ctx = nullptr;
        if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
        Stream* stream = resolve_stream(handle, per_thread);
        if (!stream) return CUDA_ERROR_INVALID_HANDLE;
        CUresult capture_rc = CUDA_SUCCESS;
        if (Capture* capture = capture_for_work(*stream, capture_rc)) return capture_free(*capture, *stream, dptr);
        if (capture_rc != CUDA_SUCCESS) return capture_rc;
        auto it = state().allocations.find(dptr);
        if (it == state().allocations.end() || it->second.kind == MemoryKind::PinnedHost ||
            it->second.kind == MemoryKind::ModuleGlobal || it->second.kind == MemoryKind::Mapped ||
            it->second.imported)
            return CUDA_ERROR_INVALID_VALUE;
        Allocation a = it->second;
        state().allocations.erase(it);
        // Work is never executed later than its enqueue (copies ran already), so the host memory
        // can go now; the device timeline sees the free when the stream reaches it.
        release(a);
        uint64_t when = std::max(now_ns(), stream_ready_ns(*stream));
        record = memory_record(TBDSIM_RECORD_FREE, a, when, stream->id);
        record.is_async = 1;
    }
    publish(record);
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult CUDAAPI cuMemAlloc(CUdeviceptr* dptr, size_t bytes) {  // cuMemAlloc_v2
    return alloc_common(dptr, bytes, MemoryKind::Device);
}

SIM_API CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                                         unsigned int element_size) {  // cuMemAllocPitch_v2
    if (!pitch || !width || !height || (element_size != 4 && element_size != 8 && element_size != 16))
        return CUDA_ERROR_INVALID_VALUE;
    *pitch = round_up(width, kAlignment);
    return alloc_common(dptr, *pitch * height, MemoryKind::Device);
}

SIM_API CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {  // cuMemFree_v2
    return free_common(dptr, {MemoryKind::Device, MemoryKind::DeviceAsync, MemoryKind::Managed}, true);
}

SIM_API CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr* dptr, size_t bytes, unsigned int flags) {
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
    return alloc_common(dptr, bytes, MemoryKind::Managed);
}

SIM_API CUresult CUDAAPI cuMemAllocHost(void** pp, size_t bytes) {  // cuMemAllocHost_v2
    if (!pp) return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr d = 0;
    CUresult rc = alloc_common(&d, bytes, MemoryKind::PinnedHost);
    if (rc == CUDA_SUCCESS) *pp = reinterpret_cast<void*>(d);
    return rc;
}

SIM_API CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytes, unsigned int flags) {
    (void)flags;
    return cuMemAllocHost(pp, bytes);
}

SIM_API CUresult CUDAAPI cuMemFreeHost(void* p) {
    if (!p) return CUDA_SUCCESS;
    return free_common(reinterpret_cast<uintptr_t>(p), {MemoryKind::PinnedHost}, true);
}

SIM_API CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr* dptr, void* p, unsigned int flags) {
    if (!dptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    const Allocation* a = find_allocation(reinterpret_cast<uintptr_t>(p));
    if (!a || a->kind != MemoryKind::PinnedHost) return CUDA_ERROR_INVALID_VALUE;
    *dptr = reinterpret_cast<uintptr_t>(p);  // unified addressing: the same address
    return CUDA_SUCCESS;
}

CUresult tbdsim::driver::allocate_stream_ordered(CUdeviceptr* dptr, size_t bytes, CUstream stream, bool per_thread,
                                                 MemPool* pool) {
    return alloc_async(dptr, bytes, stream, per_thread, pool);
}

SIM_API CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream stream) {
    return alloc_async(dptr, bytes, stream, false, nullptr);
}
SIM_API CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUstream stream) {
    return alloc_async(dptr, bytes, stream, true, nullptr);
}
SIM_API CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
    return free_async(dptr, stream, false);
}
SIM_API CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
    return free_async(dptr, stream, true);
}

SIM_API CUresult CUDAAPI cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {  // cuMemGetInfo_v2
    if (!free_bytes || !total_bytes) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    const Device& d = *ctx->device;
    size_t used = std::min(d.memory_bytes, round_up(d.used_bytes, kGranularity));
    *total_bytes = d.memory_bytes;
    *free_bytes = d.memory_bytes - used;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr* base, size_t* size, CUdeviceptr dptr) {  // _v2
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Allocation* a = find_allocation(dptr);
    if (!a || a->kind == MemoryKind::PinnedHost) return CUDA_ERROR_NOT_FOUND;
    if (base) *base = a->address;
    if (size) *size = a->bytes;
    return CUDA_SUCCESS;
}

// --- pointer attributes ---------------------------------------------------------------------------

namespace {
CUresult pointer_attribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    const Allocation* a = find_allocation(ptr);
    auto put_u32 = [&](unsigned v) { std::memcpy(data, &v, sizeof v); };
    auto put_ptr = [&](uintptr_t v) { std::memcpy(data, &v, sizeof v); };
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        if (!a) return CUDA_ERROR_INVALID_VALUE;
        put_u32(a->kind == MemoryKind::PinnedHost ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        if (!a) return CUDA_ERROR_INVALID_VALUE;
        put_ptr(reinterpret_cast<uintptr_t>(a->context));
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!a) return CUDA_ERROR_INVALID_VALUE;
        if (attribute == CU_POINTER_ATTRIBUTE_HOST_POINTER && a->kind == MemoryKind::Device)
            return CUDA_ERROR_INVALID_VALUE;
        put_ptr(ptr);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        if (!a) return CUDA_ERROR_INVALID_VALUE;
        put_u32(a->kind == MemoryKind::Managed);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        if (!a) return CUDA_ERROR_INVALID_VALUE;
        put_u32(static_cast<unsigned>(a->context->device->ordinal));
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        if (!a) return CUDA_ERROR_INVALID_VALUE;
        put_ptr(a->address);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: {
        if (!a) return CUDA_ERROR_INVALID_VALUE;
        size_t v = a->bytes;
        std::memcpy(data, &v, sizeof v);
        return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_MAPPED:
        put_u32(a != nullptr);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: {
        if (!a) return CUDA_ERROR_INVALID_VALUE;
        unsigned long long id = a->address;
        std::memcpy(data, &id, sizeof id);
        return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        put_u32(1);
        return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}
}  // namespace

SIM_API CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    return pointer_attribute(data, attribute, ptr);
}

SIM_API CUresult CUDAAPI cuPointerGetAttributes(unsigned int count, CUpointer_attribute* attributes,
                                                void** data, CUdeviceptr ptr) {
    if (!attributes || !data) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    // Unlike cuPointerGetAttribute, unknown pointers are not an error here: the memory type reads 0.
    bool known = find_allocation(ptr) != nullptr;
    for (unsigned i = 0; i < count; ++i) {
        if (!data[i]) continue;
        if (!known) {
            std::memset(data[i], 0, attributes[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE ? 4 : 8);
            continue;
        }
        pointer_attribute(data[i], attributes[i], ptr);
    }
    return CUDA_SUCCESS;
}

