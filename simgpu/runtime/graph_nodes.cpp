// Graphs built by hand through the runtime: each call maps to the driver call of the same meaning.
// The runtime's parameter structs share the driver's layouts (cudaMemsetParams and
// CUDA_MEMSET_NODE_PARAMS, cudaHostNodeParams and CUDA_HOST_NODE_PARAMS, the update result info),
// cudaGraphNodeType has CUgraphNodeType's values and cudaErrorGraphExecUpdateFailure is
// CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE; a kernel node's host stub becomes the kernel's CUfunction.
#include "context.h"
#include "registration.h"

#include <cstring>

using namespace tbdsim::rt;

namespace {

static_assert(sizeof(cudaMemsetParams) == sizeof(CUDA_MEMSET_NODE_PARAMS));
static_assert(sizeof(cudaHostNodeParams) == sizeof(CUDA_HOST_NODE_PARAMS));
static_assert(sizeof(cudaGraphExecUpdateResultInfo) == sizeof(CUgraphExecUpdateResultInfo));
static_assert(static_cast<int>(cudaGraphNodeTypeEventRecord) == CU_GRAPH_NODE_TYPE_EVENT_RECORD);

// The driver's form of a runtime kernel node; the caller has bound the context.
cudaError_t driver_kernel_params(const cudaKernelNodeParams& p, CUDA_KERNEL_NODE_PARAMS& out) {
    CUfunction function = nullptr;
    if (cudaError_t e = function_in_current_context(p.func, &function); e != cudaSuccess) return e;
    out = CUDA_KERNEL_NODE_PARAMS{};
    out.func = function;
    out.gridDimX = p.gridDim.x, out.gridDimY = p.gridDim.y, out.gridDimZ = p.gridDim.z;
    out.blockDimX = p.blockDim.x, out.blockDimY = p.blockDim.y, out.blockDimZ = p.blockDim.z;
    out.sharedMemBytes = p.sharedMemBytes;
    out.kernelParams = p.kernelParams;
    out.extra = p.extra;
    return cudaSuccess;
}

CUDA_MEMSET_NODE_PARAMS driver_memset_params(const cudaMemsetParams& p) {
    CUDA_MEMSET_NODE_PARAMS out{};
    out.dst = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p.dst));
    out.pitch = p.pitch;
    out.value = p.value;
    out.elementSize = p.elementSize;
    out.width = p.width;
    out.height = p.height;
    return out;
}

const CUDA_HOST_NODE_PARAMS* driver_host_params(const cudaHostNodeParams* p) {
    return reinterpret_cast<const CUDA_HOST_NODE_PARAMS*>(p);
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuGraphCreate, graph, flags); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                        const cudaGraphNode_t* deps, size_t count,
                                                        const cudaKernelNodeParams* params) {
    if (params == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUDA_KERNEL_NODE_PARAMS driver{};
        if (cudaError_t e = driver_kernel_params(*params, driver); e != cudaSuccess) return e;
        return call_driver(api.cuGraphAddKernelNode, node, graph, deps, count, &driver);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                              const cudaKernelNodeParams* params) {
    if (params == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUDA_KERNEL_NODE_PARAMS driver{};
        if (cudaError_t e = driver_kernel_params(*params, driver); e != cudaSuccess) return e;
        return call_driver(api.cuGraphKernelNodeSetParams, node, &driver);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                  const cudaKernelNodeParams* params) {
    if (params == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUDA_KERNEL_NODE_PARAMS driver{};
        if (cudaError_t e = driver_kernel_params(*params, driver); e != cudaSuccess) return e;
        return call_driver(api.cuGraphExecKernelNodeSetParams, exec, node, &driver);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                        const cudaGraphNode_t* deps, size_t count,
                                                        const cudaMemsetParams* params) {
    if (params == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) {
        const CUDA_MEMSET_NODE_PARAMS driver = driver_memset_params(*params);
        return call_driver(api.cuGraphAddMemsetNode, node, graph, deps, count, &driver, nullptr);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                       const cudaGraphNode_t* deps, size_t count) {
    return api_call(
        false, [&](const DriverApi& api) { return call_driver(api.cuGraphAddEmptyNode, node, graph, deps, count); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                                          const cudaGraphNode_t* to, const cudaGraphEdgeData* edges,
                                                          size_t count) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphAddDependencies, graph, from, to, reinterpret_cast<const CUgraphEdgeData*>(edges),
                           count);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* type) {
    if (type == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphNodeGetType, node, reinterpret_cast<CUgraphNodeType*>(type));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* roots, size_t* count) {
    return api_call(false,
                    [&](const DriverApi& api) { return call_driver(api.cuGraphGetRootNodes, graph, roots, count); });
}

// ---- event record and wait nodes ------------------------------------------------------------------

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                             const cudaGraphNode_t* deps, size_t count,
                                                             cudaEvent_t event) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphAddEventRecordNode, node, graph, deps, count, event);
    });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                           const cudaGraphNode_t* deps, size_t count,
                                                           cudaEvent_t event) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphAddEventWaitNode, node, graph, deps, count, event);
    });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event) {
    return api_call(false,
                    [&](const DriverApi& api) { return call_driver(api.cuGraphEventRecordNodeGetEvent, node, event); });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
    return api_call(false,
                    [&](const DriverApi& api) { return call_driver(api.cuGraphEventRecordNodeSetEvent, node, event); });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event) {
    return api_call(false,
                    [&](const DriverApi& api) { return call_driver(api.cuGraphEventWaitNodeGetEvent, node, event); });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
    return api_call(false,
                    [&](const DriverApi& api) { return call_driver(api.cuGraphEventWaitNodeSetEvent, node, event); });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                      cudaEvent_t event) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphExecEventRecordNodeSetEvent, exec, node, event);
    });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                    cudaEvent_t event) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphExecEventWaitNodeSetEvent, exec, node, event);
    });
}

// ---- host nodes -----------------------------------------------------------------------------------

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                      const cudaGraphNode_t* deps, size_t count,
                                                      const cudaHostNodeParams* params) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphAddHostNode, node, graph, deps, count, driver_host_params(params));
    });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, cudaHostNodeParams* params) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphHostNodeGetParams, node, reinterpret_cast<CUDA_HOST_NODE_PARAMS*>(params));
    });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const cudaHostNodeParams* params) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphHostNodeSetParams, node, driver_host_params(params));
    });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                const cudaHostNodeParams* params) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphExecHostNodeSetParams, exec, node, driver_host_params(params));
    });
}

// ---- child graph nodes and update -------------------------------------------------------------------

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                            const cudaGraphNode_t* deps, size_t count,
                                                            cudaGraph_t child) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphAddChildGraphNode, node, graph, deps, count, child);
    });
}
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* graph) {
    return api_call(false,
                    [&](const DriverApi& api) { return call_driver(api.cuGraphChildGraphNodeGetGraph, node, graph); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                                     cudaGraphExecUpdateResultInfo* info) {
    if (info == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphExecUpdate, exec, graph, reinterpret_cast<CUgraphExecUpdateResultInfo*>(info));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                      cudaGraph_t child) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphExecChildGraphNodeSetParams, exec, node, child);
    });
}
