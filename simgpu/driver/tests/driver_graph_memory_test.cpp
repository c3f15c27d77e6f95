// Graph memory nodes: stream-ordered allocation captured into a graph (allocation and free nodes),
// the same built by hand, what each launch allocates and frees (records, the device's graph memory
// attributes, ground truth), trim, and the errors cuda.h documents for them.
#include "driver_test_support.h"

#include <fstream>
#include <sstream>

namespace {

cuuint64_t graph_attribute(CUgraphMem_attribute attribute) {
    cuuint64_t v = ~0ull;
    REQUIRE_EQ(cuDeviceGetGraphMemAttribute(0, attribute, &v), CUDA_SUCCESS);
    return v;
}

CUresult launch_axpy(CUstream stream, CUdeviceptr x, CUdeviceptr y) {
    float a = 2;
    int n = 256;
    void* params[] = {&a, &x, &y, &n};
    return cuLaunchKernel(axpy_function(), 1, 1, 1, 256, 1, 1, 0, stream, params, nullptr);
}

// Truth lines of `kind` ("alloc" / "free") for `address` written by graph launches (graph id set).
size_t graph_truth_lines(const char* kind, CUdeviceptr address) {
    std::ifstream in(truth_path());
    std::ostringstream hex;
    hex << "0x" << std::hex << address;
    size_t found = 0;
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        std::vector<std::string> f;
        for (std::string s; std::getline(fields, s, '\t');) f.push_back(s);
        // alloc/free: kind pid correlation stream time memory-kind bytes address [graph node]
        if (f.size() == 10 && f[0] == kind && f[7] == hex.str()) ++found;
    }
    return found;
}

CUDA_MEM_ALLOC_NODE_PARAMS alloc_params(size_t bytes) {
    CUDA_MEM_ALLOC_NODE_PARAMS p{};
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.poolProps.location.id = 0;
    p.bytesize = bytes;
    return p;
}

}  // namespace

