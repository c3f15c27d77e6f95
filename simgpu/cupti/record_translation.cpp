#include "record_translation.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace tbdsim::cupti {
namespace {

uint64_t shifted(uint64_t timestamp_ns, int64_t offset_ns) {
    return timestamp_ns + static_cast<uint64_t>(offset_ns);  // modular: negative offsets subtract
}

CUpti_ActivityMemcpyKind copy_kind_of(uint32_t tbdsim_copy_kind) {
    switch (tbdsim_copy_kind) {
        case TBDSIM_COPY_HTOD: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        case TBDSIM_COPY_DTOH: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
        case TBDSIM_COPY_DTOD: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
        case TBDSIM_COPY_HTOH: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
        default: return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
    }
}

}  // namespace

std::size_t activity_record_size(CUpti_ActivityKind kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
        case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
        case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
        case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER:
            return sizeof(CUpti_ActivityAPI);
        default: return 0;
    }
}

void add_kernel_record(const TbdsimRecord& source, CUpti_ActivityKind kernel_kind, int64_t timestamp_offset_ns,
                       RecordBytes& out) {
    CUpti_ActivityKernel10 record{};
    record.kind = kernel_kind;
    record.registersPerThread = static_cast<uint16_t>(source.registers_per_thread);
    record.start = shifted(source.start_ns, timestamp_offset_ns);
    record.end = shifted(source.end_ns, timestamp_offset_ns);
    record.completed = record.end;  // no child kernels: complete when the kernel ends
    record.deviceId = source.device;
    record.contextId = source.context_id;
    record.streamId = source.stream_id;
    record.gridX = static_cast<int32_t>(source.grid[0]);
    record.gridY = static_cast<int32_t>(source.grid[1]);
    record.gridZ = static_cast<int32_t>(source.grid[2]);
    record.blockX = static_cast<int32_t>(source.block[0]);
    record.blockY = static_cast<int32_t>(source.block[1]);
    record.blockZ = static_cast<int32_t>(source.block[2]);
    record.staticSharedMemory = static_cast<int32_t>(source.static_shared_mem_bytes);
    record.dynamicSharedMemory = static_cast<int32_t>(source.shared_mem_bytes);
    record.correlationId = source.correlation_id;
    // Grid ids are unique per launch, as are correlation ids of kernel launches.
    record.gridId = source.correlation_id;
    record.name = source.name;  // the mangled name, owned by the driver's module
    record.queued = CUPTI_TIMESTAMP_UNKNOWN;  // only with cuptiActivityEnableLatencyTimestamps
    record.submitted = CUPTI_TIMESTAMP_UNKNOWN;
    record.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
    // Kernels replayed by cuGraphLaunch: the graph and node they came from (0 for ordinary launches).
    record.graphId = source.graph_id;
    record.graphNodeId = source.graph_node_id;
    record.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    out.add(record);
}

void add_memcpy_record(const TbdsimRecord& source, const MemoryKinds& kinds, int64_t timestamp_offset_ns,
                       RecordBytes& out) {
    CUpti_ActivityMemcpy6 record{};
    record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    const CUpti_ActivityMemcpyKind copy_kind = copy_kind_of(source.sub_kind);
    record.copyKind = static_cast<uint8_t>(copy_kind);
    const bool source_on_host = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD || copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    const bool destination_on_host =
        copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH || copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    record.srcKind = static_cast<uint8_t>(source_on_host ? kinds.host_kind(source.src_address)
                                                         : kinds.device_kind(source.src_address));
    record.dstKind = static_cast<uint8_t>(destination_on_host ? kinds.host_kind(source.address)
                                                              : kinds.device_kind(source.address));
    record.flags = static_cast<uint8_t>(source.is_async != 0 ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : CUPTI_ACTIVITY_FLAG_NONE);
    record.bytes = source.bytes;
    record.start = shifted(source.start_ns, timestamp_offset_ns);
    record.end = shifted(source.end_ns, timestamp_offset_ns);
    record.deviceId = source.device;
    record.contextId = source.context_id;
    record.streamId = source.stream_id;
    record.correlationId = source.correlation_id;
    record.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    record.copyCount = 1;
    record.graphId = source.graph_id;
    record.graphNodeId = source.graph_node_id;
    out.add(record);
}

void add_memset_record(const TbdsimRecord& source, const MemoryKinds& kinds, int64_t timestamp_offset_ns,
                       RecordBytes& out) {
    CUpti_ActivityMemset4 record{};
    record.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    record.value = source.memset_value;
    record.bytes = source.bytes;
    record.start = shifted(source.start_ns, timestamp_offset_ns);
    record.end = shifted(source.end_ns, timestamp_offset_ns);
    record.deviceId = source.device;
    record.contextId = source.context_id;
    record.streamId = source.stream_id;
    record.correlationId = source.correlation_id;
    record.flags = static_cast<uint16_t>(source.is_async != 0 ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : CUPTI_ACTIVITY_FLAG_NONE);
    record.memoryKind = static_cast<uint16_t>(kinds.device_kind(source.address));
    record.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    record.graphId = source.graph_id;
    record.graphNodeId = source.graph_node_id;
    out.add(record);
}

void add_memory_record(const TbdsimRecord& source, int64_t timestamp_offset_ns, RecordBytes& out) {
    CUpti_ActivityMemory4 record{};
    record.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    record.memoryOperationType = source.kind == TBDSIM_RECORD_ALLOC ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                                                    : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    record.memoryKind = memory_kind_of_allocation(source.sub_kind);
    record.correlationId = source.correlation_id;
    record.address = source.address;
    record.bytes = source.bytes;
    record.timestamp = shifted(source.start_ns, timestamp_offset_ns);
    record.processId = static_cast<uint32_t>(getpid());
    record.deviceId = source.device;
    record.contextId = source.context_id;
    record.streamId = source.stream_id;
    record.isAsync = source.sub_kind == TBDSIM_MEMORY_DEVICE_ASYNC ? 1u : 0u;
    // Stream-ordered allocations come from the device's default (local) memory pool.
    record.memoryPoolConfig.memoryPoolType = source.sub_kind == TBDSIM_MEMORY_DEVICE_ASYNC
                                                 ? CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL
                                                 : CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    out.add(record);
}

void add_external_correlation_record(CUpti_ExternalCorrelationKind kind, uint64_t external_id,
                                     uint32_t correlation_id, RecordBytes& out) {
    CUpti_ActivityExternalCorrelation record{};
    record.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    record.externalKind = kind;
    record.externalId = external_id;
    record.correlationId = correlation_id;
    out.add(record);
}

void add_api_record(CUpti_ActivityKind api_kind, uint32_t correlation_id, uint64_t start_ns, uint64_t end_ns,
                    RecordBytes& out) {
    CUpti_ActivityAPI record{};
    record.kind = api_kind;
    record.cbid = 0;  // the simulator does not say which entry point it was
    record.start = start_ns;
    record.end = end_ns;
    record.processId = static_cast<uint32_t>(getpid());
    record.threadId = static_cast<uint32_t>(syscall(SYS_gettid));
    record.correlationId = correlation_id;
    out.add(record);
}

}  // namespace tbdsim::cupti
