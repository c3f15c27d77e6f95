// Programs for the "the program must never be broken" cases (CUDA runtime API, built by nvcc,
// run on the simulated GPU):
//   fork_cuda   GPU work, then a forked child calls cudaMalloc: it must fail with
//               cudaErrorInitializationError as on a real GPU, and the child's exit(0) must exit 0
//   fork_host   GPU work, then a forked child that never touches CUDA (a data-loader worker) exits 0
//   exec_self   10 launches, then execs itself in mode "work" (same pid, the collector loaded again)
//   work        10 launches
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                                     \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                               \
        }                                                                                               \
    } while (0)

__global__ void add_one(float* data, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1.0f;
}

static void gpu_work(int launches) {
    const int n = 1024;
    float* data = nullptr;
    CHECK(cudaMalloc(&data, n * sizeof(float)));
    CHECK(cudaMemset(data, 0, n * sizeof(float)));
    for (int i = 0; i < launches; ++i) add_one<<<(n + 255) / 256, 256>>>(data, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(data));
}

// Forks; the child runs `child` and exits with its result through exit(), so that static destructors
// and exit handlers (the collector's, CUPTI's) run in the child.
static int fork_and_wait(int (*child)()) {
    const pid_t pid = fork();
    if (pid == 0) std::exit(child());
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        std::fprintf(stderr, "the child died of signal %d\n", WTERMSIG(status));
        return 1;
    }
    if (WEXITSTATUS(status) != 0) std::fprintf(stderr, "the child exited %d\n", WEXITSTATUS(status));
    return WEXITSTATUS(status);
}

static int child_uses_cuda() {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, 64);
    if (e != cudaErrorInitializationError) {
        std::fprintf(stderr, "child: cudaMalloc after fork returned %d (%s), want cudaErrorInitializationError\n",
                     static_cast<int>(e), cudaGetErrorName(e));
        return 5;
    }
    return 0;
}

static int child_host_only() {
    volatile double x = 0;
    for (int k = 0; k < 100000; ++k) x = x + k;
    return 0;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "work") == 0) {
        gpu_work(10);
        return 0;
    }
    if (std::strcmp(mode, "fork_cuda") == 0 || std::strcmp(mode, "fork_host") == 0) {
        gpu_work(10);
        const int child = fork_and_wait(std::strcmp(mode, "fork_cuda") == 0 ? child_uses_cuda : child_host_only);
        gpu_work(10);  // the parent's CUDA is untouched by the child
        return child;
    }
    if (std::strcmp(mode, "exec_self") == 0) {
        gpu_work(10);
        execl(argv[0], argv[0], "work", static_cast<char*>(nullptr));
        std::perror("execl");
        return 127;
    }
    std::fprintf(stderr, "usage: fork_exec_program fork_cuda|fork_host|exec_self|work\n");
    return 2;
}
