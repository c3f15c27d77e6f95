// A training-like loop that marks what it wants profiled, as programs do for Nsight Systems: each
// step allocates an activation buffer, copies a batch in, runs a forward and a backward kernel, sets
// the gradient, and frees the buffer; weights are allocated once before the loop. Steps 3-5 and 8
// are marked with cudaProfilerStart/Stop and, around the same steps, an NVTX range "capture_me";
// every step is inside an NVTX range "step". Used by tests/capture/ (docs/collector.md, Capture
// control) and by bench/collector/run_capture_benchmark.sh (--steps N --no-marks: a long loop).
//
//   profiler_window [--steps N] [--sleep-phases] [--no-marks] [--persistent]
//     --sleep-phases   three phases of 3 steps with 2 s of sleep between them; the middle phase
//                      (steps 3-5) is the one marked
//     --no-marks       no cudaProfilerStart/Stop and no NVTX ranges (only the kernel sequence)
//     --persistent     the activation buffer is allocated once, not per step (as under a caching
//                      allocator): a step is then 2 launches, a copy and a set
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#define WINDOW_CHECK(call)                                                                           \
    do {                                                                                             \
        cudaError_t err_ = (call);                                                                   \
        if (err_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "profiler_window: %s failed: %s\n", #call, cudaGetErrorName(err_)); \
            return 1;                                                                                \
        }                                                                                            \
    } while (0)

__global__ void forward(const float* weights, const float* batch, float* activations, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) activations[i] = weights[i] * batch[i];
}

__global__ void backward(const float* activations, float* gradients, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) gradients[i] += activations[i];
}

namespace {

bool marked(int step, bool sleep_phases) { return sleep_phases ? (step >= 3 && step <= 5) : ((step >= 3 && step <= 5) || step == 8); }

}  // namespace

int main(int argc, char** argv) {
    long steps = 10;
    bool sleep_phases = false, marks = true, persistent = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = std::atol(argv[++i]);
        } else if (std::strcmp(argv[i], "--sleep-phases") == 0) {
            sleep_phases = true;
        } else if (std::strcmp(argv[i], "--no-marks") == 0) {
            marks = false;
        } else if (std::strcmp(argv[i], "--persistent") == 0) {
            persistent = true;
        } else {
            std::fprintf(stderr, "profiler_window: error: usage: profiler_window [--steps N] [--sleep-phases] [--no-marks] [--persistent]\n");
            return 2;
        }
    }
    if (sleep_phases) steps = 9;
    if (steps < 1) {
        std::fprintf(stderr, "profiler_window: error: --steps must be at least 1\n");
        return 2;
    }
    constexpr int kCount = 1024;
    constexpr int kThreads = 256;
    const size_t bytes = kCount * sizeof(float);
    float host[kCount];
    for (int i = 0; i < kCount; ++i) host[i] = 1.0f;
    float *weights = nullptr, *gradients = nullptr, *batch = nullptr;
    WINDOW_CHECK(cudaMalloc(&weights, bytes));
    WINDOW_CHECK(cudaMalloc(&gradients, bytes));
    WINDOW_CHECK(cudaMalloc(&batch, bytes));
    WINDOW_CHECK(cudaMemcpy(weights, host, bytes, cudaMemcpyHostToDevice));
    float* kept_activations = nullptr;
    if (persistent) WINDOW_CHECK(cudaMalloc(&kept_activations, bytes));
    for (long step = 0; step < steps; ++step) {
        if (sleep_phases && (step == 3 || step == 6)) std::this_thread::sleep_for(std::chrono::milliseconds(2000));
        const bool in_window = marks && marked(static_cast<int>(step), sleep_phases);
        const bool opens = in_window && !marked(static_cast<int>(step) - 1, sleep_phases);
        const bool closes = in_window && !marked(static_cast<int>(step) + 1, sleep_phases);
        if (opens) {
            nvtxRangePushA("capture_me");
            WINDOW_CHECK(cudaProfilerStart());
        }
        if (marks) nvtxRangePushA("step");
        float* activations = kept_activations;
        if (!persistent) WINDOW_CHECK(cudaMalloc(&activations, bytes));
        WINDOW_CHECK(cudaMemcpyAsync(batch, host, bytes, cudaMemcpyHostToDevice, 0));
        forward<<<kCount / kThreads, kThreads>>>(weights, batch, activations, kCount);
        WINDOW_CHECK(cudaGetLastError());
        WINDOW_CHECK(cudaMemsetAsync(gradients, 0, bytes, 0));
        backward<<<kCount / kThreads, kThreads>>>(activations, gradients, kCount);
        WINDOW_CHECK(cudaGetLastError());
        if (!persistent) WINDOW_CHECK(cudaFree(activations));
        if (marks) nvtxRangePop();
        if (closes) {
            WINDOW_CHECK(cudaProfilerStop());
            nvtxRangePop();
        }
    }
    WINDOW_CHECK(cudaDeviceSynchronize());
    WINDOW_CHECK(cudaFree(weights));
    WINDOW_CHECK(cudaFree(gradients));
    WINDOW_CHECK(cudaFree(batch));
    if (persistent) WINDOW_CHECK(cudaFree(kept_activations));
    std::printf("profiler_window: %ld steps\n", steps);
    return 0;
}
