// Stream capture and graphs through the simulated libcudart.so.13: capture of sets and copies,
// replays, capture info, and the calls capture makes illegal, with the runtime's error codes.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

extern "C" {
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
}

namespace {
std::vector<uint8_t> read(const void* device, size_t bytes) {
    std::vector<uint8_t> host(bytes);
    REQUIRE(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    return host;
}
}  // namespace

TEST_CASE("a captured set and copy run once per replay, not at capture") {
    uint8_t* a = nullptr;
    uint8_t* b = nullptr;
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&a), 4096) == cudaSuccess);
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&b), 4096) == cudaSuccess);
    REQUIRE(cudaMemset(a, 0, 4096) == cudaSuccess);
    REQUIRE(cudaMemset(b, 0, 4096) == cudaSuccess);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);

    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CHECK(cudaStreamIsCapturing(stream, &status) == cudaSuccess);
    CHECK(status == cudaStreamCaptureStatusActive);
    CHECK(cudaMemsetAsync(a, 5, 4096, stream) == cudaSuccess);
    CHECK(cudaMemcpyAsync(b, a, 2048, cudaMemcpyDeviceToDevice, stream) == cudaSuccess);
    unsigned long long id = 0;
    cudaGraph_t during = nullptr;
    size_t dependencies = 0;
    CHECK(cudaStreamGetCaptureInfo(stream, &status, &id, &during, nullptr, nullptr, &dependencies) == cudaSuccess);
    CHECK(id != 0);
    CHECK(dependencies == 1);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
    CHECK(graph == during);
    CHECK(read(a, 1)[0] == 0);  // captured, not run

    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess);
    CHECK(nodes == 2);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(exec, stream) == cudaSuccess);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(read(a, 1)[0] == 5);
    const auto copied = read(b, 4096);
    CHECK(copied[2047] == 5);
    CHECK(copied[2048] == 0);
    CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
    CHECK(cudaGraphDestroy(graph) == cudaSuccess);
    CHECK(cudaGraphDestroy(graph) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(cudaFree(a) == cudaSuccess);
    CHECK(cudaFree(b) == cudaSuccess);
}

TEST_CASE("illegal calls during capture return the runtime's capture errors") {
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    void* p = nullptr;
    cudaGraph_t graph = nullptr;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;

    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    CHECK(cudaMalloc(&p, 64) == cudaErrorStreamCaptureUnsupported);
    CHECK(cudaStreamIsCapturing(stream, &status) == cudaSuccess);
    CHECK(status == cudaStreamCaptureStatusInvalidated);
    CHECK(cudaStreamEndCapture(stream, &graph) == cudaErrorStreamCaptureInvalidated);
    CHECK(graph == nullptr);

    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess);
    CHECK(cudaMalloc(&p, 64) == cudaSuccess);  // relaxed: allowed
    CHECK(cudaStreamSynchronize(stream) == cudaErrorStreamCaptureUnsupported);
    CHECK(cudaMemsetAsync(p, 0, 64, stream) == cudaErrorStreamCaptureInvalidated);
    CHECK(cudaStreamEndCapture(stream, &graph) == cudaErrorStreamCaptureInvalidated);
    CHECK(cudaFree(p) == cudaSuccess);

    CHECK(cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
    CHECK(cudaStreamEndCapture(stream, &graph) == cudaErrorIllegalState);
    cudaGetLastError();
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("the per-thread default stream captures and replays through the _ptsz entry points") {
    uint8_t* a = nullptr;
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&a), 256) == cudaSuccess);
    REQUIRE(cudaMemset(a, 0, 256) == cudaSuccess);
    REQUIRE(cudaStreamBeginCapture_ptsz(nullptr, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    CHECK(cudaMemsetAsync_ptsz(a, 3, 256, nullptr) == cudaSuccess);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamEndCapture_ptsz(nullptr, &graph) == cudaSuccess);
    CHECK(read(a, 1)[0] == 0);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiateWithFlags(&exec, graph, 0) == cudaSuccess);
    CHECK(cudaGraphLaunch_ptsz(exec, nullptr) == cudaSuccess);
    CHECK(cudaStreamSynchronize_ptsz(nullptr) == cudaSuccess);
    CHECK(read(a, 1)[0] == 3);
    CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
    CHECK(cudaGraphDestroy(graph) == cudaSuccess);
    CHECK(cudaFree(a) == cudaSuccess);
}

