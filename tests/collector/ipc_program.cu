// PyTorch-style CUDA IPC: the parent allocates a 2 MiB buffer, fills it, exports an IPC handle and
// runs a second process (itself, exec'ed) with the handle; the child opens it, checks the bytes,
// overwrites the first KiB and closes it; the parent then sees the child's bytes.
//   ipc_program            the parent
//   ipc_program HEXHANDLE  the child
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

constexpr size_t kBytes = 2 << 20;

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            std::fprintf(stderr, "ipc_program: %s: %s\n", #call, cudaGetErrorString(e_)); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

static int child(const char* hex) {
    cudaIpcMemHandle_t handle{};
    for (size_t i = 0; i < sizeof handle.reserved && hex[2 * i] && hex[2 * i + 1]; ++i) {
        unsigned byte = 0;
        std::sscanf(hex + 2 * i, "%2x", &byte);
        handle.reserved[i] = static_cast<char>(byte);
    }
    void* shared = nullptr;
    CHECK(cudaIpcOpenMemHandle(&shared, handle, cudaIpcMemLazyEnablePeerAccess));
    std::vector<unsigned char> host(kBytes);
    CHECK(cudaMemcpy(host.data(), shared, kBytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < kBytes; ++i)
        if (host[i] != static_cast<unsigned char>(i % 251))
            return std::fprintf(stderr, "child: byte %zu differs\n", i), 1;
    CHECK(cudaMemset(shared, 0x77, 1024));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaIpcCloseMemHandle(shared));
    std::printf("child: read %zu bytes, wrote 1024\n", kBytes);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1) return child(argv[1]);
    void* buffer = nullptr;
    CHECK(cudaMalloc(&buffer, kBytes));
    std::vector<unsigned char> host(kBytes);
    for (size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i % 251);
    CHECK(cudaMemcpy(buffer, host.data(), kBytes, cudaMemcpyHostToDevice));
    cudaIpcMemHandle_t handle{};
    CHECK(cudaIpcGetMemHandle(&handle, buffer));
    void* self = nullptr;
    if (cudaIpcOpenMemHandle(&self, handle, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess)
        return std::fprintf(stderr, "ipc_program: opened its own handle\n"), 1;
    cudaGetLastError();
    std::string hex;
    char two[3];
    for (char c : handle.reserved) {
        std::snprintf(two, sizeof two, "%02x", static_cast<unsigned char>(c));
        hex += two;
    }
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], hex.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::fprintf(stderr, "ipc_program: child failed\n"), 1;
    CHECK(cudaMemcpy(host.data(), buffer, 2048, cudaMemcpyDeviceToHost));
    if (host[0] != 0x77 || host[1023] != 0x77 || host[1024] != static_cast<unsigned char>(1024 % 251))
        return std::fprintf(stderr, "ipc_program: the child's write is not visible\n"), 1;
    CHECK(cudaFree(buffer));
    std::printf("parent: saw the child's write\n");
    return 0;
}
