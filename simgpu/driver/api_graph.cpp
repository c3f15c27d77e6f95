// Graphs: instantiation, replay (cuGraphLaunch) and destruction of graphs made by stream capture.
// A replay enqueues every node on the launch stream in capture order, each through the same cost
// model and timeline as the call it was captured from; all records of one replay carry the
// cuGraphLaunch's correlation id and the graph and node ids, as CUPTI reports graph work.
#include "driver_api.h"
#include "graph_state.h"

#include <algorithm>
#include <cstring>

using namespace tbdsim::driver;

namespace {

GraphExec* live_exec(CUgraphExec handle) { return live_graph_exec(handle); }

CUresult instantiate(CUgraphExec* out, CUgraph handle, unsigned long long flags) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    // Upload, device launch and priority flags concern features (device-side launch, priorities) not
    // modelled here; accept them, as they change nothing about a graph's replay. Auto-free applies
    // to graphs with allocation nodes (api_graph_memory.cpp).
    constexpr unsigned long long known =
        CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
        CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    if (flags & ~known) return CUDA_ERROR_INVALID_VALUE;
    // Documented: device launch cannot be combined with auto-free-on-launch.
    if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) &&
        (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH))
        return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Graph* graph = live_graph(handle);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    // Documented: a graph with memory nodes has at most one executable graph at a time.
    const bool memory_nodes = graph_has_memory_nodes(*graph);
    if (memory_nodes && !state().graphs_instantiated_with_memory.insert(graph->id).second)
        return CUDA_ERROR_INVALID_VALUE;
    auto* exec = new GraphExec;
    exec->graph_id = graph->id;
    exec->context = graph->context;
    exec->nodes = flatten_graph(*graph);
    exec->shape = shape_of(*graph);
    exec->has_memory_nodes = memory_nodes;
    exec->auto_free_on_launch = (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0;
    state().live_graph_execs.insert(exec);
    *out = reinterpret_cast<CUgraphExec>(exec);
    return CUDA_SUCCESS;
}

TbdsimRecord replay_record(const GraphNode& node, const GraphExec& exec, const Stream& stream, uint32_t correlation_id,
                           uint64_t launch_ns) {
    TbdsimRecord r{};
    r.device = static_cast<uint32_t>(stream.context->device->ordinal);
    r.context_id = stream.context->id;
    r.stream_id = stream.id;
    r.correlation_id = correlation_id;
    r.is_async = 1;
    r.host_launch_ns = launch_ns;
    r.graph_id = exec.graph_id;
    r.graph_node_id = node.id;
    return r;
}

// Places one node on the timeline and describes it; the bytes of copies and sets move in perform().
TbdsimRecord place_node(const GraphNode& node, const GraphExec& exec, Stream& stream, uint32_t correlation_id,
                        uint64_t launch_ns) {
    TbdsimRecord r = replay_record(node, exec, stream, correlation_id, launch_ns);
    const Device& device = *stream.context->device;
    switch (node.kind) {
        case GraphNode::Kind::Kernel: {
            const KernelInfo& info = *node.function->info;
            auto [start, end] = place_work(stream, kernel_duration_ns(device, node.grid, node.block, node.cost));
            r.kind = TBDSIM_RECORD_KERNEL;
            r.start_ns = start;
            r.end_ns = end;
            std::memcpy(r.grid, node.grid, sizeof r.grid);
            std::memcpy(r.block, node.block, sizeof r.block);
            r.shared_mem_bytes = node.shared_mem;
            r.static_shared_mem_bytes = info.static_shared_bytes;
            r.registers_per_thread = info.registers;
            r.flops = node.cost.flops;
            r.precision = node.cost.flops > 0 ? node.cost.precision : uint32_t(TBDSIM_PRECISION_NONE);
            r.name = node.function->record_name;
            break;
        }
        case GraphNode::Kind::Memcpy: {
            auto kind = static_cast<TbdsimCopyKind>(node.copy_kind);
            auto [start, end] = place_work(stream, copy_duration_ns(device, kind, node.bytes));
            r.kind = TBDSIM_RECORD_MEMCPY;
            r.start_ns = start;
            r.end_ns = end;
            r.sub_kind = node.copy_kind;
            r.address = node.dst;
            r.src_address = node.src;
            r.bytes = node.bytes;
            break;
        }
        case GraphNode::Kind::Memset: {
            auto [start, end] = place_work(stream, memset_duration_ns(device, node.bytes));
            r.kind = TBDSIM_RECORD_MEMSET;
            r.start_ns = start;
            r.end_ns = end;
            r.address = node.dst;
            r.bytes = node.bytes;
            r.memset_value = node.value;
            break;
        }
        default: break;  // ordering and host nodes are not placed here (see graph_launch)
    }
    return r;
}

