// CUDA graphs made by stream capture: what capture records instead of running, what a replay runs
// (records, memory, correlation and graph ids, truth lines), the calls capture makes illegal, and the
// entry points cuGetProcAddress hands out.
#include "driver_test_support.h"

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

// Arguments live only in this call: a captured launch must have copied them.
CUresult launch_axpy(CUstream stream, CUdeviceptr x, CUdeviceptr y, unsigned blocks) {
    float a = 2;
    int n = 256;
    void* params[] = {&a, &x, &y, &n};
    return cuLaunchKernel(axpy_function(), blocks, 1, 1, 256, 1, 1, 0, stream, params, nullptr);
}

struct Buffers {
    CUdeviceptr x = 0, y = 0;
    Buffers() {
        CHECK_CU(cuMemAlloc(&x, 1024));
        CHECK_CU(cuMemAlloc(&y, 1024));
    }
    ~Buffers() {
        cuMemFree(x);
        cuMemFree(y);
    }
};

uint8_t byte_at(CUdeviceptr p) {
    uint8_t b = 0;
    REQUIRE_EQ(cuMemcpyDtoH(&b, p, 1), CUDA_SUCCESS);
    return b;
}

void* proc(const char* name, int version, cuuint64_t flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status{};
    REQUIRE_EQ(cuGetProcAddress_v2(name, &p, version, flags, &status), CUDA_SUCCESS);
    return p;
}

}  // namespace

