// The simulated libcudnn.so.9's backend (graph) API as PyTorch's cudnn frontend drives it; run by
// cudnn_api_test.cpp's main.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cudnn_api_check.h"

namespace cudnn_api_test {

// As PyTorch's cudnn frontend drives the backend API: each level's descriptors are destroyed once the
// next is built (operations after the graph, the graph after the heuristic and its configs), counts
// are asked for with no array, and a plan gets no handle (deprecated in cuDNN 9). Each level must
// keep what it needs from the ones below.
void check_frontend_lifetimes(cudnnHandle_t handle) {
    auto tensor_with_uid = [](int64_t uid) {
        cudnnBackendDescriptor_t t = nullptr;
        const int64_t dims[] = {2, 8}, strides[] = {8, 1}, alignment = 16;
        const cudnnDataType_t type = CUDNN_DATA_FLOAT;
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t);
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 2, dims);
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 2, strides);
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
        EXPECT_STATUS(cudnnBackendFinalize(t), CUDNN_STATUS_SUCCESS);
        return t;
    };
    cudnnBackendDescriptor_t x = tensor_with_uid(1), y = tensor_with_uid(2), relu = nullptr, op = nullptr;
    const cudnnPointwiseMode_t mode = CUDNN_POINTWISE_RELU_FWD;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &relu);
    cudnnBackendSetAttribute(relu, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    EXPECT_STATUS(cudnnBackendFinalize(relu), CUDNN_STATUS_SUCCESS);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &op);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &relu);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    EXPECT_STATUS(cudnnBackendFinalize(op), CUDNN_STATUS_SUCCESS);
    cudnnBackendDescriptor_t graph = nullptr, heuristic = nullptr, config = nullptr, plan = nullptr;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph);
    cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    EXPECT_STATUS(cudnnBackendFinalize(graph), CUDNN_STATUS_SUCCESS);
    // A reduction outside an attention graph (no engine here runs it alone) makes the graph an
    // unsupported pattern, not a malformed one.
    cudnnBackendDescriptor_t reduction = nullptr, reduce = nullptr, unsupported = nullptr;
    const cudnnReduceTensorOp_t reduce_mode = CUDNN_REDUCE_TENSOR_MAX;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &reduction);
    cudnnBackendSetAttribute(reduction, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1,
                             &reduce_mode);
    EXPECT_STATUS(cudnnBackendFinalize(reduction), CUDNN_STATUS_SUCCESS);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, &reduce);
    cudnnBackendSetAttribute(reduce, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &reduction);
    cudnnBackendSetAttribute(reduce, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    cudnnBackendSetAttribute(reduce, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    EXPECT_STATUS(cudnnBackendFinalize(reduce), CUDNN_STATUS_SUCCESS);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &unsupported);
    cudnnBackendSetAttribute(unsupported, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &reduce);
    cudnnBackendSetAttribute(unsupported, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    EXPECT_STATUS(cudnnBackendFinalize(unsupported), CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN);
    for (cudnnBackendDescriptor_t d : {unsupported, reduce, reduction}) cudnnBackendDestroyDescriptor(d);
    for (cudnnBackendDescriptor_t d : {op, relu, x, y}) cudnnBackendDestroyDescriptor(d);

    const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_INSTANT;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heuristic);
    cudnnBackendSetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                             &graph);
    cudnnBackendSetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode);
    EXPECT_STATUS(cudnnBackendFinalize(heuristic), CUDNN_STATUS_SUCCESS);
    int64_t count = -1;
    EXPECT_STATUS(cudnnBackendGetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                           &count, nullptr),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(count == 2);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &config);
    EXPECT_STATUS(cudnnBackendGetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                           &count, &config),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(count == 1);
    cudnnBackendDestroyDescriptor(heuristic);
    cudnnBackendDestroyDescriptor(graph);

    // The config's engine, read back: its notes are counted with no array; no behaviour notes.
    cudnnBackendDescriptor_t engine = nullptr;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine);
    EXPECT_STATUS(cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                           &count, &engine),
                  CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                           CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, nullptr),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(count == 1);  // the first engine is the tensor-core one on an sm90 device
    EXPECT_STATUS(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                           CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &count, nullptr),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(count == 0);
    EXPECT_STATUS(cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 4,
                                           &count, nullptr),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(count == 0);
    cudnnBackendDestroyDescriptor(engine);

    cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config);
    EXPECT_STATUS(cudnnBackendFinalize(plan), CUDNN_STATUS_SUCCESS);
    cudnnBackendDestroyDescriptor(config);
    int64_t workspace_bytes = -1;
    EXPECT_STATUS(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                           &workspace_bytes),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(workspace_bytes >= 0);
    cudnnBackendDestroyDescriptor(plan);
}

}  // namespace cudnn_api_test
