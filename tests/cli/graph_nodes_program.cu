// CUDA graphs built by hand through the runtime, with the node kinds programs use to order and call:
// a child graph (two long kernels), an event record node after it and, in a second graph on another
// stream, an event wait node before a kernel that must follow them; a host node counting replays; and
// cudaGraphExecUpdate giving the first executable a graph of the same shape whose first kernel has
// another grid. (No memset or memcpy node: the trace cannot give their addresses for graphs built by
// hand, see docs/collector.md.) Used by tests/cli/record_graph_nodes.sh.
//
//   graph_nodes_program REPLAYS
// Prints "host calls: N"; exits 1 on any error.
//   graph_nodes_program --capture-update
// Captures scale(a) into one graph and scale(b) into another (a of 1 MiB, b of 2 MiB), replays an
// executable of the first, updates it to the second (cudaGraphExecUpdate) and replays it again.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        cudaError_t err_ = (call);                                                                       \
        if (err_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "graph_nodes_program: %s failed: %s\n", #call, cudaGetErrorName(err_)); \
            return 1;                                                                                    \
        }                                                                                                \
    } while (0)

__global__ void scale(float* x, int n, float factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}

__global__ void add(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

namespace {

std::atomic<int> g_host_calls{0};
void CUDART_CB count_call(void*) {
    ++g_host_calls;
}

cudaKernelNodeParams kernel_params(const void* function, unsigned blocks, void** args) {
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(function);
    p.gridDim = dim3(blocks);
    p.blockDim = dim3(1024);
    p.kernelParams = args;
    return p;
}

}  // namespace

int capture_update() {
    float *a = nullptr, *b = nullptr;
    int n = 1 << 18;
    CHECK(cudaMalloc(&a, 1 << 20));
    CHECK(cudaMalloc(&b, 2 << 20));
    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graphs[2] = {};
    float* targets[2] = {a, b};
    for (int i = 0; i < 2; ++i) {
        CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        scale<<<n / 1024, 1024, 0, stream>>>(targets[i], n, 2.0f);
        CHECK(cudaStreamEndCapture(stream, &graphs[i]));
    }
    cudaGraphExec_t exec = nullptr;
    CHECK(cudaGraphInstantiate(&exec, graphs[0], 0));
    CHECK(cudaGraphLaunch(exec, stream));
    cudaGraphExecUpdateResultInfo info{};
    CHECK(cudaGraphExecUpdate(exec, graphs[1], &info));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGraphExecDestroy(exec));
    for (cudaGraph_t g : graphs) CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--capture-update") return capture_update();
    const int replays = argc > 1 ? std::atoi(argv[1]) : 3;
    const int n = 1 << 20;
    float *a = nullptr, *b = nullptr, *out = nullptr;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    float two = 2.0f, half = 0.5f;
    int count = n;
    void* scale_a[] = {&a, &count, &two};
    void* scale_b[] = {&b, &count, &half};
    void* add_args[] = {&a, &b, &out, &count};
    // 264000 blocks of 1024 threads: 1000 waves on the simulated H100, 0.6 ms each kernel.
    const cudaKernelNodeParams long_a = kernel_params(reinterpret_cast<const void*>(scale), 264000, scale_a);
    const cudaKernelNodeParams long_b = kernel_params(reinterpret_cast<const void*>(scale), 264000, scale_b);
    const cudaKernelNodeParams sum = kernel_params(reinterpret_cast<const void*>(add), 1024, add_args);

    cudaGraph_t child = nullptr;
    cudaGraphNode_t first = nullptr, second = nullptr;
    CHECK(cudaGraphCreate(&child, 0));
    CHECK(cudaGraphAddKernelNode(&first, child, nullptr, 0, &long_a));
    CHECK(cudaGraphAddKernelNode(&second, child, &first, 1, &long_b));

    cudaEvent_t done = nullptr;
    CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    // producer: a small kernel -> child graph -> (event record, host node)
    void* mark_args[] = {&out, &count, &two};
    auto build_producer = [&](cudaGraph_t* graph, unsigned blocks) -> cudaError_t {
        cudaGraphNode_t mark = nullptr, nested = nullptr, record = nullptr, host = nullptr;
        const cudaKernelNodeParams marking = kernel_params(reinterpret_cast<const void*>(scale), blocks, mark_args);
        const cudaHostNodeParams counting{count_call, nullptr};
        cudaError_t e = cudaGraphCreate(graph, 0);
        if (e == cudaSuccess) e = cudaGraphAddKernelNode(&mark, *graph, nullptr, 0, &marking);
        if (e == cudaSuccess) e = cudaGraphAddChildGraphNode(&nested, *graph, &mark, 1, child);
        if (e == cudaSuccess) e = cudaGraphAddEventRecordNode(&record, *graph, &nested, 1, done);
        if (e == cudaSuccess) e = cudaGraphAddHostNode(&host, *graph, &nested, 1, &counting);
        return e;
    };
    cudaGraph_t producer = nullptr, consumer = nullptr, updated = nullptr;
    CHECK(build_producer(&producer, 4));
    cudaGraphNode_t wait = nullptr, last = nullptr;
    CHECK(cudaGraphCreate(&consumer, 0));
    CHECK(cudaGraphAddEventWaitNode(&wait, consumer, nullptr, 0, done));
    CHECK(cudaGraphAddKernelNode(&last, consumer, &wait, 1, &sum));
    cudaGraphNodeType type{};
    CHECK(cudaGraphNodeGetType(wait, &type));
    if (type != cudaGraphNodeTypeWaitEvent) return 1;

    cudaGraphExec_t producer_exec = nullptr, consumer_exec = nullptr;
    CHECK(cudaGraphInstantiate(&producer_exec, producer, 0));
    CHECK(cudaGraphInstantiate(&consumer_exec, consumer, 0));
    cudaStream_t s1 = nullptr, s2 = nullptr;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    for (int i = 0; i < replays; ++i) {
        CHECK(cudaGraphLaunch(producer_exec, s1));
        CHECK(cudaGraphLaunch(consumer_exec, s2));
    }
    // The same shape, another grid for the first kernel: the executable takes it.
    CHECK(build_producer(&updated, 8));
    cudaGraphExecUpdateResultInfo info{};
    CHECK(cudaGraphExecUpdate(producer_exec, updated, &info));
    if (info.result != cudaGraphExecUpdateSuccess) return 1;
    CHECK(cudaGraphLaunch(producer_exec, s1));
    CHECK(cudaGraphLaunch(consumer_exec, s2));
    CHECK(cudaDeviceSynchronize());
    std::printf("host calls: %d\n", g_host_calls.load());

    CHECK(cudaGraphExecDestroy(producer_exec));
    CHECK(cudaGraphExecDestroy(consumer_exec));
    for (cudaGraph_t g : {producer, consumer, updated, child}) CHECK(cudaGraphDestroy(g));
    CHECK(cudaEventDestroy(done));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(out));
    return 0;
}