// Whether the memory a copy or set node touches on the device side is still allocated: memory freed
// since capture would fault on a GPU; here the replay then moves no bytes rather than crash the host.
bool memory_still_there(const GraphNode& node) {
    auto inside = [](uintptr_t p) { return find_allocation(p) != nullptr; };
    if (node.kind == GraphNode::Kind::Memset) return inside(node.dst);
    if (node.kind != GraphNode::Kind::Memcpy) return true;
    const bool dst_device = node.copy_kind == TBDSIM_COPY_HTOD || node.copy_kind == TBDSIM_COPY_DTOD;
    const bool src_device = node.copy_kind == TBDSIM_COPY_DTOH || node.copy_kind == TBDSIM_COPY_DTOD;
    return (!dst_device || inside(node.dst)) && (!src_device || inside(node.src));
}

// What the node does to memory (kernel bodies are not executed, as for any launch).
void perform(const GraphNode& node) {
    if (node.kind == GraphNode::Kind::Memcpy) {
        for (size_t row = 0; row < node.height; ++row)
            std::memmove(reinterpret_cast<void*>(node.dst + row * node.dst_pitch),
                         reinterpret_cast<const void*>(node.src + row * node.src_pitch), node.width);
    } else if (node.kind == GraphNode::Kind::Memset) {
        for (size_t row = 0; row < node.height; ++row) {
            auto* p = reinterpret_cast<uint8_t*>(node.dst + row * node.dst_pitch);
            if (node.element == 1) {
                std::memset(p, static_cast<int>(node.value & 0xff), node.width);
            } else {
                for (size_t i = 0; i < node.width; ++i) std::memcpy(p + i * node.element, &node.value, node.element);
            }
        }
    }
}

// Nodes that do their part on the timeline and publish nothing: empty nodes order only; an event
// record node timestamps its event where the replay has got to, a wait node holds the rest of the
// replay back until the event's record completes (as cuEventRecord and cuStreamWaitEvent on the
// launch stream would), a host node's function runs when the device gets there. An event destroyed
// since the node was made is skipped (the documentation leaves that undefined). Under the mutex.
bool replay_without_record(const GraphNode& node, Stream& stream) {
    switch (node.kind) {
        case GraphNode::Kind::Empty: return true;
        case GraphNode::Kind::EventRecord:
            if (Event* event = find_event(node.event)) {
                event->time_ns = place_work(stream, 0).second;
                event->recorded = true;
                store_shared_record(*event);
            }
            return true;
        case GraphNode::Kind::EventWait:
            if (Event* event = find_event(node.event); event && event->recorded)
                stream.ready_ns = std::max(stream.ready_ns, event->time_ns);
            return true;
        case GraphNode::Kind::Host: enqueue_host_function(stream, node.host_fn, node.host_data); return true;
        case GraphNode::Kind::Child: return true;  // flattened at instantiation: never in an executable
        default: return false;
    }
}

CUresult graph_launch(CUgraphExec handle, CUstream stream_handle, bool per_thread) {
    std::vector<TbdsimRecord> records;
    std::vector<GraphNode> nodes;
    std::vector<bool> movable;
    {
        std::lock_guard lock(state().mutex);
        Context* ctx = nullptr;
        if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
        GraphExec* exec = live_exec(handle);
        if (!exec) return CUDA_ERROR_INVALID_VALUE;
        Stream* stream = resolve_stream(stream_handle, per_thread);
        if (!stream) return CUDA_ERROR_INVALID_HANDLE;
        if (stream->context != exec->context) return CUDA_ERROR_INVALID_CONTEXT;
        // Capturing a graph launch (a child graph node) is not modelled.
        if (CUresult rc = check_not_capturing(*stream); rc != CUDA_SUCCESS) return rc;
        // Allocations live since the last launch are freed (auto-free) first, or stop the launch.
        if (CUresult rc = prepare_graph_memory(*exec, *stream, records); rc != CUDA_SUCCESS) return rc;
        nodes.resize(records.size());  // the frees' records: nothing to perform
        movable.resize(records.size(), false);
        // One correlation id for the whole replay: CUPTI ties every node's record to the one API call.
        const uint32_t correlation_id = next_correlation_id();
        const uint64_t launch_ns = now_ns();
        records.reserve(records.size() + exec->nodes.size());
        for (const GraphNode& node : exec->nodes) {
            if (replay_without_record(node, *stream)) continue;
            if (node.kind == GraphNode::Kind::MemAlloc || node.kind == GraphNode::Kind::MemFree) {
                // Allocated or freed now, at its point in the replay; nothing moves afterwards.
                TbdsimRecord r = replay_record(node, *exec, *stream, correlation_id, launch_ns);
                if (!replay_memory_node(node, *stream, r)) continue;
                records.push_back(r);
                movable.push_back(false);
                nodes.emplace_back();
                continue;
            }
            records.push_back(place_node(node, *exec, *stream, correlation_id, launch_ns));
            movable.push_back(memory_still_there(node));
            nodes.push_back(node);  // copies and sets move their bytes after the lock is released
        }
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (movable[i]) perform(nodes[i]);
        publish(records[i]);
    }
    return CUDA_SUCCESS;
}