TEST_CASE("captured cuMemAllocAsync and cuMemFreeAsync become memory nodes; each launch allocates and frees") {
    use_primary_context();
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuDeviceGraphMemTrim(0));
    const cuuint64_t reserved_before = graph_attribute(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT);
    size_t free_before = 0, total = 0;
    CHECK_CU(cuMemGetInfo(&free_before, &total));

    CHECK_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUdeviceptr x = 0, y = 0;
    CHECK_CU(cuMemAllocAsync(&x, 4 << 20, stream));
    CHECK_CU(cuMemAllocAsync(&y, 1024, stream));
    CHECK_NE(x, 0u);
    CHECK_CU(cuMemsetD8Async(x, 3, 1024, stream));
    CHECK_CU(launch_axpy(stream, x, y));
    CHECK_CU(cuMemFreeAsync(x, stream));
    CHECK_CU(cuMemFreeAsync(y, stream));
    CUgraph graph = nullptr;
    CHECK_CU(cuStreamEndCapture(stream, &graph));

    // Capture reserved an address only: no memory is in use until a launch.
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 0u);
    size_t nodes_count = 0;
    CHECK_CU(cuGraphGetNodes(graph, nullptr, &nodes_count));
    REQUIRE_EQ(nodes_count, 6u);
    std::vector<CUgraphNode> nodes(nodes_count);
    CHECK_CU(cuGraphGetNodes(graph, nodes.data(), &nodes_count));
    CUgraphNodeType type{};
    CHECK_CU(cuGraphNodeGetType(nodes[0], &type));
    CHECK_EQ(type, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    CHECK_CU(cuGraphNodeGetType(nodes[4], &type));
    CHECK_EQ(type, CU_GRAPH_NODE_TYPE_MEM_FREE);
    CUDA_MEM_ALLOC_NODE_PARAMS params{};
    CHECK_CU(cuGraphMemAllocNodeGetParams(nodes[0], &params));
    CHECK_EQ(params.dptr, x);
    CHECK_EQ(params.bytesize, size_t(4 << 20));
    CHECK_EQ(params.poolProps.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
    CUdeviceptr freed = 0;
    CHECK_CU(cuGraphMemFreeNodeGetParams(nodes[4], &freed));
    CHECK_EQ(freed, x);
    CHECK_EQ(cuGraphMemAllocNodeGetParams(nodes[4], &params), CUDA_ERROR_INVALID_VALUE);

    CUgraphExec exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
    RecordLog log;
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuGraphLaunch(exec, stream));  // freed inside the graph: launching again is fine
    CHECK_CU(cuStreamSynchronize(stream));

    // Each launch allocated both at their fixed addresses and freed them, in replay order.
    std::vector<TbdsimRecord> allocs = log.records(TBDSIM_RECORD_ALLOC), frees = log.records(TBDSIM_RECORD_FREE);
    REQUIRE_EQ(allocs.size(), 4u);
    REQUIRE_EQ(frees.size(), 4u);
    std::vector<TbdsimRecord> kernels = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(kernels.size(), 2u);
    for (int launch = 0; launch < 2; ++launch) {
        const TbdsimRecord& a = allocs[size_t(launch) * 2];
        const TbdsimRecord& f = frees[size_t(launch) * 2];
        CHECK_EQ(a.address, x);
        CHECK_EQ(a.bytes, uint64_t(4 << 20));
        CHECK_EQ(f.address, x);
        CHECK_NE(a.graph_id, 0u);
        CHECK_EQ(a.correlation_id, kernels[size_t(launch)].correlation_id);
        CHECK_LE(a.start_ns, kernels[size_t(launch)].start_ns);
        CHECK_GE(f.start_ns, kernels[size_t(launch)].end_ns);
        CHECK_EQ(allocs[size_t(launch) * 2 + 1].address, y);
    }
    CHECK_EQ(graph_truth_lines("alloc", x), 2u);
    CHECK_EQ(graph_truth_lines("free", x), 2u);

    // All freed; the reservation stays (cached for the graph) until trimmed.
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 0u);
    CHECK_GE(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH), uint64_t((4 << 20) + 1024));
    const cuuint64_t reserved = graph_attribute(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT);
    CHECK_EQ(reserved - reserved_before, uint64_t((4 << 20) + 1024));
    size_t free_after = 0;
    CHECK_CU(cuMemGetInfo(&free_after, &total));
    CHECK_LT(free_after, free_before);
    CHECK_CU(cuDeviceGraphMemTrim(0));
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT), 0u);
    CHECK_GE(graph_attribute(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH), reserved);
    cuuint64_t zero = 0, one = 1;
    CHECK_CU(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH), 0u);
    CHECK_EQ(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &one), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuDeviceGetGraphMemAttribute(99, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &one), CUDA_ERROR_INVALID_DEVICE);
    CHECK_EQ(cuDeviceGraphMemTrim(99), CUDA_ERROR_INVALID_DEVICE);

    // Freed in the owning graph: no other free may name it.
    CHECK_EQ(cuMemFree(x), CUDA_ERROR_INVALID_VALUE);
    CUgraph other = nullptr;
    CHECK_CU(cuGraphCreate(&other, 0));
    CUgraphNode node = nullptr;
    CHECK_EQ(cuGraphAddMemFreeNode(&node, other, nullptr, 0, x), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuGraphDestroy(other));

    // One executable at a time for a graph with memory nodes.
    CUgraphExec second = nullptr;
    CHECK_EQ(cuGraphInstantiateWithFlags(&second, graph, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuGraphExecDestroy(exec));
    CHECK_CU(cuGraphInstantiateWithFlags(&second, graph, 0));
    CHECK_CU(cuGraphExecDestroy(second));
    // Nor can it be embedded as a child graph.
    CUgraph parent = nullptr;
    CHECK_CU(cuGraphCreate(&parent, 0));
    CHECK_EQ(cuGraphAddChildGraphNode(&node, parent, nullptr, 0, graph), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuGraphDestroy(parent));
    CHECK_CU(cuGraphDestroy(graph));
    CHECK_CU(cuStreamDestroy(stream));
}

