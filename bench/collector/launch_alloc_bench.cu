// The target program of the collector benchmark: the same binary runs with and without
// libtbdprof_preload.so, and the difference is what the collector adds.
//
//   tbdprof_bench_target launch  N REPS   N runtime launches (<<<>>> = cudaLaunchKernel) per repetition
//   tbdprof_bench_target driver  N REPS   N cuLaunchKernel calls (entry point from cudaGetDriverEntryPoint)
//   tbdprof_bench_target alloc   N REPS   N cudaMalloc, then N cudaFree, 24 frames below main
//
// Each repetition prints one line:
//   rep=R op=launch count=N wall_ns=... thread_cpu_ns=... process_cpu_ns=...
// wall_ns is per operation on the wall clock; thread_cpu_ns is the calling thread's CPU time per
// operation (not inflated when the shared machine preempts us); process_cpu_ns adds every thread
// of the process (the collector's writer, the simulated CUPTI's delivery thread).
// With TBD_BENCH_CUPTI_ALONE=1 the program traces its own kernels with CUPTI (minimal_cupti_tracer.h).
#include <cuda.h>
#include <cuda_runtime.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "minimal_cupti_tracer.h"

#define CHECK(call)                                                                                       \
    do {                                                                                                  \
        cudaError_t e_ = (call);                                                                          \
        if (e_ != cudaSuccess) {                                                                          \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                                 \
        }                                                                                                 \
    } while (0)

// A small kernel with a few pointer arguments (each one is scanned by the collector) and scalars.
__global__ void axpy3(float* out, const float* a, const float* b, const float* c, float alpha, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = alpha * a[i] + b[i] * c[i];
}

namespace {

constexpr int kElements = 1024;
constexpr int kStackDepth = 24;

uint64_t clock_ns(clockid_t clock) {
    timespec ts;
    clock_gettime(clock, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Stopwatch {
    uint64_t wall = clock_ns(CLOCK_MONOTONIC);
    uint64_t thread = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t process = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

    void report(int rep, const char* op, long count) const {
        const double n = static_cast<double>(count);
        std::printf("rep=%d op=%s count=%ld wall_ns=%.1f thread_cpu_ns=%.1f process_cpu_ns=%.1f\n", rep, op, count,
                    static_cast<double>(clock_ns(CLOCK_MONOTONIC) - wall) / n,
                    static_cast<double>(clock_ns(CLOCK_THREAD_CPUTIME_ID) - thread) / n,
                    static_cast<double>(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - process) / n);
        std::fflush(stdout);
    }
};

struct Buffers {
    float *out = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
    Buffers() {
        CHECK(cudaMalloc(&out, kElements * sizeof(float)));
        CHECK(cudaMalloc(&a, kElements * sizeof(float)));
        CHECK(cudaMalloc(&b, kElements * sizeof(float)));
        CHECK(cudaMalloc(&c, kElements * sizeof(float)));
    }
    ~Buffers() {
        cudaFree(out);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
    }
};

int run_runtime_launches(long count, int reps) {
    Buffers buf;
    axpy3<<<kElements / 256, 256>>>(buf.out, buf.a, buf.b, buf.c, 2.0f, kElements);  // first launch set-up
    CHECK(cudaDeviceSynchronize());
    for (int rep = 0; rep < reps; ++rep) {
        Stopwatch watch;
        for (long i = 0; i < count; ++i) axpy3<<<kElements / 256, 256>>>(buf.out, buf.a, buf.b, buf.c, 2.0f, kElements);
        watch.report(rep, "launch", count);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
    }
    return 0;
}

int run_driver_launches(long count, int reps) {
    Buffers buf;
    // How libraries reach the driver on CUDA 12/13: an entry point from cuGetProcAddress.
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault, &found));
    if (entry == nullptr || found != cudaDriverEntryPointSuccess) {
        std::fprintf(stderr, "cuLaunchKernel entry point not found\n");
        return 1;
    }
    const auto launch = reinterpret_cast<decltype(&cuLaunchKernel)>(entry);
    cudaFunction_t function = nullptr;
    CHECK(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(&axpy3)));
    float alpha = 2.0f;
    int n = kElements;
    void* params[] = {&buf.out, &buf.a, &buf.b, &buf.c, &alpha, &n};
    const auto f = reinterpret_cast<CUfunction>(function);
    if (launch(f, kElements / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr) != CUDA_SUCCESS) return 1;
    CHECK(cudaDeviceSynchronize());
    for (int rep = 0; rep < reps; ++rep) {
        Stopwatch watch;
        for (long i = 0; i < count; ++i) launch(f, kElements / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr);
        watch.report(rep, "driver_launch", count);
        CHECK(cudaDeviceSynchronize());
    }
    return 0;
}

