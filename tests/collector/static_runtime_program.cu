// nvcc's default build: the static CUDA runtime linked in. Three ways to reach the GPU:
//   static_runtime_program runtime   runtime API calls (the static runtime asks the driver for NVIDIA's
//                                    private interfaces: the simulated GPU cannot serve it)
//   static_runtime_program driver    the driver API only, linked against libcuda, in a context of its
//                                    own (cuCtxCreate); the static runtime is linked but never used
//   static_runtime_program proc      the driver reached only through cuGetProcAddress, as the static
//                                    runtime reaches it on a real GPU
// Each does 3 allocations of 1 MiB, a copy in and a copy out, and frees them.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kBytes = 1 << 20;

int fail(const char* what, int code) {
    std::fprintf(stderr, "static_runtime_program: %s failed (%d)\n", what, code);
    return 1;
}

int with_runtime() {
    std::vector<char> host(kBytes, 1);
    for (int i = 0; i < 3; ++i) {
        void* p = nullptr;
        if (cudaError_t e = cudaMalloc(&p, kBytes); e != cudaSuccess) return fail("cudaMalloc", e);
        if (cudaError_t e = cudaMemcpy(p, host.data(), kBytes, cudaMemcpyHostToDevice); e != cudaSuccess)
            return fail("cudaMemcpy", e);
        if (cudaError_t e = cudaFree(p); e != cudaSuccess) return fail("cudaFree", e);
    }
    return 0;
}

struct Driver {
    decltype(&cuInit) init;
    decltype(&cuDeviceGet) device_get;
    decltype(&cuCtxCreate) ctx_create;
    decltype(&cuCtxDestroy) ctx_destroy;
    decltype(&cuMemAlloc) mem_alloc;
    decltype(&cuMemFree) mem_free;
    decltype(&cuMemcpyHtoD) htod;
    decltype(&cuMemcpyDtoH) dtoh;
};

int run(const Driver& d) {
    CUdevice device = 0;
    CUcontext context = nullptr;
    if (CUresult r = d.init(0); r != CUDA_SUCCESS) return fail("cuInit", r);
    if (CUresult r = d.device_get(&device, 0); r != CUDA_SUCCESS) return fail("cuDeviceGet", r);
    if (CUresult r = d.ctx_create(&context, nullptr, 0, device); r != CUDA_SUCCESS) return fail("cuCtxCreate", r);
    std::vector<char> host(kBytes, 2), back(kBytes, 0);
    for (int i = 0; i < 3; ++i) {
        CUdeviceptr p = 0;
        if (CUresult r = d.mem_alloc(&p, kBytes); r != CUDA_SUCCESS) return fail("cuMemAlloc", r);
        if (CUresult r = d.htod(p, host.data(), kBytes); r != CUDA_SUCCESS) return fail("cuMemcpyHtoD", r);
        if (CUresult r = d.dtoh(back.data(), p, kBytes); r != CUDA_SUCCESS) return fail("cuMemcpyDtoH", r);
        if (back != host) return fail("round trip", 0);
        if (CUresult r = d.mem_free(p); r != CUDA_SUCCESS) return fail("cuMemFree", r);
    }
    if (CUresult r = d.ctx_destroy(context); r != CUDA_SUCCESS) return fail("cuCtxDestroy", r);
    return 0;
}

template <typename Fn>
bool resolve(decltype(&cuGetProcAddress_v2) get, const char* name, Fn& out) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult found{};
    if (get(name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS) return false;
    out = reinterpret_cast<Fn>(p);
    return found == CU_GET_PROC_ADDRESS_SUCCESS && p != nullptr;
}

int through_proc_address() {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return fail("dlopen libcuda.so.1", 0);
    auto get = reinterpret_cast<decltype(&cuGetProcAddress_v2)>(dlsym(library, "cuGetProcAddress_v2"));
    if (get == nullptr) return fail("cuGetProcAddress_v2", 0);
    Driver d{};
    if (!resolve(get, "cuInit", d.init) || !resolve(get, "cuDeviceGet", d.device_get) ||
        !resolve(get, "cuCtxCreate", d.ctx_create) || !resolve(get, "cuCtxDestroy", d.ctx_destroy) ||
        !resolve(get, "cuMemAlloc", d.mem_alloc) || !resolve(get, "cuMemFree", d.mem_free) ||
        !resolve(get, "cuMemcpyHtoD", d.htod) || !resolve(get, "cuMemcpyDtoH", d.dtoh))
        return fail("cuGetProcAddress", 0);
    return run(d);
}

}  // namespace

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "runtime") == 0) return with_runtime();
    if (std::strcmp(mode, "driver") == 0)
        return run({cuInit, cuDeviceGet, cuCtxCreate, cuCtxDestroy, cuMemAlloc, cuMemFree, cuMemcpyHtoD, cuMemcpyDtoH});
    if (std::strcmp(mode, "proc") == 0) return through_proc_address();
    std::fprintf(stderr, "usage: static_runtime_program runtime|driver|proc\n");
    return 2;
}
