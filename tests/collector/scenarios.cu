// Programs for the collector's robustness tests, on the CUDA runtime API (built by nvcc against the
// real toolkit, run on the simulated GPU under LD_PRELOAD).
//
// usage: collector_scenarios MODE
//   threads      8 threads launching, allocating and copying at the same time
//   fork         forks children (without exec) while another thread launches; children exit
//   exec         forks a child that execs this program in mode "work"; both use the GPU
//   work         a little GPU work (the exec'ed child)
//   segv|abort|exit   GPU work, 300 ms idle, then dies by SIGSEGV, abort() or _exit(3)
//   cupti_held   subscribes to CUPTI itself (as torch.profiler or a self-tracing program does), traces
//                its own kernels through the Activity API, does GPU work, and checks that it got a
//                record of every kernel it launched (so a profiler that yields CUPTI left it intact)
//   burst T N [BLOCKS]  T threads each launch N kernels (of BLOCKS blocks, default 1: the more, the
//                longer each runs on the simulated GPU) back to back on the legacy stream, nothing else
//                until the end (the collector must hold them rather than lose records: back-pressure)
//   bench        prints host ns per kernel launch and per cudaMalloc+cudaFree (run with and without
//                the collector to see what it adds)
#include <cuda_runtime.h>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                      \
        }                                                                                      \
    } while (0)

__global__ void scale(float* out, const float* in, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * factor;
}

static void gpu_work(int launches) {
    const int n = 4096;
    float *a = nullptr, *b = nullptr;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    std::vector<float> host(n, 2.0f);
    CHECK(cudaMemcpy(a, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(b, 0, n * sizeof(float)));
    for (int i = 0; i < launches; ++i) scale<<<(n + 255) / 256, 256>>>(b, a, 1.5f, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(host.data(), b, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
}

static int run_threads() {
    constexpr int kThreads = 8;
    std::vector<std::thread> threads;
    std::atomic<int> ready{0};
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            ready.fetch_add(1);
            while (ready.load() < kThreads) {
            }
            for (int round = 0; round < 5; ++round) gpu_work(200);
        });
    }
    for (auto& t : threads) t.join();
    CHECK(cudaDeviceSynchronize());
    return 0;
}

static int run_fork() {
    gpu_work(20);
    std::atomic<bool> stop{false};
    std::thread launcher([&] {
        while (!stop.load()) gpu_work(10);
    });
    for (int i = 0; i < 3; ++i) {
        pid_t child = fork();
        if (child == 0) {
            // The child only computes on the host; it must not hang or touch the parent's trace.
            volatile double x = 0;
            for (int k = 0; k < 100000; ++k) x = x + k;
            std::exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::fprintf(stderr, "child failed: %d\n", status);
            return 1;
        }
    }
    stop.store(true);
    launcher.join();
    gpu_work(20);
    CHECK(cudaDeviceSynchronize());
    return 0;
}

static int run_exec(const char* self) {
    gpu_work(10);
    pid_t child = fork();
    if (child == 0) {
        execl(self, self, "work", static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    gpu_work(10);
    return 0;
}

static int run_crash(const char* how) {
    gpu_work(50);
    CHECK(cudaDeviceSynchronize());
    usleep(300 * 1000);  // longer than the collector's drain and CUPTI flush periods
    if (std::strcmp(how, "segv") == 0) {
        volatile int* null_pointer = nullptr;
        *null_pointer = 1;
    } else if (std::strcmp(how, "abort") == 0) {
        std::abort();
    }
    _exit(3);
}

static double seconds_since(const std::chrono::steady_clock::time_point& start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

static int run_bench() {
    const int n = 1024;
    float *a = nullptr, *b = nullptr;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    scale<<<4, 256>>>(b, a, 2.0f, n);  // warm-up: first-launch set-up is not what we measure
    CHECK(cudaDeviceSynchronize());
    constexpr int kLaunches = 200000;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunches; ++i) scale<<<4, 256>>>(b, a, 2.0f, n);
    const double launch_s = seconds_since(start);
    CHECK(cudaDeviceSynchronize());
    constexpr int kAllocs = 20000;
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < kAllocs; ++i) {
        float* p = nullptr;
        CHECK(cudaMalloc(&p, 4096));
        CHECK(cudaFree(p));
    }
    const double alloc_s = seconds_since(start);
    std::printf("launch_ns %.1f alloc_free_ns %.1f\n", launch_s * 1e9 / kLaunches, alloc_s * 1e9 / kAllocs);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return 0;
}

// The program's own CUPTI client, loaded with dlopen so that the other modes do not need CUPTI.
namespace self_trace {
std::atomic<int> kernels{0};
decltype(&cuptiActivityGetNextRecord) next_record = nullptr;

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *size = 1 << 20;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
    *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    CUpti_Activity* record = nullptr;
    while (valid > 0 && next_record(buffer, valid, &record) == CUPTI_SUCCESS)
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) kernels.fetch_add(1);
    std::free(buffer);
}

