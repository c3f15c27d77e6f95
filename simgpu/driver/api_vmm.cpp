// Virtual memory management, as PyTorch's expandable segments use it: reserve an address range, create
// physical memory, map it into the range, grant access, and undo each step. Physical memory is a
// memfd of the requested size (charged against the device's capacity at cuMemCreate); a mapping maps
// that file at the reserved address, so the same bytes are seen through every mapping, and copies and
// sets move real bytes as they do for cuMemAlloc memory. A mapped range is an allocation from
// cuMemMap to cuMemUnmap (published as such, so CUPTI and the ground truth report it). Memory is
// inaccessible (PROT_NONE) until cuMemSetAccess grants read-write access.
#include "driver_api.h"
#include "graph_state.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace tbdsim::driver {
struct PhysicalMemory {
    int fd = -1;
    size_t bytes = 0;
    Device* device = nullptr;
    CUmemAllocationProp prop{};
    int references = 1;  // the handle itself plus one per mapping and retained handle
};
}  // namespace tbdsim::driver

using namespace tbdsim::driver;

namespace {

constexpr size_t kGranularity = 2u << 20;  // minimum and recommended, as on Hopper

size_t round_up(size_t v, size_t to) {
    return (v + to - 1) / to * to;
}

PhysicalMemory* physical_of(CUmemGenericAllocationHandle handle) {
    auto* p = reinterpret_cast<PhysicalMemory*>(static_cast<uintptr_t>(handle));
    return state().physical.count(p) ? p : nullptr;
}

void drop_reference(PhysicalMemory* p) {
    if (--p->references > 0) return;
    close(p->fd);
    p->device->used_bytes -= p->bytes;
    state().physical.erase(p);
    delete p;
}

// The reservation containing [address, address + bytes), or end().
std::map<uintptr_t, size_t>::iterator reservation_of(uintptr_t address, size_t bytes) {
    auto& r = state().reservations;
    auto it = r.upper_bound(address);
    if (it == r.begin()) return r.end();
    --it;
    return address + bytes <= it->first + it->second ? it : r.end();
}

bool overlaps_mapping(uintptr_t address, size_t bytes) {
    for (const auto& [start, a] : state().allocations)
        if (a.kind == MemoryKind::Mapped && start < address + bytes && address < start + a.bytes) return true;
    return false;
}

CUresult check_prop(const CUmemAllocationProp* prop, Device*& device) {
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    device = device_at(prop->location.id);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    // Asking for a file-descriptor handle is accepted (PyTorch's expandable segments always ask, to
    // be shareable); exporting one (cuMemExportToShareableHandle, IPC between processes) is not
    // modelled. Other handle types are refused.
    if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE &&
        prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED;
    return CUDA_SUCCESS;
}

TbdsimRecord mapping_record(TbdsimRecordKind kind, const Allocation& a) {
    TbdsimRecord r{};
    r.kind = kind;
    r.device = static_cast<uint32_t>(a.context->device->ordinal);
    r.context_id = a.context->id;
    r.correlation_id = next_correlation_id();
    r.sub_kind = TBDSIM_MEMORY_DEVICE_MAPPED;
    r.start_ns = r.end_ns = now_ns();
    r.address = a.address;
    r.bytes = a.bytes;
    r.host_launch_ns = r.start_ns;
    return r;
}

}  // namespace

