// Graphs built by hand: cuGraphCreate, nodes added with their dependencies (kernel, memset, memcpy,
// empty; event, host and child graph nodes are in api_graph_node_kinds.cpp), queries (nodes by type,
// roots, edges, dependencies), kernel node parameters read and changed in a graph or in an
// instantiated graph. Nodes are kept in the order they were added, which
// is a valid order of the dependency graph (a node can only depend on nodes that exist); a replay
// runs them in that order on the launch stream, like captured graphs (api_graph.cpp).
#include "driver_api.h"
#include "graph_state.h"

#include <algorithm>
#include <cstring>

using namespace tbdsim::driver;

namespace {

bool in_graph(const Graph& graph, CUgraphNode handle) {
    return std::any_of(graph.nodes.begin(), graph.nodes.end(),
                       [&](const auto& n) { return reinterpret_cast<CUgraphNode>(n.get()) == handle; });
}

Graph* graph_of(CUgraph handle) { return live_graph(handle); }

// The graph that owns a node, or null.
Graph* owner_of(CUgraphNode handle, GraphNode** node) {
    Graph* owner = nullptr;
    *node = find_graph_node(handle, &owner);
    return owner;
}

CUresult add_node(CUgraphNode* out, CUgraph handle, const CUgraphNode* deps, size_t count, GraphNode::Kind kind,
                  GraphNode*& added) {
    return add_graph_node(out, handle, deps, count, kind, added);
}

// Packs a kernel node's arguments by the kernel's parameter layout (or takes the `extra` buffer),
// as a launch does, and keeps pointers to each argument for cuGraphKernelNodeGetParams.
CUresult set_kernel(GraphNode& node, const CUDA_KERNEL_NODE_PARAMS& p) {
    auto* function =
        reinterpret_cast<const Function*>(p.func ? static_cast<const void*>(p.func) : static_cast<const void*>(p.kern));
    if (!function || !state().live_functions.count(function)) return CUDA_ERROR_INVALID_HANDLE;
    if (!p.gridDimX || !p.gridDimY || !p.gridDimZ || !p.blockDimX || !p.blockDimY || !p.blockDimZ)
        return CUDA_ERROR_INVALID_VALUE;
    if (p.blockDimX * p.blockDimY * p.blockDimZ > 1024) return CUDA_ERROR_INVALID_VALUE;
    const KernelInfo& info = *function->info;
    if (!info.params.empty() && !p.kernelParams && !p.extra) return CUDA_ERROR_INVALID_VALUE;
    std::vector<uint8_t> bytes;
    if (p.kernelParams) {
        size_t total = 0;
        for (const KernelParam& k : info.params) total = std::max<size_t>(total, size_t{k.offset} + k.size);
        bytes.resize(total);
        for (size_t i = 0; i < info.params.size(); ++i)
            if (p.kernelParams[i])
                std::memcpy(bytes.data() + info.params[i].offset, p.kernelParams[i], info.params[i].size);
    } else if (p.extra) {
        const void* buffer = nullptr;
        size_t size = 0;
        for (int i = 0; i < 16 && p.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buffer = p.extra[i + 1];
            else if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && p.extra[i + 1])
                size = *static_cast<const size_t*>(p.extra[i + 1]);
        }
        if (buffer && size)
            bytes.assign(static_cast<const uint8_t*>(buffer), static_cast<const uint8_t*>(buffer) + size);
    }
    node.function = function;
    node.grid[0] = p.gridDimX, node.grid[1] = p.gridDimY, node.grid[2] = p.gridDimZ;
    node.block[0] = p.blockDimX, node.block[1] = p.blockDimY, node.block[2] = p.blockDimZ;
    node.shared_mem = p.sharedMemBytes;
    node.params = std::move(bytes);
    node.param_pointers.clear();
    if (p.kernelParams)
        for (const KernelParam& k : info.params) node.param_pointers.push_back(node.params.data() + k.offset);
    return CUDA_SUCCESS;
}

CUmemorytype side_of(CUmemorytype type, uintptr_t address) {
    if (type != CU_MEMORYTYPE_UNIFIED) return type;
    const Allocation* a = find_allocation(address);
    return a && a->kind != MemoryKind::PinnedHost ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
}

}  // namespace

Graph* tbdsim::driver::live_graph(CUgraph handle) {
    auto* graph = reinterpret_cast<Graph*>(handle);
    return handle && state().live_graphs.count(graph) ? graph : nullptr;
}