CUresult graph_upload(CUgraphExec handle, CUstream stream_handle, bool per_thread) {
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    if (!live_exec(handle)) return CUDA_ERROR_INVALID_VALUE;
    Stream* stream = resolve_stream(stream_handle, per_thread);
    if (!stream) return CUDA_ERROR_INVALID_HANDLE;
    return check_not_capturing(*stream);  // nothing to upload: the device is the host
}

}  // namespace

extern "C" {
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec, CUstream);
CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec, CUstream);
// The CUDA 10.0 and 11.0 forms (error node and log buffer); cuda.h maps cuGraphInstantiate to
// cuGraphInstantiateWithFlags, so they are defined under their symbol names.
CUresult legacy_graph_instantiate(CUgraphExec*, CUgraph, CUgraphNode*, char*, size_t) __asm__("cuGraphInstantiate");
CUresult legacy_graph_instantiate_v2(CUgraphExec*, CUgraph, CUgraphNode*, char*,
                                     size_t) __asm__("cuGraphInstantiate_v2");
}

SIM_API CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
    return instantiate(exec, graph, flags);
}

namespace {
CUresult instantiate_with_log(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log, size_t size) {
    CUresult rc = instantiate(exec, graph, 0);
    if (rc == CUDA_SUCCESS && error_node) *error_node = nullptr;
    if (log && size > 0) log[0] = '\0';
    return rc;
}
}  // namespace

SIM_API CUresult legacy_graph_instantiate(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log,
                                          size_t size) {
    return instantiate_with_log(exec, graph, error_node, log, size);
}
SIM_API CUresult legacy_graph_instantiate_v2(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log,
                                             size_t size) {
    return instantiate_with_log(exec, graph, error_node, log, size);
}

SIM_API CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream stream) {
    return graph_launch(exec, stream, false);
}
SIM_API CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream) {
    return graph_launch(exec, stream, true);
}
SIM_API CUresult CUDAAPI cuGraphUpload(CUgraphExec exec, CUstream stream) {
    return graph_upload(exec, stream, false);
}
SIM_API CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec exec, CUstream stream) {
    return graph_upload(exec, stream, true);
}

SIM_API CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec handle) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    GraphExec* exec = live_exec(handle);
    if (!exec) return CUDA_ERROR_INVALID_VALUE;
    // Replays already enqueued are on the timeline; nothing of theirs refers to the executable.
    // Allocations it left live stay so until freed (their memory is shared with the table entry).
    state().live_graph_execs.erase(exec);
    if (exec->has_memory_nodes) state().graphs_instantiated_with_memory.erase(exec->graph_id);
    delete exec;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphDestroy(CUgraph handle) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Graph* graph = live_graph(handle);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    if (graph->parent) return CUDA_ERROR_INVALID_VALUE;  // a child node's graph goes with its node
    for (const Capture* c : state().captures)
        if (c->graph == graph) return CUDA_ERROR_ILLEGAL_STATE;  // still being captured into
    destroy_graph(graph);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphGetNodes(CUgraph handle, CUgraphNode* nodes, size_t* count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Graph* graph = live_graph(handle);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    // With an array: up to *count nodes, and *count becomes the number written.
    if (nodes) {
        const size_t n = std::min(*count, graph->nodes.size());
        for (size_t i = 0; i < n; ++i) nodes[i] = reinterpret_cast<CUgraphNode>(graph->nodes[i].get());
        for (size_t i = n; i < *count; ++i) nodes[i] = nullptr;
        *count = n;
        return CUDA_SUCCESS;
    }
    *count = graph->nodes.size();
    return CUDA_SUCCESS;
}
