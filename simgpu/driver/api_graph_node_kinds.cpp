// Graph nodes that order and call rather than compute, added by hand: event record and event wait
// nodes, host nodes and child graph nodes, their parameters in a graph and in an instantiated graph;
// and the graph helpers they need (clone, destroy, flatten, shape). At replay (api_graph.cpp) an
// event record node timestamps its event at its place in the replay, a wait node holds the rest of
// the replay back until the event's last record completes, a host node's function runs on the
// driver's callback thread when the device gets there, and a child graph's nodes replay in place.
#include "driver_api.h"
#include "graph_state.h"

#include <map>

using namespace tbdsim::driver;

namespace {

// The node behind `handle` if it is of `kind`, else null.
GraphNode* node_of_kind(CUgraphNode handle, GraphNode::Kind kind) {
    GraphNode* node = find_graph_node(handle);
    return node && node->kind == kind ? node : nullptr;
}

// The instantiated copy of `handle`'s node in `exec` (child graphs' nodes included), or null.
GraphNode* exec_copy(CUgraphExec exec_handle, CUgraphNode handle, GraphNode::Kind kind) {
    GraphExec* exec = live_graph_exec(exec_handle);
    GraphNode* original = node_of_kind(handle, kind);
    if (!exec || !original) return nullptr;
    for (GraphNode& n : exec->nodes)
        if (n.id == original->id) return &n;
    return nullptr;  // added after instantiation
}

CUresult add_event_node(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count, CUevent event,
                        GraphNode::Kind kind) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!find_event(event)) return CUDA_ERROR_INVALID_VALUE;
    GraphNode* node = nullptr;
    if (CUresult rc = add_graph_node(out, graph, deps, count, kind, node); rc != CUDA_SUCCESS) return rc;
    node->event = event;
    return CUDA_SUCCESS;
}

CUresult get_event(CUgraphNode handle, CUevent* out, GraphNode::Kind kind) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = node_of_kind(handle, kind);
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    *out = node->event;
    return CUDA_SUCCESS;
}

CUresult set_event(CUgraphNode handle, CUevent event, GraphNode::Kind kind) {
    std::lock_guard lock(state().mutex);
    GraphNode* node = node_of_kind(handle, kind);
    if (!node || !find_event(event)) return CUDA_ERROR_INVALID_VALUE;
    node->event = event;
    return CUDA_SUCCESS;
}

CUresult exec_set_event(CUgraphExec exec, CUgraphNode handle, CUevent event, GraphNode::Kind kind) {
    std::lock_guard lock(state().mutex);
    GraphNode* copy = exec_copy(exec, handle, kind);
    if (!copy || !find_event(event)) return CUDA_ERROR_INVALID_VALUE;
    copy->event = event;
    return CUDA_SUCCESS;
}

void flatten_into(const Graph& graph, std::vector<GraphNode>& out, std::vector<const GraphNode*>* sources) {
    for (const auto& node : graph.nodes) {
        if (node->kind == GraphNode::Kind::Child) {
            flatten_into(*node->child, out, sources);
            continue;
        }
        out.push_back(*node);
        if (sources) sources->push_back(node.get());
    }
}

}  // namespace

Graph* tbdsim::driver::clone_graph(const Graph& source, Graph* parent) {
    auto* copy = new Graph{state().next_graph_id++, source.context, {}, parent};
    std::map<const GraphNode*, GraphNode*> cloned;
    for (const auto& node : source.nodes) {
        auto n = std::make_unique<GraphNode>(*node);
        n->id = state().next_graph_node_id++;
        // Dependencies are earlier nodes of the same graph (cuGraphAddDependencies keeps it so).
        std::vector<GraphNode*> deps;
        for (GraphNode* d : node->dependencies)
            if (auto it = cloned.find(d); it != cloned.end()) deps.push_back(it->second);
        n->dependencies = std::move(deps);
        n->param_pointers.clear();
        if (node->kind == GraphNode::Kind::Kernel && !node->param_pointers.empty())
            for (const KernelParam& k : n->function->info->params)
                n->param_pointers.push_back(n->params.data() + k.offset);
        if (node->child) n->child = clone_graph(*node->child, copy);
        cloned[node.get()] = n.get();
        copy->nodes.push_back(std::move(n));
    }
    state().live_graphs.insert(copy);
    return copy;
}

void tbdsim::driver::destroy_graph(Graph* graph) {
    for (const auto& node : graph->nodes)
        if (node->child) destroy_graph(node->child);
    state().live_graphs.erase(graph);
    delete graph;
}

std::vector<GraphNode> tbdsim::driver::flatten_graph(const Graph& graph, std::vector<const GraphNode*>* sources) {
    std::vector<GraphNode> out;
    flatten_into(graph, out, sources);
    return out;
}

