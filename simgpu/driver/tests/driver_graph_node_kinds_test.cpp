// Event record/wait, host and child graph nodes built by hand, and cuGraphExecUpdate
// (api_graph_node_kinds.cpp, api_graph_update.cpp): where each replays on the device timeline, what
// the records say, and what an update may and may not change.
#include "driver_test_support.h"

#include <atomic>
#include <vector>

namespace {

struct Kernel {
    CUdeviceptr x = 0, y = 0;
    float a = 2.0f;
    int n = 256;
    void* args[4] = {&a, &x, &y, &n};
    CUDA_KERNEL_NODE_PARAMS params{};

    explicit Kernel(unsigned blocks) {
        CHECK_CU(cuMemAlloc(&x, 1024));
        CHECK_CU(cuMemAlloc(&y, 1024));
        params.func = axpy_function();
        params.gridDimX = blocks;
        params.gridDimY = params.gridDimZ = 1;
        params.blockDimX = 1024;
        params.blockDimY = params.blockDimZ = 1;
        params.kernelParams = args;
    }
    ~Kernel() {
        cuMemFree(x);
        cuMemFree(y);
    }
};

CUDA_MEMSET_NODE_PARAMS memset_params(CUdeviceptr dst, unsigned value, size_t bytes) {
    CUDA_MEMSET_NODE_PARAMS p{};
    p.dst = dst;
    p.value = value;
    p.elementSize = 1;
    p.width = bytes;
    p.height = 1;
    return p;
}

struct HostCalls {
    std::atomic<int> calls{0};
    std::atomic<uint64_t> last_ns{0};
};

void CUDA_CB note_call(void* user) {
    auto* h = static_cast<HostCalls*>(user);
    h->last_ns = private_api().now_ns();
    ++h->calls;
}

void CUDA_CB note_other(void* user) {
    static_cast<HostCalls*>(user)->calls += 100;
}

}  // namespace

