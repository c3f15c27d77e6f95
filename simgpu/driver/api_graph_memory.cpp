// Graph memory nodes: allocation and free nodes (cuGraphAddMemAllocNode, cuGraphAddMemFreeNode, or
// cuMemAllocAsync / cuMemFreeAsync on a capturing stream), their replay, and the device's graph
// memory attributes and trim, as cuda.h documents them. An allocation node's address is fixed when
// the node is made and stays valid for the graph's life; a launch makes the allocation live at the
// node's point in the replay (an allocation record, with the graph and node ids) and its free node
// ends it (a free record). An allocation the graph does not free stays live after the launch, until
// cuMemFree / cuMemFreeAsync, a free node of another graph, or the next launch of an executable
// instantiated with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH; launching again while it is live
// is CUDA_ERROR_INVALID_VALUE otherwise. Physical memory for live graph allocations comes from a
// per-device reservation that grows at launch to what the replay needs and is kept after frees
// (CU_GRAPH_MEM_ATTR_RESERVED_MEM_*) until cuDeviceGraphMemTrim returns what is not in use.
#include "driver_api.h"
#include "graph_state.h"

#include <sys/mman.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace tbdsim::driver;

namespace {

constexpr size_t kAlignment = 512;          // as cuMemAlloc's
constexpr size_t kMmapThreshold = 1 << 20;  // big blocks come from mmap, zero pages are free

size_t round_up(size_t v, size_t to) {
    return (v + to - 1) / to * to;
}

void note_used(Device& device, int64_t delta_bytes) {
    device.graph_used_bytes += static_cast<uint64_t>(delta_bytes);
    device.graph_used_high_bytes = std::max(device.graph_used_high_bytes, device.graph_used_bytes);
}

// Makes the block's allocation live: an allocation table entry (capacity is the reservation's).
void make_live(GraphMemBlock& block) {
    Allocation a;
    a.address = block.address;
    a.bytes = block.bytes;
    a.kind = MemoryKind::DeviceAsync;
    a.context = block.context;
    a.graph_block = block.shared_from_this();
    state().allocations[a.address] = a;
    block.live = true;
    note_used(*block.context->device, static_cast<int64_t>(block.accounted));
}

// Ends a live allocation (a free node, or auto-free before a relaunch).
void end_live(GraphMemBlock& block) {
    auto it = state().allocations.find(block.address);
    if (it == state().allocations.end()) return;
    Allocation a = it->second;  // keeps the block alive past the erase
    state().allocations.erase(it);
    release_graph_allocation(a);
}

TbdsimRecord graph_memory_record(TbdsimRecordKind kind, const GraphMemBlock& block, const Stream& stream,
                                 TbdsimRecord record) {
    record.kind = kind;
    record.sub_kind = TBDSIM_MEMORY_DEVICE_ASYNC;
    // Stream-ordered: where the replay has got to on the launch stream.
    record.start_ns = record.end_ns = std::max(stream.ready_ns, record.host_launch_ns);
    record.address = block.address;
    record.bytes = block.bytes;
    return record;
}

// The most graph memory the replay of `exec` holds live at once, on top of what is live before it.
uint64_t replay_peak_bytes(const GraphExec& exec) {
    uint64_t live = 0, peak = 0;
    for (const GraphNode& node : exec.nodes) {
        if (node.kind == GraphNode::Kind::MemAlloc) {
            live += node.memory->accounted;
            peak = std::max(peak, live);
        } else if (node.kind == GraphNode::Kind::MemFree && node.memory->owner_graph_id == exec.graph_id) {
            live -= std::min<uint64_t>(live, node.memory->accounted);
        }
    }
    return peak;
}

bool reservation_fits(const Device& device, uint64_t needed_bytes) {
    if (needed_bytes <= device.graph_reserved_bytes) return true;
    return needed_bytes - device.graph_reserved_bytes <=
           device.memory_bytes - std::min(device.memory_bytes, device.used_bytes);
}

void grow_reservation(Device& device, uint64_t needed_bytes) {
    if (needed_bytes <= device.graph_reserved_bytes) return;
    const uint64_t grow = needed_bytes - device.graph_reserved_bytes;
    device.used_bytes += grow;
    device.graph_reserved_bytes += grow;
    device.graph_reserved_high_bytes = std::max(device.graph_reserved_high_bytes, device.graph_reserved_bytes);
}

CUresult device_for_attribute(CUdevice ordinal, Device*& out) {
    if (CUresult rc = check_initialized(); rc != CUDA_SUCCESS) return rc;
    out = device_at(ordinal);
    return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

// The parameters cuGraphAddMemAllocNode accepts: pinned device memory of a valid device, no IPC
// handle types, no more access descriptors than devices.
CUresult check_alloc_params(const CUDA_MEM_ALLOC_NODE_PARAMS* p) {
    if (!p || p->bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    const CUmemPoolProps& props = p->poolProps;
    if (props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED || props.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        props.handleTypes != CU_MEM_HANDLE_TYPE_NONE || !device_at(props.location.id))
        return CUDA_ERROR_INVALID_VALUE;
    if (p->accessDescCount > state().devices.size() || (p->accessDescCount > 0 && !p->accessDescs))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

}  // namespace

namespace tbdsim::driver {

GraphMemBlock::~GraphMemBlock() {
    state().graph_blocks.erase(address);
    void* p = reinterpret_cast<void*>(address);
    if (mmapped)
        munmap(p, round_up(bytes, kAlignment));
    else
        std::free(p);
}

CUresult make_graph_block(Graph& graph, Context& context, size_t bytes, std::shared_ptr<GraphMemBlock>& out) {
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    const size_t size = round_up(bytes, kAlignment);
    const bool mmapped = size >= kMmapThreshold;
    void* p = nullptr;
    if (mmapped) {
        p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) p = nullptr;
    } else {
        p = std::aligned_alloc(kAlignment, size);
    }
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    out = std::make_shared<GraphMemBlock>();
    out->address = reinterpret_cast<uintptr_t>(p);
    out->bytes = bytes;
    out->accounted = size;
    out->context = &context;
    out->mmapped = mmapped;
    out->owner_graph_id = graph.id;
    out->reserved.address = out->address;
    out->reserved.bytes = bytes;
    out->reserved.kind = MemoryKind::DeviceAsync;
    out->reserved.context = &context;
    state().graph_blocks[out->address] = out.get();
    return CUDA_SUCCESS;
}

GraphMemBlock* find_graph_block(uintptr_t address) {
    auto it = state().graph_blocks.find(address);
    return it == state().graph_blocks.end() ? nullptr : it->second;
}

CUresult claim_graph_block_for_free(const Graph& graph, uintptr_t address, std::shared_ptr<GraphMemBlock>& out) {
    GraphMemBlock* block = find_graph_block(address);
    // Freed twice, or freed by a graph already (the owner or another): both are documented errors.
    if (!block || block->freed_by_graph_id != 0) return CUDA_ERROR_INVALID_VALUE;
    block->freed_by_graph_id = graph.id;
    out = block->shared_from_this();
    return CUDA_SUCCESS;
}

bool graph_has_memory_nodes(const Graph& graph) {
    for (const auto& node : graph.nodes) {
        if (node->kind == GraphNode::Kind::MemAlloc || node->kind == GraphNode::Kind::MemFree) return true;
        if (node->kind == GraphNode::Kind::Child && graph_has_memory_nodes(*node->child)) return true;
    }
    return false;
}

CUresult prepare_graph_memory(const GraphExec& exec, Stream& stream, std::vector<TbdsimRecord>& freed) {
    if (!exec.has_memory_nodes) return CUDA_SUCCESS;
    uint64_t auto_freed_bytes = 0;
    for (const GraphNode& node : exec.nodes) {
        if (node.kind != GraphNode::Kind::MemAlloc || !node.memory->live) continue;
        if (!exec.auto_free_on_launch) return CUDA_ERROR_INVALID_VALUE;  // unfreed since the last launch
        auto_freed_bytes += node.memory->accounted;
    }
    // Checked before anything is freed: a launch that fails changes nothing.
    Device& device = *stream.context->device;
    const uint64_t needed_bytes = device.graph_used_bytes - auto_freed_bytes + replay_peak_bytes(exec);
    if (!reservation_fits(device, needed_bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
    TbdsimRecord base{};
    base.device = static_cast<uint32_t>(stream.context->device->ordinal);
    base.context_id = stream.context->id;
    base.stream_id = stream.id;
    base.is_async = 1;
    base.host_launch_ns = now_ns();
    for (const GraphNode& node : exec.nodes) {
        if (node.kind != GraphNode::Kind::MemAlloc || !node.memory->live) continue;
        // Auto-free: as though the launch called cuMemFreeAsync on its stream first.
        base.correlation_id = next_correlation_id();
        freed.push_back(graph_memory_record(TBDSIM_RECORD_FREE, *node.memory, stream, base));
        end_live(*node.memory);
    }
    grow_reservation(device, needed_bytes);
    return CUDA_SUCCESS;
}

bool replay_memory_node(const GraphNode& node, Stream& stream, TbdsimRecord& record) {
    GraphMemBlock& block = *node.memory;
    // Live already (only possible for another graph's allocation), or a free node whose allocation
    // is not live (freed by the user first: undefined in CUDA): nothing happens, nothing is recorded.
    if ((node.kind == GraphNode::Kind::MemAlloc) == block.live) return false;
    const bool allocating = node.kind == GraphNode::Kind::MemAlloc;
    if (allocating)
        make_live(block);
    else
        end_live(block);
    record = graph_memory_record(allocating ? TBDSIM_RECORD_ALLOC : TBDSIM_RECORD_FREE, block, stream, record);
    return true;
}

void release_graph_allocation(const Allocation& allocation) {
    GraphMemBlock& block = *allocation.graph_block;
    block.live = false;
    note_used(*block.context->device, -static_cast<int64_t>(block.accounted));
}

}  // namespace tbdsim::driver

// --- the driver API ----------------------------------------------------------------------------------

SIM_API CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode* out, CUgraph graph_handle, const CUgraphNode* deps,
                                                size_t count, CUDA_MEM_ALLOC_NODE_PARAMS* params) {
    std::lock_guard lock(state().mutex);
    if (CUresult rc = check_initialized(); rc != CUDA_SUCCESS) return rc;
    if (CUresult rc = check_alloc_params(params); rc != CUDA_SUCCESS) return rc;
    Graph* graph = live_graph(graph_handle);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    Device* device = device_at(params->poolProps.location.id);
    Context* context = graph->context && graph->context->device == device ? graph->context : device->primary;
    if (!context) context = current_context();
    if (!context || context->device != device) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<GraphMemBlock> block;
    if (CUresult rc = make_graph_block(*graph, *context, params->bytesize, block); rc != CUDA_SUCCESS) return rc;
    GraphNode* node = nullptr;
    if (CUresult rc = add_graph_node(out, graph_handle, deps, count, GraphNode::Kind::MemAlloc, node);
        rc != CUDA_SUCCESS)
        return rc;
    node->memory = block;
    node->access.assign(params->accessDescs, params->accessDescs + params->accessDescCount);
    params->dptr = block->address;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphMemAllocNodeGetParams(CUgraphNode handle, CUDA_MEM_ALLOC_NODE_PARAMS* params_out) {
    if (!params_out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = find_graph_node(handle);
    if (!node || node->kind != GraphNode::Kind::MemAlloc) return CUDA_ERROR_INVALID_VALUE;
    *params_out = CUDA_MEM_ALLOC_NODE_PARAMS{};
    params_out->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params_out->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    params_out->poolProps.location.id = node->memory->context->device->ordinal;
    params_out->accessDescs = node->access.empty() ? nullptr : node->access.data();
    params_out->accessDescCount = node->access.size();
    params_out->bytesize = node->memory->bytes;
    params_out->dptr = node->memory->address;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode* out, CUgraph graph_handle, const CUgraphNode* deps,
                                               size_t count, CUdeviceptr dptr) {
    std::lock_guard lock(state().mutex);
    if (CUresult rc = check_initialized(); rc != CUDA_SUCCESS) return rc;
    Graph* graph = live_graph(graph_handle);
    GraphMemBlock* block = find_graph_block(dptr);
    if (!graph || !block || block->freed_by_graph_id != 0) return CUDA_ERROR_INVALID_VALUE;
    GraphNode* node = nullptr;
    if (CUresult rc = add_graph_node(out, graph_handle, deps, count, GraphNode::Kind::MemFree, node);
        rc != CUDA_SUCCESS)
        return rc;
    return claim_graph_block_for_free(*graph, dptr, node->memory);
}

SIM_API CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode handle, CUdeviceptr* dptr_out) {
    if (!dptr_out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = find_graph_node(handle);
    if (!node || node->kind != GraphNode::Kind::MemFree) return CUDA_ERROR_INVALID_VALUE;
    *dptr_out = node->memory->address;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGraphMemTrim(CUdevice ordinal) {
    std::lock_guard lock(state().mutex);
    Device* device = nullptr;
    if (CUresult rc = device_for_attribute(ordinal, device); rc != CUDA_SUCCESS) return rc;
    // Launches take their memory when enqueued here, so whatever is not live is not in use by any
    // graph executing or scheduled to execute.
    const uint64_t unused =
        device->graph_reserved_bytes - std::min(device->graph_reserved_bytes, device->graph_used_bytes);
    device->graph_reserved_bytes -= unused;
    device->used_bytes -= std::min(device->used_bytes, unused);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice ordinal, CUgraphMem_attribute attr, void* value) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Device* device = nullptr;
    if (CUresult rc = device_for_attribute(ordinal, device); rc != CUDA_SUCCESS) return rc;
    cuuint64_t v = 0;
    switch (attr) {
        case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
            v = device->graph_used_bytes;
            break;
        case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
            v = device->graph_used_high_bytes;
            break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
            v = device->graph_reserved_bytes;
            break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
            v = device->graph_reserved_high_bytes;
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
    std::memcpy(value, &v, sizeof v);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuDeviceSetGraphMemAttribute(CUdevice ordinal, CUgraphMem_attribute attr, void* value) {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Device* device = nullptr;
    if (CUresult rc = device_for_attribute(ordinal, device); rc != CUDA_SUCCESS) return rc;
    cuuint64_t v = 0;
    std::memcpy(&v, value, sizeof v);
    if (v != 0) return CUDA_ERROR_INVALID_VALUE;  // a high watermark can only be reset to zero
    // Reset to zero, a watermark starts again from the current value (it never reads below it).
    if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)
        device->graph_used_high_bytes = device->graph_used_bytes;
    else if (attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
        device->graph_reserved_high_bytes = device->graph_reserved_bytes;
    else
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}