TEST_CASE("an allocation the graph does not free outlives the launch; relaunch needs it freed or auto-free") {
    use_primary_context();
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUgraph graph = nullptr;
    CHECK_CU(cuGraphCreate(&graph, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS params = alloc_params(2048);
    CUgraphNode alloc = nullptr;
    CHECK_CU(cuGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &params));
    const CUdeviceptr p = params.dptr;
    REQUIRE_NE(p, 0u);
    CUDA_MEMSET_NODE_PARAMS set{};
    set.dst = p;
    set.value = 0x5a;
    set.elementSize = 1;
    set.width = 2048;
    set.height = 1;
    CUgraphNode memset_node = nullptr;
    CHECK_CU(cuGraphAddMemsetNode(&memset_node, graph, &alloc, 1, &set, nullptr));

    CUgraphExec exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuStreamSynchronize(stream));
    // Live after the launch: stream work and host copies see the graph's bytes.
    uint8_t bytes[4] = {};
    CHECK_CU(cuMemcpyDtoH(bytes, p + 100, sizeof bytes));
    CHECK_EQ(bytes[3], 0x5a);
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 2048u);
    CHECK_EQ(cuGraphLaunch(exec, stream), CUDA_ERROR_INVALID_VALUE);  // still unfreed
    CHECK_CU(cuMemFreeAsync(p, stream));
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 0u);
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuMemFree(p));
    CHECK_CU(cuGraphExecDestroy(exec));

    // Auto-free: each launch frees what the last one left, as cuMemFreeAsync on its stream would.
    RecordLog log;
    CHECK_CU(cuGraphInstantiateWithFlags(&exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuStreamSynchronize(stream));
    CHECK_EQ(log.records(TBDSIM_RECORD_ALLOC).size(), 3u);
    CHECK_EQ(log.records(TBDSIM_RECORD_FREE).size(), 2u);
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 2048u);

    // Freed by a node of another graph: launching that graph ends the allocation.
    CUgraph freer = nullptr;
    CHECK_CU(cuGraphCreate(&freer, 0));
    CUgraphNode free_node = nullptr;
    CHECK_CU(cuGraphAddMemFreeNode(&free_node, freer, nullptr, 0, p));
    CHECK_EQ(cuGraphAddMemFreeNode(&free_node, graph, nullptr, 0, p), CUDA_ERROR_INVALID_VALUE);  // freed already
    CUgraphExec freer_exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&freer_exec, freer, 0));
    CHECK_CU(cuGraphLaunch(freer_exec, stream));
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 0u);
    CHECK_EQ(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
    {
        // Its free node again, with nothing live to free: nothing happens, nothing is recorded.
        RecordLog again;
        CHECK_CU(cuGraphLaunch(freer_exec, stream));
        CHECK(again.records(TBDSIM_RECORD_FREE).empty());
    }

    // Documented parameter errors.
    CHECK_EQ(cuGraphAddMemFreeNode(&free_node, graph, nullptr, 0, p + 8), CUDA_ERROR_INVALID_VALUE);
    CUDA_MEM_ALLOC_NODE_PARAMS bad = alloc_params(0);
    CHECK_EQ(cuGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &bad), CUDA_ERROR_INVALID_VALUE);
    bad = alloc_params(64);
    bad.poolProps.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CHECK_EQ(cuGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &bad), CUDA_ERROR_INVALID_VALUE);
    CUgraphExec device_exec = nullptr;
    CHECK_EQ(cuGraphInstantiateWithFlags(
                 &device_exec, freer,
                 CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH),
             CUDA_ERROR_INVALID_VALUE);

    CHECK_CU(cuGraphExecDestroy(freer_exec));
    CHECK_CU(cuGraphExecDestroy(exec));
    CHECK_CU(cuGraphDestroy(freer));
    CHECK_CU(cuGraphDestroy(graph));
    CHECK_CU(cuStreamDestroy(stream));
}

TEST_CASE("a graph launch whose allocations do not fit the device fails before running anything") {
    use_primary_context();
    size_t free_bytes = 0, total = 0;
    CHECK_CU(cuMemGetInfo(&free_bytes, &total));
    CUgraph graph = nullptr;
    CHECK_CU(cuGraphCreate(&graph, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS params = alloc_params(total + 1);  // address space only: fine to add
    CUgraphNode alloc = nullptr;
    CHECK_CU(cuGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &params));
    CUgraphExec exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
    RecordLog log;
    CHECK_EQ(cuGraphLaunch(exec, nullptr), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(log.records(TBDSIM_RECORD_ALLOC).empty());
    CHECK_EQ(graph_attribute(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 0u);
    CHECK_CU(cuGraphExecDestroy(exec));
    CHECK_CU(cuGraphDestroy(graph));
}