TEST_CASE("event record and wait nodes order other streams' and graphs' work after the node") {
    use_primary_context();
    RecordLog log;
    Kernel long_kernel(2640000);  // 10000 waves: 6 ms of device time
    CUevent event = nullptr;
    CHECK_CU(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));

    CUgraph producer = nullptr, consumer = nullptr;
    CHECK_CU(cuGraphCreate(&producer, 0));
    CUgraphNode kernel_node = nullptr, record_node = nullptr;
    CHECK_CU(cuGraphAddKernelNode(&kernel_node, producer, nullptr, 0, &long_kernel.params));
    CHECK_CU(cuGraphAddEventRecordNode(&record_node, producer, &kernel_node, 1, event));
    CUgraphNodeType type{};
    CHECK_CU(cuGraphNodeGetType(record_node, &type));
    CHECK_EQ(type, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    CUevent read = nullptr;
    CHECK_CU(cuGraphEventRecordNodeGetEvent(record_node, &read));
    CHECK_EQ(read, event);
    CHECK_EQ(cuGraphEventWaitNodeGetEvent(record_node, &read), CUDA_ERROR_INVALID_VALUE);  // not a wait node
    CUgraphNode bad = nullptr;
    CHECK_EQ(cuGraphAddEventRecordNode(&bad, producer, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);

    Kernel short_kernel(1);
    CHECK_CU(cuGraphCreate(&consumer, 0));
    CUgraphNode wait_node = nullptr, after_wait = nullptr;
    CHECK_CU(cuGraphAddEventWaitNode(&wait_node, consumer, nullptr, 0, event));
    CHECK_CU(cuGraphAddKernelNode(&after_wait, consumer, &wait_node, 1, &short_kernel.params));
    CHECK_CU(cuGraphNodeGetType(wait_node, &type));
    CHECK_EQ(type, CU_GRAPH_NODE_TYPE_WAIT_EVENT);

    CUgraphExec producer_exec = nullptr, consumer_exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&producer_exec, producer, 0));
    CHECK_CU(cuGraphInstantiateWithFlags(&consumer_exec, consumer, 0));
    CUstream first = nullptr, second = nullptr, third = nullptr;
    CHECK_CU(cuStreamCreate(&first, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuStreamCreate(&second, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuStreamCreate(&third, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuGraphLaunch(producer_exec, first));
    // Recorded by the replay, after the kernel.
    check_query_against_end([&] { return cuEventQuery(event); }, log.records(TBDSIM_RECORD_KERNEL).at(0).end_ns);
    // A plain stream waiting on the event, and the consumer graph's wait node, on two more streams.
    CHECK_CU(cuStreamWaitEvent(second, event, 0));
    CHECK_CU(cuMemsetD8Async(short_kernel.y, 1, 64, second));
    CHECK_CU(cuGraphLaunch(consumer_exec, third));
    CHECK_CU(cuCtxSynchronize());
    CHECK_EQ(cuEventQuery(event), CUDA_SUCCESS);

    const auto kernels = log.records(TBDSIM_RECORD_KERNEL);
    const auto sets = log.records(TBDSIM_RECORD_MEMSET);
    REQUIRE_EQ(kernels.size(), 2u);
    REQUIRE_EQ(sets.size(), 1u);
    const TbdsimRecord& producer_kernel = kernels[0];
    const TbdsimRecord& consumer_kernel = kernels[1];
    CHECK_EQ(producer_kernel.grid[0], 2640000u);
    CHECK_GE(producer_kernel.end_ns - producer_kernel.start_ns, 5000000u);
    CHECK_GE(sets[0].start_ns, producer_kernel.end_ns);
    CHECK_GE(consumer_kernel.start_ns, producer_kernel.end_ns);
    CHECK_NE(consumer_kernel.graph_id, producer_kernel.graph_id);

    // A replaced event: the executable's copy records the new one, the graph's node keeps the old.
    CUevent other = nullptr;
    CHECK_CU(cuEventCreate(&other, CU_EVENT_DISABLE_TIMING));
    CHECK_CU(cuGraphExecEventRecordNodeSetEvent(producer_exec, record_node, other));
    CHECK_CU(cuGraphLaunch(producer_exec, first));
    check_query_against_end([&] { return cuEventQuery(other); }, log.records(TBDSIM_RECORD_KERNEL).back().end_ns);
    CHECK_CU(cuStreamSynchronize(first));
    CHECK_EQ(cuEventQuery(other), CUDA_SUCCESS);
    CHECK_CU(cuGraphEventRecordNodeGetEvent(record_node, &read));
    CHECK_EQ(read, event);
    CHECK_CU(cuGraphEventWaitNodeSetEvent(wait_node, other));
    CHECK_CU(cuGraphEventWaitNodeGetEvent(wait_node, &read));
    CHECK_EQ(read, other);

    CHECK_CU(cuGraphExecDestroy(producer_exec));
    CHECK_CU(cuGraphExecDestroy(consumer_exec));
    CHECK_CU(cuGraphDestroy(producer));
    CHECK_CU(cuGraphDestroy(consumer));
    CHECK_CU(cuEventDestroy(event));
    CHECK_CU(cuEventDestroy(other));
    for (CUstream s : {first, second, third}) CHECK_CU(cuStreamDestroy(s));
}

TEST_CASE("host nodes run their function when the replay reaches them, once per replay") {
    use_primary_context();
    RecordLog log;
    Kernel kernel(26400);  // 100 waves
    HostCalls calls;
    CUgraph graph = nullptr;
    CHECK_CU(cuGraphCreate(&graph, 0));
    CUgraphNode kernel_node = nullptr, host_node = nullptr;
    CHECK_CU(cuGraphAddKernelNode(&kernel_node, graph, nullptr, 0, &kernel.params));
    CUDA_HOST_NODE_PARAMS host{note_call, &calls};
    CHECK_CU(cuGraphAddHostNode(&host_node, graph, &kernel_node, 1, &host));
    CUDA_HOST_NODE_PARAMS no_function{nullptr, &calls};
    CUgraphNode bad = nullptr;
    CHECK_EQ(cuGraphAddHostNode(&bad, graph, nullptr, 0, &no_function), CUDA_ERROR_INVALID_VALUE);
    CUgraphNodeType type{};
    CHECK_CU(cuGraphNodeGetType(host_node, &type));
    CHECK_EQ(type, CU_GRAPH_NODE_TYPE_HOST);
    CUDA_HOST_NODE_PARAMS read{};
    CHECK_CU(cuGraphHostNodeGetParams(host_node, &read));
    CHECK_UNARY(read.fn == host.fn);
    CHECK_EQ(read.userData, &calls);

    CUgraphExec exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuStreamSynchronize(stream));  // waits for host functions too
    CHECK_EQ(calls.calls.load(), 2);
    const auto kernels = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(kernels.size(), 2u);
    CHECK_GE(calls.last_ns.load(), kernels[1].end_ns);  // after the second replay's kernel

    // The executable's copy takes another function; the graph's node keeps its own.
    CUDA_HOST_NODE_PARAMS other{note_other, &calls};
    CHECK_CU(cuGraphExecHostNodeSetParams(exec, host_node, &other));
    CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuStreamSynchronize(stream));
    CHECK_EQ(calls.calls.load(), 102);
    CHECK_CU(cuGraphHostNodeGetParams(host_node, &read));
    CHECK_UNARY(read.fn == host.fn);
    CHECK_CU(cuGraphExecDestroy(exec));
    CHECK_CU(cuGraphDestroy(graph));
    CHECK_CU(cuStreamDestroy(stream));
}

