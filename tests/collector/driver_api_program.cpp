// Exercises every driver entry point the collector records, the way a program linked against libcuda
// would (Driver path), through cuGetProcAddress (DriverViaProcAddress) and through dlopen + dlsym of
// cuGetProcAddress_v2 on libcuda (how cuBLAS, cuDNN and NCCL find the driver). Writes the pointer
// arguments of its launches, keyed by grid.x, to $TBDPROF_TEST_POINTERS.
//
// usage: driver_api_program FATBIN
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                  \
    do {                                                                             \
        CUresult r_ = (call);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                    \
            std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, r_); \
            std::exit(1);                                                            \
        }                                                                            \
    } while (0)

struct PointerPair {
    float* first;
    const float* second;
};

static FILE* g_pointers = nullptr;

static void expect(unsigned grid_x, CUdeviceptr written, CUdeviceptr read) {
    if (g_pointers) std::fprintf(g_pointers, "%u 0x%llxw 0x%llxr\n", grid_x, (unsigned long long)written, (unsigned long long)read);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: driver_api_program FATBIN\n");
        return 2;
    }
    if (const char* path = std::getenv("TBDPROF_TEST_POINTERS")) g_pointers = std::fopen(path, "w");
    CHECK(cuInit(0));
    CUdevice device;
    CHECK(cuDeviceGet(&device, 0));
    CUcontext context;
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CUmodule module;
    CHECK(cuModuleLoad(&module, argv[1]));
    CUfunction touch, touch_pair;
    CHECK(cuModuleGetFunction(&touch, module, "_Z5touchPfPKfi"));
    CHECK(cuModuleGetFunction(&touch_pair, module, "_Z10touch_pair11PointerPairi"));

    const int n = 1024;
    const size_t bytes = n * sizeof(float);
    CUdeviceptr a, b, c, pitched, managed, async_buffer;
    size_t pitch = 0;
    CHECK(cuMemAlloc(&a, bytes));
    CHECK(cuMemAlloc(&b, bytes));
    CHECK(cuMemAlloc(&c, bytes));
    CHECK(cuMemAllocPitch(&pitched, &pitch, 100, 8, 4));
    CHECK(cuMemAllocManaged(&managed, bytes, CU_MEM_ATTACH_GLOBAL));
    void* pinned = nullptr;
    void* pinned2 = nullptr;
    CHECK(cuMemAllocHost(&pinned, bytes));
    CHECK(cuMemHostAlloc(&pinned2, bytes, 0));
    CUstream stream;
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAllocAsync(&async_buffer, bytes, stream));

    std::vector<float> host(n, 1.0f);
    CHECK(cuMemcpyHtoD(a, host.data(), bytes));
    CHECK(cuMemsetD32(b, 0x3f800000u, n));
    CHECK(cuMemsetD8Async(c, 7, bytes, stream));
    CHECK(cuMemsetD2D8(pitched, pitch, 1, 100, 8));
    CHECK(cuMemcpyDtoD(c, a, bytes));
    CHECK(cuMemcpyAsync(async_buffer, a, bytes, stream));

    // Launch through kernelParams (grid.x 11), the packed `extra` buffer (12), cuLaunchKernelEx (13),
    // a struct holding two pointers (14).
    int count = n;
    void* params[] = {&c, &a, &count};
    CHECK(cuLaunchKernel(touch, 11, 1, 1, 128, 1, 1, 0, stream, params, nullptr));
    expect(11, c, a);
    struct {
        CUdeviceptr out, in;
        int n;
        int pad;
    } packed{b, c, n, 0};
    size_t packed_size = 20;  // the kernel's parameter bytes: two pointers and an int
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                     CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(touch, 12, 1, 1, 128, 1, 1, 0, stream, nullptr, extra));
    expect(12, b, c);
    CUlaunchConfig config{};
    config.gridDimX = 13;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 128;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = stream;
    void* params_ex[] = {&async_buffer, &b, &count};
    CHECK(cuLaunchKernelEx(&config, touch, params_ex, nullptr));
    expect(13, async_buffer, b);
    PointerPair pair{reinterpret_cast<float*>(managed), reinterpret_cast<const float*>(a)};
    void* pair_params[] = {&pair, &count};
    CHECK(cuLaunchKernel(touch_pair, 14, 1, 1, 128, 1, 1, 0, stream, pair_params, nullptr));
    if (g_pointers) std::fprintf(g_pointers, "14 0x%llxw 0x%llxw\n", (unsigned long long)managed, (unsigned long long)a);

    // The same entry points as cuBLAS finds them: dlopen + dlsym(cuGetProcAddress_v2) + lookups.
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto get_proc = reinterpret_cast<GetProc>(dlsym(driver, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) return 3;
    void* entry = nullptr;
    CUdriverProcAddressQueryResult found;
    CHECK(get_proc("cuMemAlloc", &entry, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    CUdeviceptr d = 0;
    CHECK(reinterpret_cast<decltype(&cuMemAlloc_v2)>(entry)(&d, bytes));
    CHECK(get_proc("cuLaunchKernel", &entry, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &found));
    void* params_d[] = {&d, &c, &count};
    CHECK(reinterpret_cast<decltype(&cuLaunchKernel)>(entry)(touch, 15, 1, 1, 128, 1, 1, 0, nullptr, params_d, nullptr));
    expect(15, d, c);
    CHECK(get_proc("cuMemFree", &entry, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    CHECK(reinterpret_cast<decltype(&cuMemFree_v2)>(entry)(d));
    // cuGetProcAddress handing out itself must hand out our wrapper too.
    CHECK(get_proc("cuGetProcAddress", &entry, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    auto get_proc_again = reinterpret_cast<GetProc>(entry);
    CHECK(get_proc_again("cuMemsetD8", &entry, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    CHECK(reinterpret_cast<decltype(&cuMemsetD8_v2)>(entry)(c, 0, bytes));

    CHECK(cuStreamSynchronize(stream));
    CHECK(cuMemcpyDtoH(host.data(), c, bytes));
    CHECK(cuMemFreeAsync(async_buffer, stream));
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemFree(a));
    CHECK(cuMemFree(b));
    CHECK(cuMemFree(c));
    CHECK(cuMemFree(pitched));
    CHECK(cuMemFree(managed));
    CHECK(cuMemFreeHost(pinned));
    CHECK(cuMemFreeHost(pinned2));
    if (g_pointers) std::fclose(g_pointers);
    std::printf("driver_api_program: done\n");
    return 0;
}
