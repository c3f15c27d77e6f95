// The smallest useful CUDA program: one kernel launched with <<<>>>, device memory, copies both ways,
// a memset, and a byte-exact check of what came back (plus, with --check-kernel, of the kernel's
// output, for real GPUs). It is the "binary built by nvcc against the real
// toolkit runs on the simulated GPU" test: if this fails, nothing bigger can work.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define HELLO_CHECK(call)                                                                            \
    do {                                                                                             \
        cudaError_t err_ = (call);                                                                   \
        if (err_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "hello_copy: %s failed: %s (%s)\n", #call, cudaGetErrorName(err_),  \
                         cudaGetErrorString(err_));                                                  \
            return 1;                                                                                \
        }                                                                                            \
    } while (0)

// Writes base + index into every element. Its result is checked only with --check-kernel: the
// simulated GPU models a kernel's duration without computing it, so by default the check is about
// the bytes moved by copies and memset, which every device must get exactly right.
__global__ void write_index(int* values, int count, int base) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) values[i] = base + i;
}

int main(int argc, char** argv) {
    bool check_kernel = argc == 2 && std::strcmp(argv[1], "--check-kernel") == 0;
    if (argc > 2 || (argc == 2 && !check_kernel)) {
        std::fprintf(stderr, "hello_copy: error: usage: hello_copy [--check-kernel]\n");
        return 2;
    }
    constexpr int kCount = 1000;  // not a multiple of the block size: the bounds check matters
    constexpr int kBase = 7;
    std::vector<int> host(kCount);
    for (int i = 0; i < kCount; ++i) host[i] = i * 3;

    int* values = nullptr;
    int* computed = nullptr;
    HELLO_CHECK(cudaMalloc(&values, kCount * sizeof(int)));
    HELLO_CHECK(cudaMalloc(&computed, kCount * sizeof(int)));
    HELLO_CHECK(cudaMemcpy(values, host.data(), kCount * sizeof(int), cudaMemcpyHostToDevice));
    write_index<<<(kCount + 255) / 256, 256>>>(computed, kCount, kBase);
    HELLO_CHECK(cudaGetLastError());
    // memset writes bytes: 0x5A in every byte of the second half, first half keeps the copied data.
    HELLO_CHECK(cudaMemset(values + kCount / 2, 0x5A, (kCount / 2) * sizeof(int)));
    std::vector<int> back(kCount, -1);
    HELLO_CHECK(cudaMemcpy(back.data(), values, kCount * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < kCount; ++i) {
        int expected = i < kCount / 2 ? i * 3 : 0x5A5A5A5A;
        if (back[i] != expected) {
            std::fprintf(stderr, "hello_copy: wrong byte pattern at element %d: got %#x, expected %#x\n", i,
                         static_cast<unsigned>(back[i]), static_cast<unsigned>(expected));
            return 1;
        }
    }
    if (check_kernel) {
        HELLO_CHECK(cudaMemcpy(back.data(), computed, kCount * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < kCount; ++i) {
            if (back[i] != kBase + i) {
                std::fprintf(stderr, "hello_copy: kernel result wrong at %d: got %d, expected %d\n", i,
                             back[i], kBase + i);
                return 1;
            }
        }
    }
    HELLO_CHECK(cudaFree(computed));
    HELLO_CHECK(cudaFree(values));
    HELLO_CHECK(cudaDeviceSynchronize());
    std::printf("OK\n");
    return 0;
}
