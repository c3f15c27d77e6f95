// NVTX's memory extension (nvtx3/nvToolsExtMem.h): how a sub-allocator (a pool, an arena) tells tools
// what lies inside the memory it got from cudaMalloc. Extensions reach a tool through NVTX's extension
// mechanism (nvtxDetail/nvtxExtInit.h): at the first call of an extension's function, each shared
// object that uses it loads the library named in NVTX_INJECTION64_PATH (this one, already loaded by
// LD_PRELOAD) and calls its exported InitializeInjectionNvtxExtension with a module description: the
// module and compatibility ids and the function slots to fill (slot i = callback id i,
// NVTX3EXT_CBID_*). Slots we leave alone NVTX makes no-ops.
//
// Recorded as RawMemRegion, one record per heap or region element, always (as allocations are, not
// only inside capture windows): heap register/unregister/reset, region register/resize/unregister and
// region names. A heap handle is a counter (1, 2, ...); a region handle is the region's start
// address, so a region named or unregistered by pointer or by handle reads the same and the collector
// keeps no table. Permissions are accepted (Create returns a distinct handle) and not recorded.
// Not handled: the CUDA runtime add-on module (nvToolsExtMemCudaRt.h), whose calls stay no-ops.
#define NVTX_NO_IMPL  // types only: the tool side
#include <nvtx3/nvToolsExtMem.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/recorder.h"

#include "nvtx_text.h"

#define TBD_VISIBLE __attribute__((visibility("default")))

namespace tbdprof::preload {
namespace {

using collector::ThreadState;
using raw::MemRegionOp;

constinit std::atomic<uint64_t> g_next_heap{1};
constinit std::atomic<uint64_t> g_next_permissions{1};

uint64_t handle_id(const void* handle) {
    return reinterpret_cast<uintptr_t>(handle);
}

// Region and heap names are names, not ranges: interned without the --steps classification.
uint64_t name_id(uint32_t message_type, const nvtxMessageValue_t& message) {
    ThreadState& thread = collector::thread_state();
    switch (message_type) {
        case NVTX_MESSAGE_TYPE_ASCII:
            return message.ascii == nullptr ? 0 : collector::intern_string(thread, std::string_view(message.ascii));
        case NVTX_MESSAGE_TYPE_UNICODE: {
            if (message.unicode == nullptr) return 0;
            nvtx::NameBuffer buffer;
            return collector::intern_string(thread,
                                            std::string_view(buffer, nvtx::utf8_of_wide(message.unicode, buffer)));
        }
        case NVTX_MESSAGE_TYPE_REGISTERED:
            return handle_id(message.registered);  // its RawString id
        default:
            return 0;
    }
}

void emit(MemRegionOp op, nvtxDomainHandle_t domain, uint64_t heap, uint64_t address, uint64_t bytes, uint64_t name = 0,
          uint32_t usage = 0) {
    raw::RawMemRegion r{};
    r.host_ns = collector::host_monotonic_ns();
    r.heap = heap;
    r.address = address;
    r.bytes = bytes;
    r.name_string = name;
    r.domain_string = handle_id(domain);
    r.usage = usage;
    r.op = op;
    collector::emit_record(collector::thread_state(), raw::RecordKind::MemRegion, r);
}

// The i-th element of a caller's array whose elements are `stride` bytes (a newer, longer struct
// than ours is fine: we read our prefix). Null when the element is shorter than what we read.
template <typename T>
const T* element(const void* array, size_t stride, size_t i) {
    if (array == nullptr || stride < sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(static_cast<const char*>(array) + i * stride);
}

// ---- Heaps -----------------------------------------------------------------------------------------

nvtxMemHeapHandle_t heap_register(nvtxDomainHandle_t domain, const nvtxMemHeapDesc_t* desc) {
    const uint64_t heap = g_next_heap.fetch_add(1, std::memory_order_relaxed);
    uint64_t address = 0, bytes = 0, name = 0;
    uint32_t usage = 0;
    if (desc != nullptr) {
        usage = desc->usage;
        if (desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS &&
            desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t) && desc->typeSpecificDesc != nullptr) {
            const auto* range = static_cast<const nvtxMemVirtualRangeDesc_t*>(desc->typeSpecificDesc);
            address = handle_id(range->ptr);
            bytes = range->size;
        }
        // Older, shorter descriptors end before the message.
        constexpr size_t kMessageEnd = offsetof(nvtxMemHeapDesc_t, message) + sizeof(nvtxMessageValue_t);
        if (desc->structSize == 0 || desc->structSize >= kMessageEnd) name = name_id(desc->messageType, desc->message);
    }
    emit(MemRegionOp::HeapRegister, domain, heap, address, bytes, name, usage);
    return reinterpret_cast<nvtxMemHeapHandle_t>(static_cast<uintptr_t>(heap));
}

void heap_unregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap) {
    emit(MemRegionOp::HeapUnregister, domain, handle_id(heap), 0, 0);
}

void heap_reset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap) {
    emit(MemRegionOp::HeapReset, domain, handle_id(heap), 0, 0);
}

// ---- Regions ---------------------------------------------------------------------------------------