TEST_CASE("captured cudaMallocAsync and cudaFreeAsync become graph memory nodes; hand-built ones too") {
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
    void* p = nullptr;
    CHECK(cudaMallocAsync(&p, 8192, stream) == cudaSuccess);
    CHECK(cudaMemsetAsync(p, 0x11, 8192, stream) == cudaSuccess);
    CHECK(cudaFreeAsync(p, stream) == cudaSuccess);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
    size_t count = 0;
    REQUIRE(cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess);
    REQUIRE(count == 3);
    std::vector<cudaGraphNode_t> nodes(count);
    REQUIRE(cudaGraphGetNodes(graph, nodes.data(), &count) == cudaSuccess);
    cudaGraphNodeType type{};
    CHECK(cudaGraphNodeGetType(nodes[0], &type) == cudaSuccess);
    CHECK(type == cudaGraphNodeTypeMemAlloc);
    cudaMemAllocNodeParams params{};
    CHECK(cudaGraphMemAllocNodeGetParams(nodes[0], &params) == cudaSuccess);
    CHECK(params.dptr == p);
    CHECK(params.bytesize == 8192);
    void* freed = nullptr;
    CHECK(cudaGraphMemFreeNodeGetParams(nodes[2], &freed) == cudaSuccess);
    CHECK(freed == p);

    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch) == cudaSuccess);
    cudaGraphExec_t second = nullptr;
    CHECK(cudaGraphInstantiate(&second, graph, 0) == cudaErrorInvalidValue);  // one at a time
    for (int i = 0; i < 2; ++i) CHECK(cudaGraphLaunch(exec, stream) == cudaSuccess);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    uint64_t used = 1, high = 0, reserved = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used) == cudaSuccess);
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &high) == cudaSuccess);
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved) == cudaSuccess);
    CHECK(used == 0);
    CHECK(high == 8192);
    CHECK(reserved == 8192);
    CHECK(cudaDeviceGraphMemTrim(0) == cudaSuccess);
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved) == cudaSuccess);
    CHECK(reserved == 0);
    uint64_t zero = 0;
    CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero) == cudaSuccess);
    CHECK(cudaDeviceGraphMemTrim(12345) == cudaErrorInvalidDevice);

    // By hand: an allocation the graph leaves live, freed afterwards by cudaFree.
    cudaGraph_t built = nullptr;
    REQUIRE(cudaGraphCreate(&built, 0) == cudaSuccess);
    cudaMemAllocNodeParams alloc{};
    alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    alloc.poolProps.location.type = cudaMemLocationTypeDevice;
    alloc.poolProps.location.id = 0;
    alloc.bytesize = 4096;
    cudaGraphNode_t node = nullptr;
    REQUIRE(cudaGraphAddMemAllocNode(&node, built, nullptr, 0, &alloc) == cudaSuccess);
    REQUIRE(alloc.dptr != nullptr);
    cudaGraphNode_t free_node = nullptr;
    CHECK(cudaGraphAddMemFreeNode(&free_node, built, &node, 1, static_cast<char*>(alloc.dptr) + 1) ==
          cudaErrorInvalidValue);
    cudaGraphExec_t built_exec = nullptr;
    REQUIRE(cudaGraphInstantiateWithFlags(&built_exec, built, 0) == cudaSuccess);
    CHECK(cudaGraphLaunch(built_exec, stream) == cudaSuccess);
    CHECK(cudaGraphLaunch(built_exec, stream) == cudaErrorInvalidValue);  // still live
    CHECK(cudaFree(alloc.dptr) == cudaSuccess);
    CHECK(cudaGraphLaunch(built_exec, stream) == cudaSuccess);
    CHECK(cudaFreeAsync(alloc.dptr, stream) == cudaSuccess);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);

    CHECK(cudaGraphExecDestroy(built_exec) == cudaSuccess);
    CHECK(cudaGraphDestroy(built) == cudaSuccess);
    CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
    CHECK(cudaGraphDestroy(graph) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
