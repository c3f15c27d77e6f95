// A CUDA program built by nvcc against the real toolkit (-cudart shared), run against the simulated
// libcudart.so.13: registration before main, <<<>>> launches through __cudaGetKernel and
// __cudaLaunchKernel, kernel queries and symbol copies. Built twice: with the legacy default stream
// and with --default-stream per-thread (then the _ptsz/_ptds entry points are the ones called).
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#define EXPECT(condition)                                                                      \
    do {                                                                                       \
        if (!(condition)) {                                                                    \
            std::fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #condition); \
            ++g_failures;                                                                      \
        }                                                                                      \
    } while (0)

static int g_failures = 0;

__device__ int g_counter[4];
__managed__ int g_managed[2] = {11, 22};

__global__ void k(float a, const float* x, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void no_arguments() {}

static void check_parameter_layout() {
    const size_t expected[4][2] = {{0, 4}, {8, 8}, {16, 8}, {24, 4}};
    for (size_t index = 0; index < 4; ++index) {
        size_t offset = 99;
        size_t size = 99;
        EXPECT(cudaFuncGetParamInfo(reinterpret_cast<const void*>(k), index, &offset, &size) == cudaSuccess);
        EXPECT(offset == expected[index][0]);
        EXPECT(size == expected[index][1]);
    }
    size_t offset = 0;
    size_t size = 0;
    EXPECT(cudaFuncGetParamInfo(reinterpret_cast<const void*>(k), 4, &offset, &size) == cudaErrorInvalidValue);
    EXPECT(cudaGetLastError() == cudaErrorInvalidValue);
}

static void check_kernel_queries() {
    cudaFuncAttributes attributes;
    std::memset(&attributes, 0, sizeof attributes);
    EXPECT(cudaFuncGetAttributes(&attributes, k) == cudaSuccess);
    EXPECT(attributes.maxThreadsPerBlock > 0);
    const char* name = nullptr;
    EXPECT(cudaFuncGetName(&name, reinterpret_cast<const void*>(k)) == cudaSuccess);
    EXPECT(name != nullptr && std::strcmp(name, "_Z1kfPKfPfi") == 0);
    cudaKernel_t kernel = nullptr;
    EXPECT(cudaGetKernel(&kernel, reinterpret_cast<const void*>(k)) == cudaSuccess);
    EXPECT(kernel != nullptr);
    cudaFunction_t function = nullptr;
    EXPECT(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(k)) == cudaSuccess);
    EXPECT(function != nullptr);
    int not_a_kernel = 0;
    EXPECT(cudaFuncGetAttributes(&attributes, &not_a_kernel) == cudaErrorInvalidDeviceFunction);
    EXPECT(cudaGetLastError() == cudaErrorInvalidDeviceFunction);
}

// Occupancy through the runtime: the driver's model (regs, shared memory, threads per SM).
static void check_occupancy() {
    cudaFuncAttributes attributes;
    std::memset(&attributes, 0, sizeof attributes);
    EXPECT(cudaFuncGetAttributes(&attributes, k) == cudaSuccess);
    int blocks = -1;
    EXPECT(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 256, 0) == cudaSuccess);
    const int regs = attributes.numRegs > 0 ? attributes.numRegs : 32;
    const int regs_per_warp = (regs * 32 + 255) / 256 * 256;
    EXPECT(blocks == std::min(8, 65536 / (regs_per_warp * 8)));  // 2048 threads per SM on sm_90
    EXPECT(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, k, 256, 100000, cudaOccupancyDefault) ==
           cudaSuccess);
    EXPECT(blocks == 2);  // 233472 bytes of shared memory per SM, 1 KiB reserved per block
    int min_grid = 0, block = 0;
    EXPECT(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, k, 0, 0) == cudaSuccess);
    EXPECT(block % 32 == 0 && block > 0 && block <= 1024);
    EXPECT(min_grid > 0 && min_grid % 132 == 0);
}

static void check_launches() {
    const int n = 1000;
    float* x = nullptr;
    float* y = nullptr;
    EXPECT(cudaMalloc(&x, n * sizeof(float)) == cudaSuccess);
    EXPECT(cudaMalloc(&y, n * sizeof(float)) == cudaSuccess);

    k<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
    EXPECT(cudaGetLastError() == cudaSuccess);
    no_arguments<<<1, 1>>>();
    EXPECT(cudaGetLastError() == cudaSuccess);

    cudaStream_t stream = nullptr;
    EXPECT(cudaStreamCreate(&stream) == cudaSuccess);
    k<<<4, 256, 0, stream>>>(1.0f, x, y, n);
    EXPECT(cudaGetLastError() == cudaSuccess);
    EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);

    // Beyond 1024 threads per block: rejected before reaching the device.
    k<<<1, 2048>>>(1.0f, x, y, n);
    EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
    k<<<0, 32>>>(1.0f, x, y, n);
    EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);

    float a = 3.0f;
    int count = n;
    void* args[] = {&a, &x, &y, &count};
    EXPECT(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(4), dim3(256), args, 0, stream) == cudaSuccess);

    cudaLaunchConfig_t config;
    std::memset(&config, 0, sizeof config);
    config.gridDim = dim3(2);
    config.blockDim = dim3(128);
    config.stream = stream;
    EXPECT(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(k), args) == cudaSuccess);

    int not_a_kernel = 0;
    EXPECT(cudaLaunchKernel(&not_a_kernel, dim3(1), dim3(1), args, 0, stream) == cudaErrorInvalidDeviceFunction);
    EXPECT(cudaGetLastError() == cudaErrorInvalidDeviceFunction);

    EXPECT(cudaDeviceSynchronize() == cudaSuccess);
    EXPECT(cudaStreamDestroy(stream) == cudaSuccess);
    EXPECT(cudaFree(x) == cudaSuccess);
    EXPECT(cudaFree(y) == cudaSuccess);
}