TEST_CASE("capture records kernels, a set and a copy as nodes; each replay runs them in order") {
    use_primary_context();
    Buffers b;
    CHECK_CU(cuMemsetD8(b.x, 7, 1024));
    CHECK_CU(cuMemsetD8(b.y, 1, 1024));
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    RecordLog log;

    CHECK_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus status{};
    CHECK_CU(cuStreamIsCapturing(stream, &status));
    CHECK_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CHECK_CU(launch_axpy(stream, b.x, b.y, 4));
    CHECK_CU(cuMemsetD8Async(b.y, 9, 512, stream));
    CHECK_CU(cuMemcpyDtoDAsync(b.y + 512, b.x, 512, stream));
    CHECK_CU(launch_axpy(stream, b.y, b.x, 8));
    cuuint64_t id = 0;
    CUgraph graph_info = nullptr;
    const CUgraphNode* deps = nullptr;
    size_t dep_count = 0;
    CHECK_CU(cuStreamGetCaptureInfo(stream, &status, &id, &graph_info, &deps, nullptr, &dep_count));
    CHECK_NE(id, 0u);
    CHECK_EQ(dep_count, 1u);
    // The dependency array is valid only until the capture ends (as documented for the real driver).
    const CUgraphNode last_node = dep_count > 0 ? deps[0] : nullptr;
    CUgraph graph = nullptr;
    CHECK_CU(cuStreamEndCapture(stream, &graph));
    CHECK_EQ(graph, graph_info);
    CHECK_CU(cuStreamIsCapturing(stream, &status));
    CHECK_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
    // Nothing ran: no records, memory untouched.
    CHECK(log.records(TBDSIM_RECORD_KERNEL).empty());
    CHECK(log.records(TBDSIM_RECORD_MEMSET).empty());
    CHECK_EQ(byte_at(b.y), 1);

    size_t count = 0;
    CHECK_CU(cuGraphGetNodes(graph, nullptr, &count));
    CHECK_EQ(count, 4u);
    CUgraphNode nodes[6];
    count = 6;
    CHECK_CU(cuGraphGetNodes(graph, nodes, &count));
    CHECK_EQ(count, 4u);
    CHECK_EQ(nodes[3], last_node);
    CHECK_EQ(nodes[4], nullptr);

    CUgraphExec exec = nullptr;
    CHECK_CU(cuGraphInstantiate(&exec, graph, 0));
    CHECK_CU(cuGraphDestroy(graph));  // the executable graph keeps working without it
    for (int replay = 0; replay < 3; ++replay) CHECK_CU(cuGraphLaunch(exec, stream));
    CHECK_CU(cuStreamSynchronize(stream));
    CHECK_EQ(byte_at(b.y), 9);        // the set ran
    CHECK_EQ(byte_at(b.y + 512), 7);  // the copy ran

    const auto kernels = log.records(TBDSIM_RECORD_KERNEL);
    const auto sets = log.records(TBDSIM_RECORD_MEMSET);
    std::vector<TbdsimRecord> copies;  // the replays' (the test's own reads are copies too)
    for (const TbdsimRecord& r : log.records(TBDSIM_RECORD_MEMCPY))
        if (r.graph_id != 0) copies.push_back(r);
    REQUIRE_EQ(kernels.size(), 6u);
    REQUIRE_EQ(sets.size(), 3u);
    REQUIRE_EQ(copies.size(), 3u);
    for (int replay = 0; replay < 3; ++replay) {
        const TbdsimRecord& first = kernels[size_t(replay) * 2];
        const TbdsimRecord& second = kernels[size_t(replay) * 2 + 1];
        // One correlation id for everything a replay ran, a new one per replay.
        CHECK_EQ(first.correlation_id, second.correlation_id);
        CHECK_EQ(sets[size_t(replay)].correlation_id, first.correlation_id);
        CHECK_EQ(copies[size_t(replay)].correlation_id, first.correlation_id);
        if (replay > 0) CHECK_NE(first.correlation_id, kernels[size_t(replay) * 2 - 1].correlation_id);
        CHECK_NE(first.graph_id, 0u);
        CHECK_EQ(second.graph_id, first.graph_id);
        CHECK_NE(first.graph_node_id, second.graph_node_id);
        CHECK_EQ(first.grid[0], 4u);
        CHECK_EQ(second.grid[0], 8u);
        // Capture order on one stream: kernel, set, copy, kernel.
        CHECK_GE(sets[size_t(replay)].start_ns, first.end_ns);
        CHECK_GE(copies[size_t(replay)].start_ns, sets[size_t(replay)].end_ns);
        CHECK_GE(second.start_ns, copies[size_t(replay)].end_ns);
        CHECK_EQ(copies[size_t(replay)].sub_kind, uint32_t(TBDSIM_COPY_DTOD));
        CHECK_EQ(sets[size_t(replay)].bytes, 512u);
    }
    CHECK_EQ(kernels[2].graph_node_id, kernels[0].graph_node_id);  // the same node, replayed

    // The truth file gives replayed kernels two more fields: graph id and node id.
    std::ifstream truth(truth_path());
    std::string line;
    int graph_lines = 0;
    while (std::getline(truth, line)) {
        if (line.rfind("kernel\t", 0) != 0) continue;
        std::vector<std::string> f;
        std::stringstream in(line);
        for (std::string field; std::getline(in, field, '\t');) f.push_back(field);
        if (f.size() == 14 && std::stoul(f[2]) == kernels[0].correlation_id) {
            CHECK_EQ(std::stoul(f[12]), kernels[0].graph_id);
            ++graph_lines;
        }
    }
    CHECK_EQ(graph_lines, 2);
    CHECK_CU(cuGraphExecDestroy(exec));
    CHECK_EQ(cuGraphLaunch(exec, stream), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuStreamDestroy(stream));
}

