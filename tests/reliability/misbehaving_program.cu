// Programs that do what well-behaved programs do not, CUDA runtime API, built by nvcc, run
// on the simulated GPU. Each launches kernels before and after its misdeed, so that a trace that
// lost either half shows it.
//   close_all N OUT   N launches, then closes every descriptor >= 3 (as daemons and some launchers
//                     do), opens OUT (it gets the lowest free number), writes a result text into it,
//                     N more launches, a second line, exit(0)
//   dup_over N OUT    N launches, opens OUT and dup2s it onto every descriptor number from 3 up to
//                     2047 that is not its own (replacing whatever was there), writes a line, N more
//                     launches, a second line, closes the copies, exit(0)
//   dup_storm N OUT   a second thread dup2s OUT onto the collector's raw file number (found in
//                     /proc/self/fd) and closes it, again and again, while the first launches N kernels
//   stdout N OUT      N launches with a line on stdout after each hundred (run it with stdout closed:
//                     the prints fail with EBADF, as without tbdprof), then its result into OUT
//   quick_exit N      N launches, one copy back, then _exit(0): no exit handler runs
//   exit_group N      as quick_exit, with the exit_group system call itself (nothing can flush)
//   launches N        N launches, one copy back, exit(0)
//   threads N         8 threads started together, each N launches and one copy back, exit(0)
#include <cuda_runtime.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

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

namespace {

constexpr int kElements = 1024;

// `launches` kernels; each hundredth one, `every_hundred` is called. Returns data[0] after them.
float gpu_work(float* data, int launches, void (*every_hundred)(int) = nullptr) {
    for (int i = 0; i < launches; ++i) {
        add_one<<<(kElements + 255) / 256, 256>>>(data, kElements);
        if (every_hundred != nullptr && i % 100 == 99) every_hundred(i);
    }
    CHECK(cudaGetLastError());
    float first = 0;
    CHECK(cudaMemcpy(&first, data, sizeof first, cudaMemcpyDeviceToHost));
    return first;
}

float* device_buffer() {
    float* data = nullptr;
    CHECK(cudaMalloc(&data, kElements * sizeof(float)));
    CHECK(cudaMemset(data, 0, kElements * sizeof(float)));
    return data;
}

bool write_text(int fd, const std::string& text) {
    return write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

void print_progress(int i) {
    std::printf("launched %d\n", i + 1);
}

int close_all(int launches, const char* out) {
    float* data = device_buffer();
    const float before = gpu_work(data, launches);
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    const int highest = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > 65536 ? 65536 : int(limit.rlim_cur);
    for (int fd = 3; fd < highest; ++fd) close(fd);
    const int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 2;
    if (!write_text(fd, "before " + std::to_string(before) + "\n")) return 3;
    const float after = gpu_work(data, launches);
    if (!write_text(fd, "after " + std::to_string(after) + "\n")) return 3;
    close(fd);
    CHECK(cudaFree(data));
    return 0;
}

int dup_over(int launches, const char* out) {
    float* data = device_buffer();
    const float before = gpu_work(data, launches);
    const int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 2;
    constexpr int kHighest = 2048;
    for (int other = 3; other < kHighest; ++other)
        if (other != fd) dup2(fd, other);
    if (!write_text(fd, "before " + std::to_string(before) + "\n")) return 3;
    const float after = gpu_work(data, launches);
    usleep(20000);  // the collector's writer drains meanwhile
    if (!write_text(fd, "after " + std::to_string(after) + "\n")) return 3;
    for (int other = 3; other < kHighest; ++other)
        if (other != fd) close(other);
    close(fd);
    CHECK(cudaFree(data));
    return 0;
}

int closed_stdout(int launches, const char* out) {
    float* data = device_buffer();
    const float result = gpu_work(data, launches, print_progress);
    std::fflush(stdout);
    FILE* file = std::fopen(out, "w");
    if (file == nullptr) return 2;
    std::fprintf(file, "result %g\n", result);
    std::fclose(file);
    CHECK(cudaFree(data));
    return 0;
}

int threads(int launches) {
    constexpr int kThreads = 8;
    std::vector<std::thread> workers;
    std::atomic<int> ready{0};
    for (int t = 0; t < kThreads; ++t) {
        workers.emplace_back([&] {
            float* data = device_buffer();
            ready.fetch_add(1);
            while (ready.load() < kThreads) {
            }
            gpu_work(data, launches);
            CHECK(cudaFree(data));
        });
    }
    for (std::thread& worker : workers) worker.join();
    return 0;
}

}  // namespace

// The descriptor numbers naming tbdprof's raw file (the program looks like one that dup2s onto
// numbers it does not own; here it aims at the collector's on purpose).
std::vector<int> raw_file_numbers() {
    std::vector<int> numbers;
    DIR* dir = opendir("/proc/self/fd");
    if (dir == nullptr) return numbers;
    while (const dirent* entry = readdir(dir)) {
        char link[4096];
        const std::string path = std::string("/proc/self/fd/") + entry->d_name;
        const ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
        if (n <= 0) continue;
        link[n] = '\0';
        if (std::strstr(link, ".tbdraw") != nullptr) numbers.push_back(std::atoi(entry->d_name));
    }
    closedir(dir);
    return numbers;
}

// A second thread dup2s the program's file onto the collector's raw file number, again and again
// while this one launches, and closes the copy: each replacement lands wherever the writer is.
int dup_storm(int launches, const char* out) {
    float* data = device_buffer();
    const int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 2;
    std::atomic<bool> launching{true};
    std::thread storm([&] {
        while (launching.load()) {
            for (const int number : raw_file_numbers()) {
                if (number == fd) continue;
                dup2(fd, number);
                usleep(50);
                close(number);
            }
        }
    });
    const float result = gpu_work(data, launches);
    launching.store(false);
    storm.join();
    if (!write_text(fd, "result " + std::to_string(result) + "\n")) return 3;
    close(fd);
    CHECK(cudaFree(data));
    return 0;
}

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const int launches = argc > 2 ? std::atoi(argv[2]) : 0;
    const char* out = argc > 3 ? argv[3] : nullptr;
    if (mode == "close_all" && out != nullptr) return close_all(launches, out);
    if (mode == "stdout" && out != nullptr) return closed_stdout(launches, out);
    if (mode == "dup_over" && out != nullptr) return dup_over(launches, out);
    if (mode == "dup_storm" && out != nullptr) return dup_storm(launches, out);
    if (mode == "threads") return threads(launches);
    if (mode == "quick_exit" || mode == "exit_group" || mode == "launches") {
        float* data = device_buffer();
        gpu_work(data, launches);
        if (mode == "quick_exit") _exit(0);
        if (mode == "exit_group") syscall(SYS_exit_group, 0);
        CHECK(cudaFree(data));
        return 0;
    }
    std::fprintf(stderr,
                 "usage: misbehaving_program close_all|dup_over|stdout|quick_exit|exit_group|launches|threads N [OUT]\n");
    return 2;
}
