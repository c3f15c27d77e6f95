// Which CUPTI memory kind an address belongs to. The driver reports every allocation and free to
// CUPTI's sink, so pinned host and managed ranges are known for as long as CUPTI was loaded when
// they were allocated; other host addresses are pageable, other device addresses device memory.
#pragma once

#include <cupti_activity.h>
#include <simgpu/private_api.h>

#include <cstdint>
#include <map>
#include <mutex>

namespace tbdsim::cupti {

class MemoryKinds {
public:
    void observe(const TbdsimRecord& record);  // ALLOC and FREE records; others are ignored
    CUpti_ActivityMemoryKind host_kind(uint64_t address) const;
    CUpti_ActivityMemoryKind device_kind(uint64_t address) const;

private:
    struct Range {
        uint64_t end;
        CUpti_ActivityMemoryKind kind;
    };
    const Range* find_locked(uint64_t address) const;

    mutable std::mutex mutex_;
    std::map<uint64_t, Range> ranges_;  // by start address; pinned host and managed ranges only
};

CUpti_ActivityMemoryKind memory_kind_of_allocation(uint32_t tbdsim_memory_kind);

}  // namespace tbdsim::cupti