void CUPTIAPI ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}
}  // namespace self_trace

static int run_cupti_held() {
    void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (cupti == nullptr) {
        std::fprintf(stderr, "cupti_held: %s\n", dlerror());
        return 1;
    }
    auto subscribe_v2 = reinterpret_cast<decltype(&cuptiSubscribe_v2)>(dlsym(cupti, "cuptiSubscribe_v2"));
    auto register_callbacks =
        reinterpret_cast<decltype(&cuptiActivityRegisterCallbacks)>(dlsym(cupti, "cuptiActivityRegisterCallbacks"));
    auto enable = reinterpret_cast<decltype(&cuptiActivityEnable)>(dlsym(cupti, "cuptiActivityEnable"));
    auto flush_all = reinterpret_cast<decltype(&cuptiActivityFlushAll)>(dlsym(cupti, "cuptiActivityFlushAll"));
    self_trace::next_record =
        reinterpret_cast<decltype(&cuptiActivityGetNextRecord)>(dlsym(cupti, "cuptiActivityGetNextRecord"));
    CUpti_SubscriberHandle handle = nullptr;
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "self-tracer";
    if (subscribe_v2(&handle, self_trace::ignore, nullptr, &params) != CUPTI_SUCCESS ||
        register_callbacks(self_trace::requested, self_trace::completed) != CUPTI_SUCCESS ||
        enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        std::fprintf(stderr, "cupti_held: cannot set up CUPTI\n");
        return 1;
    }
    constexpr int kLaunches = 25;
    gpu_work(kLaunches);
    CHECK(cudaDeviceSynchronize());
    flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::printf("self-traced kernels: %d\n", self_trace::kernels.load());
    return self_trace::kernels.load() == kLaunches ? 0 : 1;
}

// T threads x N launches of one kernel, as fast as they go; one synchronization at the end.
static int run_burst(int threads, long launches, unsigned blocks) {
    const int n = 256;
    float *a = nullptr, *b = nullptr;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    std::vector<std::thread> workers;
    std::atomic<int> ready{0};
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            ready.fetch_add(1);
            while (ready.load() < threads) {
            }
            for (long i = 0; i < launches; ++i) scale<<<blocks, n>>>(b, a, 1.5f, n);
        });
    }
    for (auto& w : workers) w.join();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return 0;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "burst") == 0 && (argc == 4 || argc == 5) && std::atoi(argv[2]) > 0 &&
        std::atol(argv[3]) > 0 && (argc == 4 || std::atoi(argv[4]) > 0))
        return run_burst(std::atoi(argv[2]), std::atol(argv[3]), argc == 5 ? unsigned(std::atoi(argv[4])) : 1u);
    if (std::strcmp(mode, "threads") == 0) return run_threads();
    if (std::strcmp(mode, "bench") == 0) return run_bench();
    if (std::strcmp(mode, "fork") == 0) return run_fork();
    if (std::strcmp(mode, "exec") == 0) return run_exec(argv[0]);
    if (std::strcmp(mode, "cupti_held") == 0) return run_cupti_held();
    if (std::strcmp(mode, "work") == 0) {
        gpu_work(10);
        return 0;
    }
    if (std::strcmp(mode, "segv") == 0 || std::strcmp(mode, "abort") == 0 || std::strcmp(mode, "exit") == 0)
        return run_crash(mode);
    std::fprintf(stderr, "usage: collector_scenarios threads|fork|exec|work|cupti_held|segv|abort|exit|bench|burst T N [BLOCKS]\n");
    return 2;
}