TEST_CASE("a child graph node replays a clone of its graph in place, in the parent's replay") {
    use_primary_context();
    RecordLog log;
    Kernel first(2), second(3), last(5), added(7), ignored(11);
    CUgraph child = nullptr, parent = nullptr;
    CHECK_CU(cuGraphCreate(&child, 0));
    CUgraphNode a = nullptr, b = nullptr;
    CHECK_CU(cuGraphAddKernelNode(&a, child, nullptr, 0, &first.params));
    CHECK_CU(cuGraphAddKernelNode(&b, child, &a, 1, &second.params));

    CHECK_CU(cuGraphCreate(&parent, 0));
    CUgraphNode set_node = nullptr, child_node = nullptr, last_node = nullptr;
    const CUDA_MEMSET_NODE_PARAMS set = memset_params(first.y, 9, 64);
    CHECK_CU(cuGraphAddMemsetNode(&set_node, parent, nullptr, 0, &set, nullptr));
    CHECK_CU(cuGraphAddChildGraphNode(&child_node, parent, &set_node, 1, child));
    CHECK_CU(cuGraphAddKernelNode(&last_node, parent, &child_node, 1, &last.params));
    CUgraphNode bad = nullptr;
    CHECK_EQ(cuGraphAddChildGraphNode(&bad, parent, nullptr, 0, parent), CUDA_ERROR_INVALID_VALUE);
    CUgraphNodeType type{};
    CHECK_CU(cuGraphNodeGetType(child_node, &type));
    CHECK_EQ(type, CU_GRAPH_NODE_TYPE_GRAPH);

    // The node holds a clone: a node added to `child` now does not reach it; one added to the
    // embedded graph does.
    CUgraphNode late = nullptr;
    CHECK_CU(cuGraphAddKernelNode(&late, child, &b, 1, &ignored.params));
    CUgraph embedded = nullptr;
    CHECK_CU(cuGraphChildGraphNodeGetGraph(child_node, &embedded));
    REQUIRE(embedded != nullptr);
    CHECK_NE(embedded, child);
    size_t count = 0;
    CHECK_CU(cuGraphGetNodes(embedded, nullptr, &count));
    CHECK_EQ(count, 2u);
    CUgraphNode embedded_nodes[2] = {};
    CHECK_CU(cuGraphGetNodes(embedded, embedded_nodes, &count));
    CHECK_CU(cuGraphAddKernelNode(&late, embedded, &embedded_nodes[1], 1, &added.params));
    CHECK_EQ(cuGraphDestroy(embedded), CUDA_ERROR_INVALID_VALUE);  // it goes with its node

    CUgraphExec exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&exec, parent, 0));
    CHECK_CU(cuGraphDestroy(child));  // the parent's clone is independent of it
    CHECK_CU(cuGraphLaunch(exec, nullptr));
    CHECK_CU(cuCtxSynchronize());
    const auto kernels = log.records(TBDSIM_RECORD_KERNEL);
    const auto sets = log.records(TBDSIM_RECORD_MEMSET);
    REQUIRE_EQ(kernels.size(), 4u);
    REQUIRE_EQ(sets.size(), 1u);
    const unsigned want[] = {2, 3, 7, 5};  // memset, the child's three kernels in place, then the last
    uint64_t previous_end = sets[0].end_ns;
    for (size_t i = 0; i < 4; ++i) {
        CHECK_EQ(kernels[i].grid[0], want[i]);
        CHECK_GE(kernels[i].start_ns, previous_end);
        previous_end = kernels[i].end_ns;
        // One replay: one correlation id and graph id, each node its own id.
        CHECK_EQ(kernels[i].correlation_id, sets[0].correlation_id);
        CHECK_EQ(kernels[i].graph_id, sets[0].graph_id);
        CHECK_NE(kernels[i].graph_node_id, sets[0].graph_node_id);
    }
    // The executable's child graph part takes another graph of the same shape (three kernels in a chain).
    Kernel x(13), y(17), z(19);
    CUgraph replacement = nullptr;
    CUgraphNode r1 = nullptr, r2 = nullptr, r3 = nullptr;
    CHECK_CU(cuGraphCreate(&replacement, 0));
    CHECK_CU(cuGraphAddKernelNode(&r1, replacement, nullptr, 0, &x.params));
    CHECK_CU(cuGraphAddKernelNode(&r2, replacement, &r1, 1, &y.params));
    CHECK_EQ(cuGraphExecChildGraphNodeSetParams(exec, child_node, replacement), CUDA_ERROR_INVALID_VALUE);  // 2 nodes
    CHECK_CU(cuGraphAddKernelNode(&r3, replacement, &r2, 1, &z.params));
    CHECK_EQ(cuGraphExecChildGraphNodeSetParams(exec, last_node, replacement),
             CUDA_ERROR_INVALID_VALUE);  // not a child node
    CHECK_CU(cuGraphExecChildGraphNodeSetParams(exec, child_node, replacement));
    CHECK_CU(cuGraphLaunch(exec, nullptr));
    CHECK_CU(cuCtxSynchronize());
    const auto again = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(again.size(), 8u);
    const unsigned replaced[] = {13, 17, 19, 5};
    for (size_t i = 0; i < 4; ++i) {
        CHECK_EQ(again[4 + i].grid[0], replaced[i]);
        CHECK_EQ(again[4 + i].graph_node_id, kernels[i].graph_node_id);  // the executable's nodes, updated
    }
    CHECK_CU(cuGraphDestroy(replacement));
    CHECK_CU(cuGraphExecDestroy(exec));
    CHECK_CU(cuGraphDestroy(parent));
    CHECK_EQ(cuGraphGetNodes(embedded, nullptr, &count), CUDA_ERROR_INVALID_VALUE);  // gone with its parent
}

