// Without a loadable libcuda.so.1 the runtime behaves as the real one does on a machine without a
// driver: calls fail with cudaErrorInsufficientDriver, the error is reported on every query,
// cudaGetDeviceCount leaves the count untouched, cudaDriverGetVersion reports 0.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>

static int g_failures = 0;
#define EXPECT(condition)                                                                      \
    do {                                                                                       \
        if (!(condition)) {                                                                    \
            std::fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #condition); \
            ++g_failures;                                                                      \
        }                                                                                      \
    } while (0)

int main() {
    // On a machine with a driver installed system-wide this situation cannot be produced: skip.
    if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
        dlclose(driver);
        std::printf("a libcuda.so.1 is installed; skipping\n");
        return 77;
    }
    int count = -1;
    EXPECT(cudaGetDeviceCount(&count) == cudaErrorInsufficientDriver);
    EXPECT(count == -1);
    EXPECT(cudaGetLastError() == cudaErrorInsufficientDriver);
    EXPECT(cudaGetLastError() == cudaErrorInsufficientDriver);
    void* pointer = nullptr;
    EXPECT(cudaMalloc(&pointer, 16) == cudaErrorInsufficientDriver);
    EXPECT(cudaFree(nullptr) == cudaErrorInsufficientDriver);
    int version = -1;
    EXPECT(cudaDriverGetVersion(&version) == cudaSuccess);
    EXPECT(version == 0);
    EXPECT(cudaRuntimeGetVersion(&version) == cudaSuccess);
    EXPECT(version == 13000);
    return g_failures == 0 ? 0 : 1;
}