GraphExec* tbdsim::driver::live_graph_exec(CUgraphExec handle) {
    auto* exec = reinterpret_cast<GraphExec*>(handle);
    return handle && state().live_graph_execs.count(exec) ? exec : nullptr;
}

GraphNode* tbdsim::driver::find_graph_node(CUgraphNode handle, Graph** owner) {
    if (!handle) return nullptr;
    for (Graph* g : state().live_graphs)
        for (const auto& n : g->nodes)
            if (reinterpret_cast<CUgraphNode>(n.get()) == handle) {
                if (owner) *owner = g;
                return n.get();
            }
    return nullptr;
}

CUresult tbdsim::driver::add_graph_node(CUgraphNode* out, CUgraph handle, const CUgraphNode* deps, size_t count,
                                        GraphNode::Kind kind, GraphNode*& added) {
    if (!out || (count && !deps)) return CUDA_ERROR_INVALID_VALUE;
    Graph* graph = live_graph(handle);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i)
        if (!in_graph(*graph, deps[i])) return CUDA_ERROR_INVALID_VALUE;
    auto node = std::make_unique<GraphNode>();
    node->kind = kind;
    node->id = state().next_graph_node_id++;
    for (size_t i = 0; i < count; ++i) node->dependencies.push_back(reinterpret_cast<GraphNode*>(deps[i]));
    added = node.get();
    graph->nodes.push_back(std::move(node));
    *out = reinterpret_cast<CUgraphNode>(added);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphCreate(CUgraph* out, unsigned int flags) {
    if (!out || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    auto* graph = new Graph{state().next_graph_id++, current_context(), {}};
    state().live_graphs.insert(graph);
    *out = reinterpret_cast<CUgraph>(graph);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count,
                                              const CUDA_KERNEL_NODE_PARAMS* params) {  // _v2
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    GraphNode probe;
    if (CUresult rc = set_kernel(probe, *params); rc != CUDA_SUCCESS) return rc;
    GraphNode* node = nullptr;
    if (CUresult rc = add_node(out, graph, deps, count, GraphNode::Kind::Kernel, node); rc != CUDA_SUCCESS) return rc;
    return set_kernel(*node, *params);
}

SIM_API CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count,
                                              const CUDA_MEMSET_NODE_PARAMS* p, CUcontext) {
    if (!p || !p->dst || !p->width || !p->height) return CUDA_ERROR_INVALID_VALUE;
    if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const size_t row = p->width * p->elementSize;
    const size_t pitch = p->height > 1 ? p->pitch : row;
    if (p->height > 1 && pitch < row) return CUDA_ERROR_INVALID_VALUE;
    const Allocation* a = find_allocation(p->dst);
    if (!a || a->kind == MemoryKind::PinnedHost || p->dst + pitch * (p->height - 1) + row > a->address + a->bytes)
        return CUDA_ERROR_INVALID_VALUE;
    GraphNode* node = nullptr;
    if (CUresult rc = add_node(out, graph, deps, count, GraphNode::Kind::Memset, node); rc != CUDA_SUCCESS) return rc;
    node->dst = p->dst;
    node->dst_pitch = pitch;
    node->width = p->width;
    node->height = p->height;
    node->element = p->elementSize;
    node->value = p->value;
    node->bytes = row * p->height;
    return CUDA_SUCCESS;
}