void regions_register(nvtxDomainHandle_t domain, const nvtxMemRegionsRegisterBatch_t* batch) {
    if (batch == nullptr || batch->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS) return;
    for (size_t i = 0; i < batch->regionCount; ++i) {
        const auto* range =
            element<nvtxMemVirtualRangeDesc_t>(batch->regionDescElements, batch->regionDescElementSize, i);
        if (range == nullptr) return;
        emit(MemRegionOp::RegionRegister, domain, handle_id(batch->heap), handle_id(range->ptr), range->size);
        if (batch->regionHandleElementsOut != nullptr)
            batch->regionHandleElementsOut[i] = reinterpret_cast<nvtxMemRegionHandle_t>(const_cast<void*>(range->ptr));
    }
}

void regions_resize(nvtxDomainHandle_t domain, const nvtxMemRegionsResizeBatch_t* batch) {
    if (batch == nullptr || batch->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS) return;
    for (size_t i = 0; i < batch->regionDescCount; ++i) {
        const auto* range =
            element<nvtxMemVirtualRangeDesc_t>(batch->regionDescElements, batch->regionDescElementSize, i);
        if (range == nullptr) return;
        emit(MemRegionOp::RegionResize, domain, 0, handle_id(range->ptr), range->size);
    }
}

// A region referred to by pointer or by handle: both are its start address (our handles are).
uint64_t region_address(const nvtxMemRegionRef_t& ref) {
    return handle_id(ref.pointer);
}

void regions_unregister(nvtxDomainHandle_t domain, const nvtxMemRegionsUnregisterBatch_t* batch) {
    if (batch == nullptr) return;
    for (size_t i = 0; i < batch->refCount; ++i) {
        const auto* ref = element<nvtxMemRegionRef_t>(batch->refElements, batch->refElementSize, i);
        if (ref == nullptr) return;
        emit(MemRegionOp::RegionUnregister, domain, 0, region_address(*ref), 0);
    }
}

void regions_name(nvtxDomainHandle_t domain, const nvtxMemRegionsNameBatch_t* batch) {
    if (batch == nullptr) return;
    for (size_t i = 0; i < batch->regionCount; ++i) {
        const auto* desc = element<nvtxMemRegionNameDesc_t>(batch->regionElements, batch->regionElementSize, i);
        if (desc == nullptr) return;
        emit(MemRegionOp::RegionName, domain, 0, region_address(desc->region), 0, name_id(desc->nameType, desc->name));
    }
}

nvtxMemPermissionsHandle_t permissions_create(nvtxDomainHandle_t, int32_t) {
    const uint64_t id = g_next_permissions.fetch_add(1, std::memory_order_relaxed);
    return reinterpret_cast<nvtxMemPermissionsHandle_t>(static_cast<uintptr_t>(id));
}

// ---- Filling the module's slots --------------------------------------------------------------------

template <typename F>
intptr_t as_slot(F* function) {
    return reinterpret_cast<intptr_t>(function);
}

bool attach_memory_module(nvtxExtModuleInfo_t& module) {
    const struct {
        uint32_t id;
        intptr_t function;
    } slots[] = {
        {NVTX3EXT_CBID_nvtxMemHeapRegister, as_slot(&heap_register)},
        {NVTX3EXT_CBID_nvtxMemHeapUnregister, as_slot(&heap_unregister)},
        {NVTX3EXT_CBID_nvtxMemHeapReset, as_slot(&heap_reset)},
        {NVTX3EXT_CBID_nvtxMemRegionsRegister, as_slot(&regions_register)},
        {NVTX3EXT_CBID_nvtxMemRegionsResize, as_slot(&regions_resize)},
        {NVTX3EXT_CBID_nvtxMemRegionsUnregister, as_slot(&regions_unregister)},
        {NVTX3EXT_CBID_nvtxMemRegionsName, as_slot(&regions_name)},
        {NVTX3EXT_CBID_nvtxMemPermissionsCreate, as_slot(&permissions_create)},
    };
    if (module.segments == nullptr || module.segmentsCount == 0) return false;
    nvtxExtModuleSegment_t& segment = module.segments[0];  // the memory module has one segment
    if (segment.functionSlots == nullptr) return false;
    for (const auto& slot : slots)
        if (slot.id < segment.slotCount) segment.functionSlots[slot.id] = slot.function;
    return true;
}

}  // namespace
}  // namespace tbdprof::preload

// Called once per shared object and extension module, at that module's first call (NVTX serializes
// the calls of one module). Returning 0 tells NVTX to make every function of that module a no-op:
// we do that for modules we do not record (payloads, counters, the CUDA runtime add-on), for memory
// modules of another compatibility id (their structures may differ), and when not recording.
extern "C" TBD_VISIBLE int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t* module) {
    using namespace tbdprof;
    if (module == nullptr || !collector::collector_enabled()) return 0;
    if (module->structSize != 0 && module->structSize < sizeof(nvtxExtModuleInfo_t)) return 0;
    if (module->moduleId != NVTX_EXT_MODULEID_MEM || module->compatId != NVTX_EXT_COMPATID_MEM) return 0;
    return preload::attach_memory_module(*module) ? 1 : 0;
}
