#include "memory_kinds.h"

namespace tbdsim::cupti {

CUpti_ActivityMemoryKind memory_kind_of_allocation(uint32_t tbdsim_memory_kind) {
    switch (tbdsim_memory_kind) {
        case TBDSIM_MEMORY_DEVICE:
        case TBDSIM_MEMORY_DEVICE_ASYNC:
        case TBDSIM_MEMORY_DEVICE_MAPPED:
            return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        case TBDSIM_MEMORY_PINNED_HOST: return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
        case TBDSIM_MEMORY_MANAGED: return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
        default: return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
    }
}

void MemoryKinds::observe(const TbdsimRecord& record) {
    const CUpti_ActivityMemoryKind kind = memory_kind_of_allocation(record.sub_kind);
    if (kind != CUPTI_ACTIVITY_MEMORY_KIND_PINNED && kind != CUPTI_ACTIVITY_MEMORY_KIND_MANAGED) return;
    std::lock_guard lock(mutex_);
    if (record.kind == TBDSIM_RECORD_ALLOC) {
        ranges_[record.address] = Range{record.address + record.bytes, kind};
    } else if (record.kind == TBDSIM_RECORD_FREE) {
        ranges_.erase(record.address);
    }
}

const MemoryKinds::Range* MemoryKinds::find_locked(uint64_t address) const {
    auto it = ranges_.upper_bound(address);
    if (it == ranges_.begin()) return nullptr;
    --it;
    return address < it->second.end ? &it->second : nullptr;
}

CUpti_ActivityMemoryKind MemoryKinds::host_kind(uint64_t address) const {
    std::lock_guard lock(mutex_);
    const Range* range = find_locked(address);
    return range != nullptr ? range->kind : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
}

CUpti_ActivityMemoryKind MemoryKinds::device_kind(uint64_t address) const {
    std::lock_guard lock(mutex_);
    const Range* range = find_locked(address);
    return range != nullptr ? range->kind : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
}

}  // namespace tbdsim::cupti
