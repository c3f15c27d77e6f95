// The one definition of what kind of memory an allocation is (allocations.kind) and which kinds
// count as device memory: what the report's peak, the tagger and the viewer measure. Pinned host
// memory (cudaMallocHost) is host RAM the device can reach, so it is never device memory.
#pragma once

#include <cstdint>
#include <string_view>

namespace tbdprof::trace {

// device_mapped: a range mapped by cuMemMap into reserved address space (virtual memory management, as
// PyTorch's expandable segments grow), from the map to the unmap; adjacent mappings can hold one tensor.
enum class MemoryKind : uint8_t { device, device_async, pinned_host, managed, device_mapped, unknown };

// As stored in allocations.kind, in the enum's order: the builder writes these, readers parse them.
inline constexpr const char* kMemoryKindNames[] = {"device",  "device_async",  "pinned_host",
                                                   "managed", "device_mapped", "unknown"};

constexpr const char* memory_kind_name(MemoryKind kind) {
    return kMemoryKindNames[static_cast<int>(kind)];
}
constexpr MemoryKind memory_kind_from_text(std::string_view text) {
    for (int i = 0; i < static_cast<int>(MemoryKind::unknown); ++i)
        if (text == kMemoryKindNames[i]) return static_cast<MemoryKind>(i);
    return MemoryKind::unknown;
}

constexpr bool is_device_memory(MemoryKind kind) {
    return kind == MemoryKind::device || kind == MemoryKind::device_async || kind == MemoryKind::managed ||
           kind == MemoryKind::device_mapped;
}

// The same rule for SQL written over the trace: `WHERE kind IN <kDeviceMemoryKindsSql>`.
inline constexpr const char* kDeviceMemoryKindsSql = "('device', 'device_async', 'managed', 'device_mapped')";

}  // namespace tbdprof::trace