// 1D and 2D copies between host and device memory (CUDA arrays and 3D copies are not modelled).
SIM_API CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count,
                                              const CUDA_MEMCPY3D* c, CUcontext) {
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY || c->Depth > 1)
        return CUDA_ERROR_NOT_SUPPORTED;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const uintptr_t src =
        c->srcMemoryType == CU_MEMORYTYPE_HOST ? reinterpret_cast<uintptr_t>(c->srcHost) : c->srcDevice;
    const uintptr_t dst =
        c->dstMemoryType == CU_MEMORYTYPE_HOST ? reinterpret_cast<uintptr_t>(c->dstHost) : c->dstDevice;
    const size_t height = std::max<size_t>(1, c->Height);
    if (!src || !dst || !c->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
    const size_t src_pitch = height > 1 ? c->srcPitch : c->WidthInBytes;
    const size_t dst_pitch = height > 1 ? c->dstPitch : c->WidthInBytes;
    if (src_pitch < c->WidthInBytes || dst_pitch < c->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
    const bool src_device = side_of(c->srcMemoryType, src) == CU_MEMORYTYPE_DEVICE;
    const bool dst_device = side_of(c->dstMemoryType, dst) == CU_MEMORYTYPE_DEVICE;
    auto fits = [](uintptr_t p, size_t bytes) {
        const Allocation* a = find_allocation(p);
        return a && p + bytes <= a->address + a->bytes;
    };
    if ((src_device && !fits(src, src_pitch * (height - 1) + c->WidthInBytes)) ||
        (dst_device && !fits(dst, dst_pitch * (height - 1) + c->WidthInBytes)))
        return CUDA_ERROR_INVALID_VALUE;
    GraphNode* node = nullptr;
    if (CUresult rc = add_node(out, graph, deps, count, GraphNode::Kind::Memcpy, node); rc != CUDA_SUCCESS) return rc;
    node->src = src;
    node->dst = dst;
    node->width = c->WidthInBytes;
    node->height = height;
    node->src_pitch = src_pitch;
    node->dst_pitch = dst_pitch;
    node->bytes = c->WidthInBytes * height;
    node->copy_kind = dst_device ? (src_device ? TBDSIM_COPY_DTOD : TBDSIM_COPY_HTOD)
                                 : (src_device ? TBDSIM_COPY_DTOH : TBDSIM_COPY_HTOH);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    GraphNode* node = nullptr;
    return add_node(out, graph, deps, count, GraphNode::Kind::Empty, node);
}

SIM_API CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode handle, CUgraphNodeType* type) {
    if (!type) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = nullptr;
    if (!owner_of(handle, &node)) return CUDA_ERROR_INVALID_VALUE;
    switch (node->kind) {
        case GraphNode::Kind::Kernel:
            *type = CU_GRAPH_NODE_TYPE_KERNEL;
            break;
        case GraphNode::Kind::Memcpy:
            *type = CU_GRAPH_NODE_TYPE_MEMCPY;
            break;
        case GraphNode::Kind::Memset:
            *type = CU_GRAPH_NODE_TYPE_MEMSET;
            break;
        case GraphNode::Kind::Empty:
            *type = CU_GRAPH_NODE_TYPE_EMPTY;
            break;
        case GraphNode::Kind::EventRecord:
            *type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
            break;
        case GraphNode::Kind::EventWait:
            *type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
            break;
        case GraphNode::Kind::Host:
            *type = CU_GRAPH_NODE_TYPE_HOST;
            break;
        case GraphNode::Kind::Child:
            *type = CU_GRAPH_NODE_TYPE_GRAPH;
            break;
        case GraphNode::Kind::MemAlloc:
            *type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
            break;
        case GraphNode::Kind::MemFree:
            *type = CU_GRAPH_NODE_TYPE_MEM_FREE;
            break;
    }
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphGetRootNodes(CUgraph handle, CUgraphNode* roots, size_t* count) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Graph* graph = graph_of(handle);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    std::vector<CUgraphNode> found;
    for (const auto& n : graph->nodes)
        if (n->dependencies.empty()) found.push_back(reinterpret_cast<CUgraphNode>(n.get()));
    if (roots) {
        const size_t written = std::min(*count, found.size());
        std::copy_n(found.begin(), written, roots);
        *count = written;
    } else {
        *count = found.size();
    }
    return CUDA_SUCCESS;
}