void allocate_and_free(long count, int reps, float** pointers) {
    for (int rep = 0; rep < reps; ++rep) {
        Stopwatch alloc_watch;
        for (long i = 0; i < count; ++i) CHECK(cudaMalloc(&pointers[i], 4096));
        alloc_watch.report(rep, "malloc", count);
        Stopwatch free_watch;
        for (long i = 0; i < count; ++i) CHECK(cudaFree(pointers[i]));
        free_watch.report(rep, "free", count);
    }
}

// Recurses `depth` times before allocating, so that every allocation has a full 24-frame stack.
// noinline and the use of the result after the call keep each level a real frame.
__attribute__((noinline)) int allocate_deep(int depth, long count, int reps, float** pointers) {
    if (depth <= 1) {
        allocate_and_free(count, reps, pointers);
        return 1;
    }
    const int below = allocate_deep(depth - 1, count, reps, pointers);
    asm volatile("" ::: "memory");
    return below + 1;
}

int run_allocations(long count, int reps) {
    auto** pointers = static_cast<float**>(std::calloc(static_cast<size_t>(count), sizeof(float*)));
    if (pointers == nullptr) return 1;
    float* warm = nullptr;
    CHECK(cudaMalloc(&warm, 4096));  // context creation is not what we measure
    CHECK(cudaFree(warm));
    const int levels = allocate_deep(kStackDepth, count, reps, pointers);
    std::free(pointers);
    return levels == kStackDepth ? 0 : 1;
}

}  // namespace

namespace {

constexpr const char* kUsage =
    "usage: tbdprof_bench_target launch|driver|alloc COUNT REPS\n"
    "The collector benchmark's target program (bench/collector/run_benchmarks.sh runs it; writes no file).\n"
    "  launch   COUNT runtime launches (<<<>>>) of a 4-pointer kernel, REPS times, timed\n"
    "  driver   the same through cuLaunchKernel from cudaGetDriverEntryPoint\n"
    "  alloc    COUNT cudaMalloc(4096) and cudaFree under a 24-frame call chain, REPS times\n"
    "Prints ns per operation (wall, thread CPU, process CPU) for each repetition.\n";

// A whole number of at least 1; false otherwise.
bool parse_count(const char* text, long& value) {
    char* end = nullptr;
    const long parsed = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || parsed <= 0) return false;
    value = parsed;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (argv[i][0] == '-') {
            std::fprintf(stderr, "%s: unknown option %s\n%s", "tbdprof_bench_target", argv[i], kUsage);
            return 2;
        }
    }
    long count = 0, reps = 0;
    if (argc != 4 || !parse_count(argv[2], count) || !parse_count(argv[3], reps) || reps > 1000000) {
        std::fprintf(stderr, "tbdprof_bench_target: %s\n%s",
                     argc != 4 ? "want 3 arguments" : "COUNT and REPS must be whole numbers above 0", kUsage);
        return 2;
    }
    int (*run)(long, int) = nullptr;
    if (std::strcmp(argv[1], "launch") == 0) run = run_runtime_launches;
    if (std::strcmp(argv[1], "driver") == 0) run = run_driver_launches;
    if (std::strcmp(argv[1], "alloc") == 0) run = run_allocations;
    if (run == nullptr) {
        std::fprintf(stderr, "tbdprof_bench_target: unknown mode %s\n%s", argv[1], kUsage);
        return 2;
    }
    const bool traced = start_minimal_cupti_tracer();
    const int status = run(count, static_cast<int>(reps));
    if (traced) stop_minimal_cupti_tracer();
    return status;
}