GraphShape tbdsim::driver::shape_of(const Graph& graph) {
    GraphShape shape;
    std::map<const GraphNode*, size_t> index;
    for (const auto& node : graph.nodes) {
        index[node.get()] = shape.kinds.size();
        shape.kinds.push_back(node->kind);
        std::vector<size_t> deps;
        for (const GraphNode* d : node->dependencies)
            if (auto it = index.find(d); it != index.end()) deps.push_back(it->second);
        shape.dependencies.push_back(std::move(deps));
        shape.children.push_back(node->child ? shape_of(*node->child) : GraphShape{});
    }
    return shape;
}

// --- event record and wait nodes ---------------------------------------------------------------------

SIM_API CUresult CUDAAPI cuGraphAddEventRecordNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps,
                                                   size_t count, CUevent event) {
    return add_event_node(out, graph, deps, count, event, GraphNode::Kind::EventRecord);
}
SIM_API CUresult CUDAAPI cuGraphAddEventWaitNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count,
                                                 CUevent event) {
    return add_event_node(out, graph, deps, count, event, GraphNode::Kind::EventWait);
}
SIM_API CUresult CUDAAPI cuGraphEventRecordNodeGetEvent(CUgraphNode node, CUevent* out) {
    return get_event(node, out, GraphNode::Kind::EventRecord);
}
SIM_API CUresult CUDAAPI cuGraphEventWaitNodeGetEvent(CUgraphNode node, CUevent* out) {
    return get_event(node, out, GraphNode::Kind::EventWait);
}
SIM_API CUresult CUDAAPI cuGraphEventRecordNodeSetEvent(CUgraphNode node, CUevent event) {
    return set_event(node, event, GraphNode::Kind::EventRecord);
}
SIM_API CUresult CUDAAPI cuGraphEventWaitNodeSetEvent(CUgraphNode node, CUevent event) {
    return set_event(node, event, GraphNode::Kind::EventWait);
}
SIM_API CUresult CUDAAPI cuGraphExecEventRecordNodeSetEvent(CUgraphExec exec, CUgraphNode node, CUevent event) {
    return exec_set_event(exec, node, event, GraphNode::Kind::EventRecord);
}
SIM_API CUresult CUDAAPI cuGraphExecEventWaitNodeSetEvent(CUgraphExec exec, CUgraphNode node, CUevent event) {
    return exec_set_event(exec, node, event, GraphNode::Kind::EventWait);
}

// --- host nodes --------------------------------------------------------------------------------------

SIM_API CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count,
                                            const CUDA_HOST_NODE_PARAMS* params) {
    if (!params || !params->fn) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    GraphNode* node = nullptr;
    if (CUresult rc = add_graph_node(out, graph, deps, count, GraphNode::Kind::Host, node); rc != CUDA_SUCCESS)
        return rc;
    node->host_fn = params->fn;
    node->host_data = params->userData;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphHostNodeGetParams(CUgraphNode handle, CUDA_HOST_NODE_PARAMS* params) {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = node_of_kind(handle, GraphNode::Kind::Host);
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    params->fn = node->host_fn;
    params->userData = node->host_data;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphHostNodeSetParams(CUgraphNode handle, const CUDA_HOST_NODE_PARAMS* params) {
    if (!params || !params->fn) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = node_of_kind(handle, GraphNode::Kind::Host);
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    node->host_fn = params->fn;
    node->host_data = params->userData;
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphExecHostNodeSetParams(CUgraphExec exec, CUgraphNode handle,
                                                      const CUDA_HOST_NODE_PARAMS* params) {
    if (!params || !params->fn) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* copy = exec_copy(exec, handle, GraphNode::Kind::Host);
    if (!copy) return CUDA_ERROR_INVALID_VALUE;
    copy->host_fn = params->fn;
    copy->host_data = params->userData;
    return CUDA_SUCCESS;
}

// --- child graph nodes -------------------------------------------------------------------------------

// The child graph is cloned, as documented: later changes to `child` do not reach the node; changes
// to the graph cuGraphChildGraphNodeGetGraph returns do.
SIM_API CUresult CUDAAPI cuGraphAddChildGraphNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps,
                                                  size_t count, CUgraph child) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Graph* source = live_graph(child);
    if (!source || child == graph) return CUDA_ERROR_INVALID_VALUE;
    // Documented: a graph with allocation or free nodes cannot be embedded by this call.
    if (graph_has_memory_nodes(*source)) return CUDA_ERROR_INVALID_VALUE;
    for (const Capture* c : state().captures)
        if (c->graph == source) return CUDA_ERROR_INVALID_VALUE;  // still being captured into
    GraphNode* node = nullptr;
    if (CUresult rc = add_graph_node(out, graph, deps, count, GraphNode::Kind::Child, node); rc != CUDA_SUCCESS)
        return rc;
    node->child = clone_graph(*source, live_graph(graph));
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuGraphChildGraphNodeGetGraph(CUgraphNode handle, CUgraph* out) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    GraphNode* node = node_of_kind(handle, GraphNode::Kind::Child);
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    *out = reinterpret_cast<CUgraph>(node->child);
    return CUDA_SUCCESS;
}