// A kernel with a huge grid keeps the simulated device busy far longer than it takes the host to
// enqueue it, which makes the not-ready states observable.
static void check_not_ready_states() {
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
    EXPECT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    EXPECT(cudaEventCreate(&start) == cudaSuccess);
    EXPECT(cudaEventCreate(&end) == cudaSuccess);
    EXPECT(cudaEventRecord(start, stream) == cudaSuccess);
    no_arguments<<<1u << 22, 1024, 0, stream>>>();
    EXPECT(cudaEventRecord(end, stream) == cudaSuccess);
    EXPECT(cudaEventQuery(end) == cudaErrorNotReady);
    EXPECT(cudaStreamQuery(stream) == cudaErrorNotReady);
    float too_early = 0;
    EXPECT(cudaEventElapsedTime(&too_early, start, end) == cudaErrorNotReady);
    EXPECT(cudaGetLastError() == cudaSuccess);  // "not ready" is a status, never the last error
    EXPECT(cudaEventSynchronize(end) == cudaSuccess);
    EXPECT(cudaEventQuery(end) == cudaSuccess);
    EXPECT(cudaStreamQuery(stream) == cudaSuccess);
    float elapsed = 0;
    EXPECT(cudaEventElapsedTime(&elapsed, start, end) == cudaSuccess);
    EXPECT(elapsed > 0.0f);
    EXPECT(cudaEventDestroy(start) == cudaSuccess);
    EXPECT(cudaEventDestroy(end) == cudaSuccess);
    EXPECT(cudaStreamDestroy(stream) == cudaSuccess);
}

// A __managed__ variable: the host reads and writes it directly (through the runtime's
// __cudaInitModule and cuLibraryGetManaged), and a device-side copy sees what the host wrote.
static void check_managed() {
    EXPECT(g_managed[0] == 11);
    EXPECT(g_managed[1] == 22);
    g_managed[1] = 33;
    int back[2] = {0, 0};
    EXPECT(cudaMemcpyFromSymbol(back, g_managed, sizeof back) == cudaSuccess);
    EXPECT(back[0] == 11 && back[1] == 33);
}

static void check_symbols() {
    const int values[4] = {1, 2, 3, 4};
    EXPECT(cudaMemcpyToSymbol(g_counter, values, sizeof values) == cudaSuccess);
    int back[4] = {0, 0, 0, 0};
    EXPECT(cudaMemcpyFromSymbol(back, g_counter, sizeof back) == cudaSuccess);
    EXPECT(std::memcmp(values, back, sizeof values) == 0);
    int tail = 0;
    EXPECT(cudaMemcpyFromSymbol(&tail, g_counter, sizeof tail, 3 * sizeof(int)) == cudaSuccess);
    EXPECT(tail == 4);
    size_t size = 0;
    EXPECT(cudaGetSymbolSize(&size, g_counter) == cudaSuccess);
    EXPECT(size == sizeof values);
    EXPECT(cudaMemcpyToSymbol(g_counter, values, sizeof values, 4) == cudaErrorInvalidValue);
    EXPECT(cudaGetLastError() == cudaErrorInvalidValue);
    int not_a_symbol = 0;
    EXPECT(cudaMemcpyToSymbol(not_a_symbol, values, sizeof(int)) == cudaErrorInvalidSymbol);
    EXPECT(cudaGetLastError() == cudaErrorInvalidSymbol);
}

int main(int argc, char** argv) {
    // The point of the test: the binary was linked against the real runtime, but runs on ours.
    Dl_info info;
    if (argc > 1 && dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) != 0) {
        EXPECT(info.dli_fname != nullptr && std::strstr(info.dli_fname, argv[1]) != nullptr);
    }
    check_parameter_layout();
    check_kernel_queries();
    check_occupancy();
    check_launches();
    check_not_ready_states();
    check_symbols();
    check_managed();
    if (g_failures != 0) {
        std::fprintf(stderr, "%d expectation(s) failed\n", g_failures);
        return 1;
    }
    std::printf("ok\n");
    return 0;
}
