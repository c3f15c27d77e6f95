// cuGraphExecUpdate (and cuGraphExecChildGraphNodeSetParams, the same for one child graph node): an
// instantiated graph takes the node parameters of a topologically identical
// graph. Nodes are paired in creation order (child graphs recursively), as documented; the executable
// keeps its node ids (CUPTI's graphNodeId), its nodes take the new parameters. What cuda.h lists as
// not updatable is refused with CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE and the reason in resultInfo.
#include "driver_api.h"
#include "graph_state.h"

#include <algorithm>

using namespace tbdsim::driver;

namespace {

struct Mismatch {
    CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    const GraphNode* node = nullptr;       // of the new graph
    const GraphNode* from_node = nullptr;  // its mismatched dependency
};

// Compares the new graph with the executable's shape; on a mismatch says where.
Mismatch compare(const GraphShape& old_shape, const Graph& graph) {
    if (old_shape.kinds.size() != graph.nodes.size()) return {CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED};
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        const GraphNode& node = *graph.nodes[i];
        const auto& old_deps = old_shape.dependencies[i];
        if (node.dependencies.size() != old_deps.size()) return {CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, &node};
        for (size_t e = 0; e < old_deps.size(); ++e)
            if (node.dependencies[e] != graph.nodes[old_deps[e]].get())
                return {CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, &node, node.dependencies[e]};
        if (node.kind != old_shape.kinds[i]) return {CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, &node};
        if (node.kind == GraphNode::Kind::Child) {
            const Mismatch inner = compare(old_shape.children[i], *node.child);
            // A change inside a child graph is reported on the child graph node.
            if (inner.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) return {inner.result, &node};
        }
    }
    return {};
}

const Context* context_of(const Function& function) {
    return function.module ? function.module->context : nullptr;
}

const Device* device_of(uintptr_t address) {
    const Allocation* a = find_allocation(address);
    return a && a->context ? a->context->device : nullptr;
}

// cuda.h's limits on what an update may change in one node.
CUgraphExecUpdateResult check_change(const GraphNode& old_node, const GraphNode& new_node) {
    switch (new_node.kind) {
        case GraphNode::Kind::Kernel:
            // The owning context of the function cannot change.
            if (context_of(*old_node.function) != context_of(*new_node.function))
                return CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
            return CU_GRAPH_EXEC_UPDATE_SUCCESS;
        case GraphNode::Kind::Memset:
            if (device_of(old_node.dst) != device_of(new_node.dst))
                return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
            // 2D memsets: only the address and the value may change.
            if ((old_node.height > 1 || new_node.height > 1) &&
                (old_node.height != new_node.height || old_node.width != new_node.width ||
                 old_node.element != new_node.element || old_node.dst_pitch != new_node.dst_pitch))
                return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
            return CU_GRAPH_EXEC_UPDATE_SUCCESS;
        case GraphNode::Kind::MemAlloc:
        case GraphNode::Kind::MemFree:
            // Memory nodes' parameters cannot be updated: the same allocation, or no update.
            return old_node.memory == new_node.memory ? CU_GRAPH_EXEC_UPDATE_SUCCESS
                                                      : CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
        case GraphNode::Kind::Memcpy: {
            // Memory types cannot change, nor the devices the operands are on.
            if (old_node.copy_kind != new_node.copy_kind) return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
            const bool dst_device = new_node.copy_kind == TBDSIM_COPY_HTOD || new_node.copy_kind == TBDSIM_COPY_DTOD;
            const bool src_device = new_node.copy_kind == TBDSIM_COPY_DTOH || new_node.copy_kind == TBDSIM_COPY_DTOD;
            if ((dst_device && device_of(old_node.dst) != device_of(new_node.dst)) ||
                (src_device && device_of(old_node.src) != device_of(new_node.src)))
                return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
            return CU_GRAPH_EXEC_UPDATE_SUCCESS;
        }
        default:
            return CU_GRAPH_EXEC_UPDATE_SUCCESS;  // events, host functions: any change
    }
}