TEST_CASE("waiting for a capturing stream invalidates the capture") {
    use_primary_context();
    Buffers b;
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK_EQ(cuStreamBeginCapture(nullptr, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUgraph graph = nullptr;
    CHECK_EQ(cuStreamEndCapture(stream, &graph), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
    CHECK_CU(launch_axpy(stream, b.x, b.y, 1));
    CHECK_EQ(cuStreamSynchronize(stream), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUstreamCaptureStatus status{};
    CHECK_CU(cuStreamIsCapturing(stream, &status));
    CHECK_EQ(status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CHECK_EQ(launch_axpy(stream, b.x, b.y, 1), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK_EQ(cuMemsetD8Async(b.x, 0, 16, stream), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK_EQ(cuStreamEndCapture(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK_EQ(graph, nullptr);
    CHECK_CU(cuStreamSynchronize(stream));  // usable again
    CHECK_CU(cuStreamDestroy(stream));
}

TEST_CASE("capture modes decide whether cuMemAlloc is legal during capture") {
    use_primary_context();
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUdeviceptr p = 0;
    CUgraph graph = nullptr;
    CUstreamCaptureStatus status{};

    // Global (the default): an allocation is "potentially unsafe" and invalidates the capture.
    CHECK_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK_EQ(cuMemAlloc(&p, 256), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK_CU(cuStreamIsCapturing(stream, &status));
    CHECK_EQ(status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CHECK_EQ(cuStreamEndCapture(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

    // Relaxed capture: allowed.
    CHECK_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED));
    CHECK_CU(cuMemAlloc(&p, 256));
    CHECK_CU(cuMemFree(p));
    CHECK_CU(cuStreamEndCapture(stream, &graph));
    CHECK_CU(cuGraphDestroy(graph));

    // A global capture on another thread prohibits it here, unless this thread's mode is relaxed.
    CHECK_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    std::thread other([&] {
        use_primary_context();
        CUdeviceptr q = 0;
        CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
        CHECK_CU(cuThreadExchangeStreamCaptureMode(&mode));
        CHECK_EQ(mode, CU_STREAM_CAPTURE_MODE_GLOBAL);
        CHECK_CU(cuMemAlloc(&q, 256));
        CHECK_CU(cuMemFree(q));
        // Ending a global-mode capture from another thread is refused.
        CUgraph g = nullptr;
        CHECK_EQ(cuStreamEndCapture(stream, &g), CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    });
    other.join();
    CHECK_CU(cuStreamIsCapturing(stream, &status));
    CHECK_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CHECK_CU(cuStreamEndCapture(stream, &graph));
    CHECK_CU(cuGraphDestroy(graph));
    CHECK_CU(cuStreamDestroy(stream));
}

TEST_CASE("the legacy stream cannot be used while a blocking stream captures") {
    use_primary_context();
    Buffers b;
    CUstream blocking = nullptr;
    CHECK_CU(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
    CHECK_CU(cuStreamBeginCapture(blocking, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CUstreamCaptureStatus status{};
    CHECK_EQ(cuStreamIsCapturing(nullptr, &status), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CHECK_EQ(launch_axpy(nullptr, b.x, b.y, 1), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CHECK_EQ(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUgraph graph = nullptr;
    CHECK_EQ(cuStreamEndCapture(blocking, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK_CU(launch_axpy(nullptr, b.x, b.y, 1));
    CHECK_CU(cuCtxSynchronize());
    CHECK_CU(cuStreamDestroy(blocking));
}

TEST_CASE("cuGetProcAddress hands out the graph entry points by version") {
    use_primary_context();
    CHECK_EQ(proc("cuStreamBeginCapture", 13000), own_symbol("cuStreamBeginCapture_v2"));
    CHECK_EQ(proc("cuStreamBeginCapture", 10000), own_symbol("cuStreamBeginCapture"));
    CHECK_EQ(proc("cuStreamBeginCapture", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
             own_symbol("cuStreamBeginCapture_v2_ptsz"));
    CHECK_EQ(proc("cuStreamGetCaptureInfo", 13000), own_symbol("cuStreamGetCaptureInfo_v3"));
    CHECK_EQ(proc("cuStreamGetCaptureInfo", 11030), own_symbol("cuStreamGetCaptureInfo_v2"));
    CHECK_EQ(proc("cuGraphInstantiate", 13000), own_symbol("cuGraphInstantiateWithFlags"));
    CHECK_EQ(proc("cuGraphInstantiate", 11000), own_symbol("cuGraphInstantiate_v2"));
    CHECK_EQ(proc("cuGraphLaunch", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
             own_symbol("cuGraphLaunch_ptsz"));
    for (const char* name : {"cuStreamEndCapture", "cuStreamIsCapturing", "cuGraphExecDestroy", "cuGraphDestroy",
                             "cuGraphGetNodes", "cuThreadExchangeStreamCaptureMode", "cuGraphUpload"})
        CHECK_EQ(proc(name, 13000), own_symbol(name));
}
