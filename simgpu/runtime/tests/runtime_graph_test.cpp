// Stream capture and graphs through the simulated libcudart.so.13: capture of sets and copies,
// replays, capture info, and the calls capture makes illegal, with the runtime's error codes.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
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
