// Virtual memory management (cuMemMap / cuMemUnmap, as PyTorch's expandable segments use them): each
// mapped range is recorded as an allocation of kind DeviceMapped (the trace's 'device_mapped': device
// memory, told apart so that the tagger can join mappings laid end to end, which one tensor may span)
// from its cuMemMap to its cuMemUnmap, with the call stack of the map. cuMemCreate's physical memory is not an
// allocation of its own (it is usable only once mapped); one physical allocation mapped twice shows as two allocations.
// An unmap may cover several mappings: the ranges mapped are remembered here so that each gets its own free.
#include <map>
#include <mutex>
#include <vector>

#include "hook_support.h"
#include "tbdprof/collector/stack_capture.h"

namespace tbdprof::preload {
namespace {

using raw::MemoryKind;
using raw::RecordKind;

std::mutex g_mapped_mutex;
std::map<uint64_t, uint64_t>& mapped_ranges() {              // start -> bytes
    static auto* ranges = new std::map<uint64_t, uint64_t>;  // never destroyed: exit handlers may unmap
    return *ranges;
}

template <auto& Real, ApiPath Path>
CUresult mem_map(CUdeviceptr ptr, size_t bytes, size_t offset, CUmemGenericAllocationHandle handle,
                 unsigned long long flags) {
    HookGuard guard;
    const CUresult result = Real.get()(ptr, bytes, offset, handle, flags);
    if (result != CUDA_SUCCESS) return result;
    {
        std::lock_guard lock(g_mapped_mutex);
        mapped_ranges()[ptr] = bytes;
    }
    if (!guard.recording()) return result;
    ThreadState& thread = guard.state();
    collector::note_allocated_range(ptr, bytes);
    raw::RawAlloc record{};
    record.host_ns = collector::host_monotonic_ns();
    record.address = ptr;
    record.bytes = bytes;
    record.stack_id = collector::capture_stack(thread);
    record.device = current_device(thread);
    record.memory_kind = MemoryKind::DeviceMapped;
    record.api = effective_path(thread, Path);
    collector::emit_record(thread, RecordKind::Alloc, record);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult mem_unmap(CUdeviceptr ptr, size_t bytes) {
    HookGuard guard;
    const CUresult result = Real.get()(ptr, bytes);
    if (result != CUDA_SUCCESS) return result;
    std::vector<uint64_t> unmapped;
    {
        std::lock_guard lock(g_mapped_mutex);
        auto& ranges = mapped_ranges();
        for (auto it = ranges.lower_bound(ptr); it != ranges.end() && it->first < ptr + bytes;) {
            unmapped.push_back(it->first);
            it = ranges.erase(it);
        }
    }
    if (!guard.recording()) return result;
    ThreadState& thread = guard.state();
    for (uint64_t address : unmapped) {
        raw::RawFree record{};
        record.host_ns = collector::host_monotonic_ns();
        record.address = address;
        record.device = current_device(thread);
        record.memory_kind = MemoryKind::DeviceMapped;
        record.api = effective_path(thread, Path);
        collector::emit_record(thread, RecordKind::Free, record);
    }
    return result;
}

using MapFn = decltype(&cuMemMap);
using UnmapFn = decltype(&cuMemUnmap);

}  // namespace

TBD_DRIVER_HOOK(cuMemMap, MapFn, mem_map,
                (CUdeviceptr p, size_t n, size_t o, CUmemGenericAllocationHandle h, unsigned long long f),
                (p, n, o, h, f))
TBD_DRIVER_HOOK(cuMemUnmap, UnmapFn, mem_unmap, (CUdeviceptr p, size_t n), (p, n))

void add_vmm_hooks(std::vector<HookedSymbol>& out) {
    out.push_back(TBD_HOOK_ENTRY(cuMemMap, mem_map));
    out.push_back(TBD_HOOK_ENTRY(cuMemUnmap, mem_unmap));
}

}  // namespace tbdprof::preload