SIM_API CUresult CUDAAPI cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                                       CUmemAllocationGranularity_flags option) {
    if (!granularity) return CUDA_ERROR_INVALID_VALUE;
    if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* device = nullptr;
    if (CUresult rc = check_prop(prop, device); rc != CUDA_SUCCESS) return rc;
    *granularity = kGranularity;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr* ptr, size_t bytes, size_t alignment, CUdeviceptr addr,
                                             unsigned long long flags) {
    if (!ptr || bytes == 0 || bytes % kGranularity != 0 || flags != 0 || (alignment & (alignment - 1)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    // Over-reserve, then trim to the alignment (at least the granularity). `addr` is only a hint.
    const size_t align = std::max(alignment, kGranularity);
    void* hint = reinterpret_cast<void*>(static_cast<uintptr_t>(addr));
    void* raw = mmap(hint, bytes + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    const auto start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = round_up(start, align);
    if (aligned > start) munmap(raw, aligned - start);
    const uintptr_t end = start + bytes + align;
    if (end > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
    state().reservations[aligned] = bytes;
    *ptr = aligned;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t bytes) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    auto it = state().reservations.find(ptr);
    if (it == state().reservations.end() || it->second != bytes) return CUDA_ERROR_INVALID_VALUE;
    if (overlaps_mapping(ptr, bytes)) return CUDA_ERROR_INVALID_VALUE;  // unmap first
    munmap(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)), bytes);
    state().reservations.erase(it);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle* handle, size_t bytes,
                                     const CUmemAllocationProp* prop, unsigned long long flags) {
    if (!handle || bytes == 0 || bytes % kGranularity != 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Device* device = nullptr;
    if (CUresult rc = check_prop(prop, device); rc != CUDA_SUCCESS) return rc;
    if (bytes > device->memory_bytes - std::min(device->memory_bytes, device->used_bytes))
        return CUDA_ERROR_OUT_OF_MEMORY;
    const int fd = memfd_create("tbdsim-physical", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    auto* p = new PhysicalMemory{fd, bytes, device, *prop, 1};
    device->used_bytes += bytes;
    state().physical.insert(p);
    *handle = reinterpret_cast<uintptr_t>(p);
    return CUDA_SUCCESS;
}

// The memory goes when the last mapping of it is unmapped, as documented.
SIM_API CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    PhysicalMemory* p = physical_of(handle);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    drop_reference(p);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t bytes, size_t offset, CUmemGenericAllocationHandle handle,
                                  unsigned long long flags) {
    if (bytes == 0 || flags != 0 || ptr % kGranularity != 0 || bytes % kGranularity != 0 || offset % kGranularity != 0)
        return CUDA_ERROR_INVALID_VALUE;
    TbdsimRecord record;
    {
        std::lock_guard lock(state().mutex);
        if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
        PhysicalMemory* p = physical_of(handle);
        if (!p || offset + bytes > p->bytes) return CUDA_ERROR_INVALID_VALUE;
        if (reservation_of(ptr, bytes) == state().reservations.end() || overlaps_mapping(ptr, bytes))
            return CUDA_ERROR_INVALID_VALUE;
        void* at = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
        if (mmap(at, bytes, PROT_NONE, MAP_SHARED | MAP_FIXED, p->fd, static_cast<off_t>(offset)) == MAP_FAILED)
            return CUDA_ERROR_OUT_OF_MEMORY;
        Context* context = p->device->primary;
        if (Context* current = current_context(); current && current->device == p->device) context = current;
        if (!context) return CUDA_ERROR_INVALID_CONTEXT;
        Allocation a{ptr, bytes, 0, MemoryKind::Mapped, context, false, false};
        state().allocations[ptr] = a;
        ++p->references;
        state().mapped_physical[ptr] = p;
        record = mapping_record(TBDSIM_RECORD_ALLOC, a);
    }
    publish(record);
    return CUDA_SUCCESS;
}

// Unmaps every mapping inside [ptr, ptr + bytes); the range must cover them whole.
SIM_API CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t bytes) {
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    std::vector<TbdsimRecord> records;
    uint64_t wait_for = 0;
    {
        std::lock_guard lock(state().mutex);
        if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
        if (reservation_of(ptr, bytes) == state().reservations.end()) return CUDA_ERROR_INVALID_VALUE;
        for (const auto& [start, a] : state().allocations) {
            if (a.kind != MemoryKind::Mapped || start + a.bytes <= ptr || start >= ptr + bytes) continue;
            if (start < ptr || start + a.bytes > ptr + bytes) return CUDA_ERROR_INVALID_VALUE;  // partial
            wait_for = std::max(wait_for, context_done_ns(*a.context));
        }
    }
    // Work that may still use the memory finishes first, as for cuMemFree.
    if (wait_for) wait_until_ns(wait_for);
    std::lock_guard lock(state().mutex);
    auto& allocations = state().allocations;
    for (auto it = allocations.lower_bound(ptr); it != allocations.end() && it->first < ptr + bytes;) {
        if (it->second.kind != MemoryKind::Mapped) {
            ++it;
            continue;
        }
        const Allocation a = it->second;
        it = allocations.erase(it);
        // Back to reserved, inaccessible address space.
        mmap(reinterpret_cast<void*>(a.address), a.bytes, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        auto mapped = state().mapped_physical.find(a.address);
        if (mapped != state().mapped_physical.end()) {
            drop_reference(mapped->second);
            state().mapped_physical.erase(mapped);
        }
        records.push_back(mapping_record(TBDSIM_RECORD_FREE, a));
    }
    for (const TbdsimRecord& r : records) publish(r);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t bytes, const CUmemAccessDesc* desc, size_t count) {
    if (!desc || count == 0 || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    int prot = PROT_NONE;
    for (size_t i = 0; i < count; ++i) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !device_at(desc[i].location.id))
            return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            prot = PROT_READ | PROT_WRITE;
        else if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ && prot == PROT_NONE)
            prot = PROT_READ;
        else if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ)
            return CUDA_ERROR_INVALID_VALUE;
    }
    // The whole range must be mapped, by whole mappings.
    size_t covered = 0;
    std::vector<Allocation*> mappings;
    for (auto it = state().allocations.lower_bound(ptr); it != state().allocations.end() && it->first < ptr + bytes;
         ++it) {
        if (it->second.kind != MemoryKind::Mapped) continue;
        covered += it->second.bytes;
        mappings.push_back(&it->second);
    }
    if (covered != bytes) return CUDA_ERROR_INVALID_VALUE;
    for (Allocation* a : mappings) a->accessible = prot == (PROT_READ | PROT_WRITE);
    // One protection for every device (the simulated devices share the host's address space).
    if (mprotect(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)), bytes, prot) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
    if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Allocation* a = find_allocation(ptr);
    if (!a || a->kind != MemoryKind::Mapped) return CUDA_ERROR_INVALID_VALUE;
    *flags = a->accessible ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* address) {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const Allocation* a = find_allocation(reinterpret_cast<uintptr_t>(address));
    if (!a || a->kind != MemoryKind::Mapped) return CUDA_ERROR_INVALID_VALUE;
    PhysicalMemory* p = state().mapped_physical.at(a->address);
    ++p->references;
    *handle = reinterpret_cast<uintptr_t>(p);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                                CUmemGenericAllocationHandle handle) {
    if (!prop) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const PhysicalMemory* p = physical_of(handle);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    *prop = p->prop;
    return CUDA_SUCCESS;
}