CUresult update(CUgraphExec exec_handle, CUgraph graph_handle, CUgraphExecUpdateResultInfo& info) {
    info = CUgraphExecUpdateResultInfo{};
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    GraphExec* exec = live_graph_exec(exec_handle);
    const Graph* graph = live_graph(graph_handle);
    if (!exec || !graph) {
        info.result = CU_GRAPH_EXEC_UPDATE_ERROR;
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto fail = [&](CUgraphExecUpdateResult result, const GraphNode* node, const GraphNode* from = nullptr) {
        info.result = result;
        info.errorNode = reinterpret_cast<CUgraphNode>(const_cast<GraphNode*>(node));
        info.errorFromNode = reinterpret_cast<CUgraphNode>(const_cast<GraphNode*>(from));
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    };
    if (const Mismatch m = compare(exec->shape, *graph); m.result != CU_GRAPH_EXEC_UPDATE_SUCCESS)
        return fail(m.result, m.node, m.from_node);
    std::vector<const GraphNode*> sources;
    std::vector<GraphNode> updated = flatten_graph(*graph, &sources);  // pairs with exec->nodes one to one
    for (size_t i = 0; i < updated.size(); ++i)
        if (CUgraphExecUpdateResult r = check_change(exec->nodes[i], updated[i]); r != CU_GRAPH_EXEC_UPDATE_SUCCESS)
            return fail(r, sources[i]);
    for (size_t i = 0; i < updated.size(); ++i) {
        updated[i].id = exec->nodes[i].id;
        updated[i].param_pointers.clear();  // the executable's copy hands no pointers out
        updated[i].dependencies.clear();
    }
    exec->nodes = std::move(updated);
    info.result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info) {  // _v2
    if (!info) return CUDA_ERROR_INVALID_VALUE;
    return update(exec, graph, *info);
}

// The CUDA 11 form (error node and result as two outputs); cuda.h maps the name to _v2, so it is
// defined under its symbol name.
extern "C" CUresult legacy_graph_exec_update(CUgraphExec, CUgraph, CUgraphNode*,
                                             CUgraphExecUpdateResult*) __asm__("cuGraphExecUpdate");
SIM_API CUresult legacy_graph_exec_update(CUgraphExec exec, CUgraph graph, CUgraphNode* error_node,
                                          CUgraphExecUpdateResult* result) {
    if (!error_node || !result) return CUDA_ERROR_INVALID_VALUE;
    CUgraphExecUpdateResultInfo info{};
    const CUresult rc = update(exec, graph, info);
    *error_node = info.errorNode;
    *result = info.result;
    return rc;
}

// A child graph node's part of an executable takes the parameters of `child`, whose topology and node
// order must be those of the node's embedded graph (as documented); the same limits as an update.
SIM_API CUresult CUDAAPI cuGraphExecChildGraphNodeSetParams(CUgraphExec exec_handle, CUgraphNode node_handle,
                                                            CUgraph child_handle) {
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    GraphExec* exec = live_graph_exec(exec_handle);
    GraphNode* node = find_graph_node(node_handle);
    const Graph* child = live_graph(child_handle);
    if (!exec || !node || node->kind != GraphNode::Kind::Child || !child) return CUDA_ERROR_INVALID_VALUE;
    if (compare(shape_of(*node->child), *child).result != CU_GRAPH_EXEC_UPDATE_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    const std::vector<GraphNode> current = flatten_graph(*node->child);
    std::vector<GraphNode> updated = flatten_graph(*child);
    std::vector<GraphNode*> targets;
    for (const GraphNode& c : current) {
        auto it =
            std::find_if(exec->nodes.begin(), exec->nodes.end(), [&](const GraphNode& n) { return n.id == c.id; });
        if (it == exec->nodes.end()) return CUDA_ERROR_INVALID_VALUE;  // added to the node's graph since
        targets.push_back(&*it);
    }
    for (size_t i = 0; i < updated.size(); ++i)
        if (check_change(*targets[i], updated[i]) != CU_GRAPH_EXEC_UPDATE_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < updated.size(); ++i) {
        updated[i].id = targets[i]->id;
        updated[i].param_pointers.clear();
        updated[i].dependencies.clear();
        *targets[i] = std::move(updated[i]);
    }
    return CUDA_SUCCESS;
}
