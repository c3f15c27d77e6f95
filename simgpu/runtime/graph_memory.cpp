// Graph memory nodes through the runtime: allocation and free nodes added by hand, their
// parameters, and the device's graph memory attributes and trim. Each maps to the driver call of the
// same meaning; cudaMemAllocNodeParams has CUDA_MEM_ALLOC_NODE_PARAMS's layout and
// cudaGraphMemAttributeType has CUgraphMem_attribute's values.
#include "context.h"

#include <cstddef>

using namespace tbdsim::rt;

namespace {

static_assert(sizeof(cudaMemAllocNodeParams) == sizeof(CUDA_MEM_ALLOC_NODE_PARAMS));
static_assert(offsetof(cudaMemAllocNodeParams, bytesize) == offsetof(CUDA_MEM_ALLOC_NODE_PARAMS, bytesize));
static_assert(offsetof(cudaMemAllocNodeParams, dptr) == offsetof(CUDA_MEM_ALLOC_NODE_PARAMS, dptr));
static_assert(static_cast<int>(cudaGraphMemAttrReservedMemHigh) == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH);
static_assert(static_cast<int>(cudaGraphNodeTypeMemAlloc) == CU_GRAPH_NODE_TYPE_MEM_ALLOC);

CUdeviceptr as_device_pointer(const void* pointer) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                          const cudaGraphNode_t* deps, size_t count,
                                                          cudaMemAllocNodeParams* params) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphAddMemAllocNode, node, graph, deps, count,
                           reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS*>(params));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node,
                                                                cudaMemAllocNodeParams* params_out) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphMemAllocNodeGetParams, node,
                           reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS*>(params_out));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                         const cudaGraphNode_t* deps, size_t count, void* dptr) {
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphAddMemFreeNode, node, graph, deps, count, as_device_pointer(dptr));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void* dptr_out) {
    // dptr_out receives the address: a void* the caller owns.
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuGraphMemFreeNodeGetParams, node, static_cast<CUdeviceptr*>(dptr_out));
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceGraphMemTrim(int device) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        if (cudaError_t e = device_handle(device, &handle); e != cudaSuccess) return e;
        return call_driver(api.cuDeviceGraphMemTrim, handle);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr,
                                                                void* value) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        if (cudaError_t e = device_handle(device, &handle); e != cudaSuccess) return e;
        return call_driver(api.cuDeviceGetGraphMemAttribute, handle, static_cast<CUgraphMem_attribute>(attr), value);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr,
                                                                void* value) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUdevice handle = 0;
        if (cudaError_t e = device_handle(device, &handle); e != cudaSuccess) return e;
        return call_driver(api.cuDeviceSetGraphMemAttribute, handle, static_cast<CUgraphMem_attribute>(attr), value);
    });
}
