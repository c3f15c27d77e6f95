// Graphs built by hand: memset -> kernel -> memcpy, queried, instantiated, replayed (bytes move,
// records carry the graph and node ids), and a kernel node's parameters changed in the graph and in
// the executable.
#include "driver_test_support.h"

#include <vector>

TEST_CASE("a hand-built graph runs its nodes in dependency order and can be queried and updated") {
    use_primary_context();
    RecordLog log;
    constexpr size_t kCount = 1024;
    CUdeviceptr x = 0, y = 0;
    CHECK_CU(cuMemAlloc(&x, kCount * sizeof(float)));
    CHECK_CU(cuMemAlloc(&y, kCount * sizeof(float)));
    std::vector<float> host(kCount, 0.0f);

    CUgraph graph = nullptr;
    CHECK_CU(cuGraphCreate(&graph, 0));
    CUDA_MEMSET_NODE_PARAMS set{};
    set.dst = x;
    set.value = 0x3f800000;  // 1.0f
    set.elementSize = 4;
    set.width = kCount;
    set.height = 1;
    CUgraphNode memset_node = nullptr, kernel_node = nullptr, copy_node = nullptr, join = nullptr;
    CHECK_CU(cuGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &set, nullptr));

    float a = 2.0f;
    int n = static_cast<int>(kCount);
    void* args[] = {&a, &x, &y, &n};
    CUDA_KERNEL_NODE_PARAMS kernel{};
    kernel.func = axpy_function();
    kernel.gridDimX = 4;
    kernel.gridDimY = kernel.gridDimZ = 1;
    kernel.blockDimX = 256;
    kernel.blockDimY = kernel.blockDimZ = 1;
    kernel.kernelParams = args;
    CHECK_CU(cuGraphAddKernelNode(&kernel_node, graph, &memset_node, 1, &kernel));

    CUDA_MEMCPY3D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.srcDevice = x;
    copy.dstMemoryType = CU_MEMORYTYPE_HOST;
    copy.dstHost = host.data();
    copy.WidthInBytes = kCount * sizeof(float);
    copy.Height = copy.Depth = 1;
    CHECK_CU(cuGraphAddMemcpyNode(&copy_node, graph, &kernel_node, 1, &copy, nullptr));
    CUgraphNode both[] = {kernel_node, copy_node};
    CHECK_CU(cuGraphAddEmptyNode(&join, graph, both, 2));

    // Queries.
    CUgraphNodeType type{};
    CHECK_CU(cuGraphNodeGetType(kernel_node, &type));
    CHECK_EQ(type, CU_GRAPH_NODE_TYPE_KERNEL);
    CHECK_CU(cuGraphNodeGetType(join, &type));
    CHECK_EQ(type, CU_GRAPH_NODE_TYPE_EMPTY);
    size_t count = 0;
    CHECK_CU(cuGraphGetRootNodes(graph, nullptr, &count));
    CHECK_EQ(count, 1u);
    CUgraphNode root = nullptr;
    CHECK_CU(cuGraphGetRootNodes(graph, &root, &count));
    CHECK_EQ(root, memset_node);
    CHECK_CU(cuGraphGetEdges(graph, nullptr, nullptr, nullptr, &count));
    CHECK_EQ(count, 4u);
    CHECK_CU(cuGraphNodeGetDependencies(join, nullptr, nullptr, &count));
    CHECK_EQ(count, 2u);
    CUDA_KERNEL_NODE_PARAMS read{};
    CHECK_CU(cuGraphKernelNodeGetParams(kernel_node, &read));
    CHECK_EQ(read.gridDimX, 4u);
    REQUIRE(read.kernelParams != nullptr);
    CHECK_EQ(*static_cast<float*>(read.kernelParams[0]), 2.0f);
    CHECK_EQ(*static_cast<CUdeviceptr*>(read.kernelParams[1]), x);
    CHECK_EQ(cuGraphAddDependencies(graph, &join, &memset_node, nullptr, 1), CUDA_ERROR_NOT_SUPPORTED);
    CUgraphNode foreign = reinterpret_cast<CUgraphNode>(&count);
    CHECK_EQ(cuGraphAddEmptyNode(&join, graph, &foreign, 1), CUDA_ERROR_INVALID_VALUE);

    // Instantiate and replay: the memset and the copy move their bytes, in order.
    CUgraphExec exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
    CHECK_CU(cuGraphLaunch(exec, nullptr));
    CHECK_CU(cuCtxSynchronize());
    CHECK_EQ(host[0], 1.0f);
    CHECK_EQ(host[kCount - 1], 1.0f);

    // A new grid in the executable only; the graph keeps its own.
    kernel.gridDimX = 8;
    CHECK_CU(cuGraphExecKernelNodeSetParams(exec, kernel_node, &kernel));
    CHECK_CU(cuGraphLaunch(exec, nullptr));
    CHECK_CU(cuCtxSynchronize());
    CHECK_CU(cuGraphKernelNodeGetParams(kernel_node, &read));
    CHECK_EQ(read.gridDimX, 4u);
    kernel.gridDimX = 16;
    CHECK_CU(cuGraphKernelNodeSetParams(kernel_node, &kernel));
    CHECK_CU(cuGraphKernelNodeGetParams(kernel_node, &read));
    CHECK_EQ(read.gridDimX, 16u);

    const auto kernels = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(kernels.size(), 2u);
    CHECK_EQ(kernels[0].grid[0], 4u);
    CHECK_EQ(kernels[1].grid[0], 8u);
    CHECK_NE(kernels[0].graph_id, 0u);
    CHECK_EQ(log.records(TBDSIM_RECORD_MEMSET).size(), 2u);
    CHECK_EQ(log.records(TBDSIM_RECORD_MEMCPY).size(), 2u);

    CHECK_CU(cuGraphExecDestroy(exec));
    CHECK_CU(cuGraphDestroy(graph));
    CHECK_CU(cuMemFree(x));
    CHECK_CU(cuMemFree(y));
}