// Captured graphs are chains (each node depends on the one before, see capture.cpp); their edges
// are reported as such. Edge data is always the default (zero) here.
SIM_API CUresult CUDAAPI cuGraphGetEdges(CUgraph handle, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* data,
                                         size_t* count) {  // _v2
    if (!count || (from == nullptr) != (to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Graph* graph = graph_of(handle);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    std::vector<std::pair<CUgraphNode, CUgraphNode>> edges;
    for (const auto& n : graph->nodes)
        for (GraphNode* d : n->dependencies)
            edges.emplace_back(reinterpret_cast<CUgraphNode>(d), reinterpret_cast<CUgraphNode>(n.get()));
    if (!from) {
        *count = edges.size();
        return CUDA_SUCCESS;
    }
    const size_t written = std::min(*count, edges.size());
    for (size_t i = 0; i < written; ++i) {
        from[i] = edges[i].first;
        to[i] = edges[i].second;
        if (data) data[i] = CUgraphEdgeData{};
    }
    *count = written;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphNodeGetDependencies(CUgraphNode handle, CUgraphNode* deps, CUgraphEdgeData* data,
                                                    size_t* count) {  // _v2
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = nullptr;
    if (!owner_of(handle, &node)) return CUDA_ERROR_INVALID_VALUE;
    if (!deps) {
        *count = node->dependencies.size();
        return CUDA_SUCCESS;
    }
    const size_t written = std::min(*count, node->dependencies.size());
    for (size_t i = 0; i < written; ++i) {
        deps[i] = reinterpret_cast<CUgraphNode>(node->dependencies[i]);
        if (data) data[i] = CUgraphEdgeData{};
    }
    *count = written;
    return CUDA_SUCCESS;
}

// Only dependencies on nodes added earlier keep the node order a valid order; others are refused.
SIM_API CUresult CUDAAPI cuGraphAddDependencies(CUgraph handle, const CUgraphNode* from, const CUgraphNode* to,
                                                const CUgraphEdgeData*, size_t count) {  // _v2
    if (count && (!from || !to)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Graph* graph = graph_of(handle);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    auto position = [&](CUgraphNode n) -> long {
        for (size_t i = 0; i < graph->nodes.size(); ++i)
            if (reinterpret_cast<CUgraphNode>(graph->nodes[i].get()) == n) return static_cast<long>(i);
        return -1;
    };
    for (size_t i = 0; i < count; ++i) {
        const long f = position(from[i]), t = position(to[i]);
        if (f < 0 || t < 0 || f == t) return CUDA_ERROR_INVALID_VALUE;
        if (f > t) return CUDA_ERROR_NOT_SUPPORTED;  // would need reordering the replay
    }
    for (size_t i = 0; i < count; ++i) {
        auto& deps = reinterpret_cast<GraphNode*>(to[i])->dependencies;
        auto* f = reinterpret_cast<GraphNode*>(from[i]);
        if (std::find(deps.begin(), deps.end(), f) == deps.end()) deps.push_back(f);
    }
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphKernelNodeGetParams(CUgraphNode handle, CUDA_KERNEL_NODE_PARAMS* p) {  // _v2
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = nullptr;
    Graph* graph = owner_of(handle, &node);
    if (!graph || node->kind != GraphNode::Kind::Kernel) return CUDA_ERROR_INVALID_VALUE;
    *p = CUDA_KERNEL_NODE_PARAMS{};
    p->func = reinterpret_cast<CUfunction>(const_cast<Function*>(node->function));
    p->gridDimX = node->grid[0], p->gridDimY = node->grid[1], p->gridDimZ = node->grid[2];
    p->blockDimX = node->block[0], p->blockDimY = node->block[1], p->blockDimZ = node->block[2];
    p->sharedMemBytes = node->shared_mem;
    p->kernelParams = node->param_pointers.empty() ? nullptr : node->param_pointers.data();
    p->ctx = reinterpret_cast<CUcontext>(graph->context);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode handle, const CUDA_KERNEL_NODE_PARAMS* p) {  // _v2
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = nullptr;
    if (!owner_of(handle, &node) || node->kind != GraphNode::Kind::Kernel) return CUDA_ERROR_INVALID_VALUE;
    GraphNode updated = *node;
    if (CUresult rc = set_kernel(updated, *p); rc != CUDA_SUCCESS) return rc;
    node->function = updated.function;
    std::copy(updated.grid, updated.grid + 3, node->grid);
    std::copy(updated.block, updated.block + 3, node->block);
    node->shared_mem = updated.shared_mem;
    node->params = std::move(updated.params);
    node->param_pointers.clear();
    if (p->kernelParams)
        for (const KernelParam& k : node->function->info->params)
            node->param_pointers.push_back(node->params.data() + k.offset);
    return CUDA_SUCCESS;
}

// Changes the instantiated copy of a kernel node (same kernel family, as documented: the function
// may change only within the same context); later replays use it.
SIM_API CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec handle, CUgraphNode node_handle,
                                                        const CUDA_KERNEL_NODE_PARAMS* p) {  // _v2
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphExec* exec = live_graph_exec(handle);
    if (!exec) return CUDA_ERROR_INVALID_VALUE;
    GraphNode* original = nullptr;
    if (!owner_of(node_handle, &original) || original->kind != GraphNode::Kind::Kernel) return CUDA_ERROR_INVALID_VALUE;
    for (GraphNode& n : exec->nodes) {
        if (n.id != original->id) continue;
        GraphNode updated = n;
        if (CUresult rc = set_kernel(updated, *p); rc != CUDA_SUCCESS) return rc;
        updated.param_pointers.clear();  // the executable's copy hands no pointers out
        n = std::move(updated);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}
