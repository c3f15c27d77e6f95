// CUDA graphs the way PyTorch's CUDA graphs and inference servers use them: a few kernels with pointer
// arguments into device memory and a memset are captured from a stream into a graph, which is then
// replayed N times, with an ordinary kernel launched on the same thread and stream between replays.
// The captured calls do not run; each replay runs every node once. Used by tests/cli/record_graph.sh.
//
//   graph_replay [--replays N]     (default 5)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define GRAPH_CHECK(call)                                                                         \
    do {                                                                                          \
        cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "graph_replay: %s failed: %s\n", #call, cudaGetErrorName(err_)); \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)

__global__ void fill(float* x, int n, float value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}

__global__ void scale(float* x, int n, float factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}

__global__ void add(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
    int replays = 5;
    if (argc == 3 && std::strcmp(argv[1], "--replays") == 0) {
        replays = std::atoi(argv[2]);
    } else if (argc != 1) {
        std::fprintf(stderr, "graph_replay: error: usage: graph_replay [--replays N]\n");
        return 2;
    }
    if (replays < 1) {
        std::fprintf(stderr, "graph_replay: error: --replays must be at least 1\n");
        return 2;
    }
    constexpr int kCount = 1 << 16;
    constexpr int kThreads = 256;
    constexpr int kBlocks = (kCount + kThreads - 1) / kThreads;
    float *a = nullptr, *b = nullptr, *out = nullptr;
    GRAPH_CHECK(cudaMalloc(&a, kCount * sizeof(float)));
    GRAPH_CHECK(cudaMalloc(&b, kCount * sizeof(float)));
    GRAPH_CHECK(cudaMalloc(&out, kCount * sizeof(float)));
    cudaStream_t stream = nullptr;
    GRAPH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    fill<<<kBlocks, kThreads, 0, stream>>>(a, kCount, 1.0f);
    GRAPH_CHECK(cudaGetLastError());

    // Captured: three kernels and a memset, in this order.
    GRAPH_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    scale<<<kBlocks, kThreads, 0, stream>>>(a, kCount, 2.0f);
    add<<<kBlocks, kThreads, 0, stream>>>(a, b, out, kCount);
    GRAPH_CHECK(cudaMemsetAsync(b, 0, kCount * sizeof(float), stream));
    scale<<<kBlocks / 2, kThreads, 0, stream>>>(out, kCount / 2, 0.5f);
    cudaGraph_t graph = nullptr;
    GRAPH_CHECK(cudaStreamEndCapture(stream, &graph));
    size_t nodes = 0;
    GRAPH_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    cudaGraphExec_t exec = nullptr;
    GRAPH_CHECK(cudaGraphInstantiate(&exec, graph, 0));

    for (int i = 0; i < replays; ++i) {
        GRAPH_CHECK(cudaGraphLaunch(exec, stream));
        fill<<<kBlocks, kThreads, 0, stream>>>(b, kCount, float(i));  // an ordinary launch in between
        GRAPH_CHECK(cudaGetLastError());
    }
    GRAPH_CHECK(cudaStreamSynchronize(stream));
    GRAPH_CHECK(cudaGraphExecDestroy(exec));
    GRAPH_CHECK(cudaGraphDestroy(graph));
    GRAPH_CHECK(cudaStreamDestroy(stream));
    GRAPH_CHECK(cudaFree(a));
    GRAPH_CHECK(cudaFree(b));
    GRAPH_CHECK(cudaFree(out));
    std::printf("graph_replay: %zu nodes, %d replays\n", nodes, replays);
    return 0;
}
