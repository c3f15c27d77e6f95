// Stream capture and CUDA graphs: each call maps to the driver call of the same meaning (the runtime's
// cudaGraph_t, cudaGraphExec_t and cudaGraphNode_t are the driver's handles, and cudaStreamCapture*
// enums share the driver's values). The _ptsz variants use the per-thread driver table, which treats
// stream 0 as the calling thread's default stream.
#include "context.h"

using namespace tbdsim::rt;

extern "C" {
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* pGraph);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(
    cudaStream_t stream, cudaStreamCaptureStatus* captureStatus_out, unsigned long long* id_out, cudaGraph_t* graph_out,
    const cudaGraphNode_t** dependencies_out, const cudaGraphEdgeData** edgeData_out, size_t* numDependencies_out);
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
}

namespace {

cudaError_t begin_capture(bool per_thread, cudaStream_t stream, cudaStreamCaptureMode mode) {
    return api_call(per_thread, [&](const DriverApi& api) {
        return call_driver(api.cuStreamBeginCapture, stream, static_cast<CUstreamCaptureMode>(mode));
    });
}

cudaError_t end_capture(bool per_thread, cudaStream_t stream, cudaGraph_t* graph) {
    if (graph == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(per_thread,
                    [&](const DriverApi& api) { return call_driver(api.cuStreamEndCapture, stream, graph); });
}

cudaError_t capture_info(bool per_thread, cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                         cudaGraph_t* graph, const cudaGraphNode_t** dependencies, const cudaGraphEdgeData** edges,
                         size_t* count) {
    if (status == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(per_thread, [&](const DriverApi& api) {
        CUstreamCaptureStatus driver_status = CU_STREAM_CAPTURE_STATUS_NONE;
        // cudaGraphEdgeData has the driver's CUgraphEdgeData layout.
        cuuint64_t driver_id = 0;  // unsigned long, where the runtime says unsigned long long
        cudaError_t error = call_driver(api.cuStreamGetCaptureInfo, stream, &driver_status, id ? &driver_id : nullptr,
                                        graph, dependencies, reinterpret_cast<const CUgraphEdgeData**>(edges), count);
        if (error != cudaSuccess) return error;
        *status = static_cast<cudaStreamCaptureStatus>(driver_status);
        if (id != nullptr && driver_status == CU_STREAM_CAPTURE_STATUS_ACTIVE) *id = driver_id;
        return error;
    });
}

cudaError_t graph_launch(bool per_thread, cudaGraphExec_t exec, cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) { return call_driver(api.cuGraphLaunch, exec, stream); });
}

cudaError_t graph_upload(bool per_thread, cudaGraphExec_t exec, cudaStream_t stream) {
    return api_call(per_thread, [&](const DriverApi& api) { return call_driver(api.cuGraphUpload, exec, stream); });
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
    return begin_capture(false, stream, mode);
}
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode) {
    return begin_capture(true, stream, mode);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
    return end_capture(false, stream, graph);
}
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* graph) {
    return end_capture(true, stream, graph);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                          unsigned long long* id, cudaGraph_t* graph,
                                                          const cudaGraphNode_t** dependencies,
                                                          const cudaGraphEdgeData** edges, size_t* count) {
    return capture_info(false, stream, status, id, graph, dependencies, edges, count);
}
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                          cudaGraph_t* graph, const cudaGraphNode_t** dependencies,
                                          const cudaGraphEdgeData** edges, size_t* count) {
    return capture_info(true, stream, status, id, graph, dependencies, edges, count);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                               unsigned long long flags) {
    if (exec == nullptr) return record_error(cudaErrorInvalidValue);
    // cudaGraphInstantiateFlag* values are the driver's CUDA_GRAPH_INSTANTIATE_FLAG_* values.
    return api_call(
        false, [&](const DriverApi& api) { return call_driver(api.cuGraphInstantiateWithFlags, exec, graph, flags); });
}

// CUDA 12+: cudaGraphInstantiate takes flags, like cudaGraphInstantiateWithFlags.
TBDSIM_CUDART_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                      unsigned long long flags) {
    return cudaGraphInstantiateWithFlags(exec, graph, flags);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    return graph_launch(false, exec, stream);
}
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
    return graph_launch(true, exec, stream);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream) {
    return graph_upload(false, exec, stream);
}
cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
    return graph_upload(true, exec, stream);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuGraphExecDestroy, exec); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuGraphDestroy, graph); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes) {
    if (numNodes == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false,
                    [&](const DriverApi& api) { return call_driver(api.cuGraphGetNodes, graph, nodes, numNodes); });
}