TEST_CASE("cuGraphExecUpdate takes the parameters of a graph of the same topology, and refuses others") {
    use_primary_context();
    RecordLog log;
    Kernel small(10), big(20);
    CUdeviceptr memory = 0;
    CHECK_CU(cuMemAlloc(&memory, 256));
    auto build = [&](Kernel& kernel, unsigned value, bool edge) {
        CUgraph g = nullptr;
        CHECK_CU(cuGraphCreate(&g, 0));
        CUgraphNode k = nullptr, s = nullptr;
        CHECK_CU(cuGraphAddKernelNode(&k, g, nullptr, 0, &kernel.params));
        const CUDA_MEMSET_NODE_PARAMS set = memset_params(memory, value, 256);
        CHECK_CU(cuGraphAddMemsetNode(&s, g, edge ? &k : nullptr, edge ? 1 : 0, &set, nullptr));
        return g;
    };
    CUgraph original = build(small, 1, true);
    CUgraphExec exec = nullptr;
    CHECK_CU(cuGraphInstantiateWithFlags(&exec, original, 0));
    CHECK_CU(cuGraphLaunch(exec, nullptr));
    CHECK_CU(cuCtxSynchronize());

    // Same topology, new grid and value: later replays use them, under the same node ids.
    CUgraph same_shape = build(big, 2, true);
    CUgraphExecUpdateResultInfo info{};
    CHECK_CU(cuGraphExecUpdate(exec, same_shape, &info));
    CHECK_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
    CHECK_CU(cuGraphLaunch(exec, nullptr));
    CHECK_CU(cuCtxSynchronize());
    const auto kernels = log.records(TBDSIM_RECORD_KERNEL);
    const auto sets = log.records(TBDSIM_RECORD_MEMSET);
    REQUIRE_EQ(kernels.size(), 2u);
    REQUIRE_EQ(sets.size(), 2u);
    CHECK_EQ(kernels[0].grid[0], 10u);
    CHECK_EQ(kernels[1].grid[0], 20u);
    CHECK_EQ(sets[1].memset_value, 2u);
    CHECK_EQ(kernels[1].graph_node_id, kernels[0].graph_node_id);
    CHECK_EQ(sets[1].graph_node_id, sets[0].graph_node_id);
    std::vector<unsigned char> bytes(256);
    CHECK_CU(cuMemcpyDtoH(bytes.data(), memory, bytes.size()));
    CHECK_EQ(bytes[0], 2);
    CHECK_EQ(bytes[255], 2);

    // A missing edge: the topology changed, at the node whose dependencies differ.
    CUgraph no_edge = build(big, 3, false);
    CHECK_EQ(cuGraphExecUpdate(exec, no_edge, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    size_t count = 2;
    CUgraphNode nodes[2] = {};
    CHECK_CU(cuGraphGetNodes(no_edge, nodes, &count));
    CHECK_EQ(info.errorNode, nodes[1]);
    // Another node count: the topology changed, no node named.
    CUgraph more = build(big, 3, true);
    CUgraphNode extra = nullptr;
    CHECK_CU(cuGraphAddEmptyNode(&extra, more, nullptr, 0));
    CHECK_EQ(cuGraphExecUpdate(exec, more, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    CHECK_EQ(info.errorNode, nullptr);
    // A node of another type where the memset was.
    CUgraph retyped = nullptr;
    CHECK_CU(cuGraphCreate(&retyped, 0));
    CUgraphNode k = nullptr, e = nullptr;
    CHECK_CU(cuGraphAddKernelNode(&k, retyped, nullptr, 0, &big.params));
    CHECK_CU(cuGraphAddEmptyNode(&e, retyped, &k, 1));
    CUgraphNode error_node = nullptr;
    CUgraphExecUpdateResult result{};
    CHECK_EQ(cuGraphExecUpdate(exec, retyped, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
    CHECK_EQ(info.errorNode, e);
    // The CUDA 11 form says the same through its two outputs.
    using Legacy = CUresult (*)(CUgraphExec, CUgraph, CUgraphNode*, CUgraphExecUpdateResult*);
    auto legacy = reinterpret_cast<Legacy>(own_symbol("cuGraphExecUpdate"));
    REQUIRE_UNARY(legacy != nullptr);
    CHECK_EQ(legacy(exec, retyped, &error_node, &result), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK_EQ(result, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
    CHECK_EQ(error_node, e);
    CHECK_EQ(cuGraphExecUpdate(exec, nullptr, &info), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR);
    // The refused updates changed nothing.
    CHECK_CU(cuGraphLaunch(exec, nullptr));
    CHECK_CU(cuCtxSynchronize());
    CHECK_EQ(log.records(TBDSIM_RECORD_KERNEL).back().grid[0], 20u);
    CHECK_EQ(log.records(TBDSIM_RECORD_MEMSET).back().memset_value, 2u);

    CHECK_CU(cuGraphExecDestroy(exec));
    for (CUgraph g : {original, same_shape, no_edge, more, retyped}) CHECK_CU(cuGraphDestroy(g));
    CHECK_CU(cuMemFree(memory));
}
