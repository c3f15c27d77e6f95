// Turns the driver's ground-truth records (TbdsimRecord) into the activity records of this CUPTI
// version: CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4,
// CUpti_ActivityMemory4, CUpti_ActivityAPI and CUpti_ActivityExternalCorrelation, the latest the 13.0 headers define.
#pragma once

#include <cstring>

#include <cupti_activity.h>
#include <simgpu/private_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memory_kinds.h"

namespace tbdsim::cupti {

// Records laid out back to back, each at an ACTIVITY_RECORD_ALIGNMENT boundary.
// The records one device event turns into (its external correlations, then itself), assembled on
// the stack: this runs inside every simulated launch, so it must not allocate.
struct RecordBytes {
    static constexpr std::size_t kCapacity = 2048;  // a kernel record and one correlation per kind
    alignas(ACTIVITY_RECORD_ALIGNMENT) uint8_t bytes[kCapacity];
    std::size_t size = 0;
    std::size_t count = 0;

    template <typename Record>
    void add(const Record& record) {
        static_assert(sizeof(Record) % ACTIVITY_RECORD_ALIGNMENT == 0);
        static_assert(sizeof(Record) * 8 <= kCapacity);
        if (size + sizeof(Record) > kCapacity) return;  // cannot happen with the kinds above
        std::memcpy(bytes + size, &record, sizeof(Record));
        size += sizeof(Record);
        ++count;
    }
};

// Size of a record of `kind` as this CUPTI writes it; 0 for kinds it never writes.
std::size_t activity_record_size(CUpti_ActivityKind kind);

// Timestamps are shifted by `timestamp_offset_ns` (see cuptiActivityRegisterTimestampCallback).
// `kernel_kind` is CONCURRENT_KERNEL or KERNEL.
void add_kernel_record(const TbdsimRecord& source, CUpti_ActivityKind kernel_kind, int64_t timestamp_offset_ns,
                       RecordBytes& out);
void add_memcpy_record(const TbdsimRecord& source, const MemoryKinds& kinds, int64_t timestamp_offset_ns,
                       RecordBytes& out);
void add_memset_record(const TbdsimRecord& source, const MemoryKinds& kinds, int64_t timestamp_offset_ns,
                       RecordBytes& out);
void add_memory_record(const TbdsimRecord& source, int64_t timestamp_offset_ns, RecordBytes& out);
// An API record (RUNTIME or DRIVER kind) of a call that enqueued work with `correlation_id`, its times
// already in the client's clock. Real CUPTI writes one for every API call, the simulator for calls
// that enqueue work.
void add_api_record(CUpti_ActivityKind api_kind, uint32_t correlation_id, uint64_t start_ns, uint64_t end_ns,
                    RecordBytes& out);
void add_external_correlation_record(CUpti_ExternalCorrelationKind kind, uint64_t external_id,
                                     uint32_t correlation_id, RecordBytes& out);

}  // namespace tbdsim::cupti
