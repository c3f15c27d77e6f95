// Device queries, versions and error bookkeeping of the simulated libcudart.so.13.
#include <doctest/doctest.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <thread>

TEST_CASE("versions: runtime 13.0 and a driver at least as new") {
    int runtime_version = 0;
    CHECK(cudaRuntimeGetVersion(&runtime_version) == cudaSuccess);
    CHECK(runtime_version == 13000);
    int driver_version = 0;
    CHECK(cudaDriverGetVersion(&driver_version) == cudaSuccess);
    CHECK(driver_version >= 13000);
}

TEST_CASE("the default device model is a sane compute capability 9.0 GPU") {
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    REQUIRE(count >= 1);
    int device = -1;
    CHECK(cudaGetDevice(&device) == cudaSuccess);
    CHECK(device == 0);

    cudaDeviceProp prop;
    std::memset(&prop, 0xff, sizeof prop);
    REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    CHECK(std::strlen(prop.name) > 0);
    CHECK(std::strlen(prop.name) < sizeof prop.name);
    CHECK(prop.multiProcessorCount > 0);
    CHECK(prop.major == 9);
    CHECK(prop.minor == 0);
    CHECK(prop.warpSize == 32);
    CHECK(prop.maxThreadsPerBlock == 1024);
    CHECK(prop.totalGlobalMem > (size_t{1} << 30));
    CHECK(prop.sharedMemPerBlock > 0);
    CHECK(prop.l2CacheSize > 0);

    int value = 0;
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
    CHECK(value == 9);
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
    CHECK(value == prop.multiProcessorCount);

    size_t free_bytes = 0;
    size_t total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
    CHECK(total_bytes == prop.totalGlobalMem);
    CHECK(free_bytes <= total_bytes);
}

TEST_CASE("invalid device ordinals are reported and remembered once") {
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaSetDevice(count) == cudaErrorInvalidDevice);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);  // peek does not reset
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaSuccess);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, -1) == cudaErrorInvalidDevice);
    int value = 0;
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, count) == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("the last error is per thread") {
    CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);
    cudaError_t seen_by_other_thread = cudaErrorUnknown;
    std::thread other([&] { seen_by_other_thread = cudaGetLastError(); });
    other.join();
    CHECK(seen_by_other_thread == cudaSuccess);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
}

TEST_CASE("a function the simulator does not model reports cudaErrorNotSupported as the last error too") {
    CHECK(cudaGetLastError() == cudaSuccess);
    // CUDA arrays are not modelled: the exported stub answers, as the real runtime does for a failed
    // call, through the thread's last error as well.
    cudaArray_t array = nullptr;
    const cudaChannelFormatDesc format = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    CHECK(cudaMallocArray(&array, &format, 16, 16) == cudaErrorNotSupported);
    CHECK(cudaPeekAtLastError() == cudaErrorNotSupported);
    CHECK(cudaGetLastError() == cudaErrorNotSupported);
    CHECK(cudaGetLastError() == cudaSuccess);
    cudaTextureObject_t texture = 0;
    CHECK(cudaCreateTextureObject(&texture, nullptr, nullptr, nullptr) == cudaErrorNotSupported);
    std::thread other([] { CHECK(cudaGetLastError() == cudaSuccess); });  // per thread, like any error
    other.join();
    CHECK(cudaGetLastError() == cudaErrorNotSupported);
}

TEST_CASE("error names and strings are the real runtime's") {
    CHECK(std::string(cudaGetErrorName(cudaErrorMemoryAllocation)) == "cudaErrorMemoryAllocation");
    CHECK(std::string(cudaGetErrorString(cudaErrorMemoryAllocation)) == "out of memory");
    CHECK(std::string(cudaGetErrorString(cudaErrorInvalidValue)) == "invalid argument");
    CHECK(std::string(cudaGetErrorString(cudaErrorInvalidResourceHandle)) == "invalid resource handle");
    CHECK(std::string(cudaGetErrorString(cudaErrorNotReady)) == "device not ready");
    CHECK(std::string(cudaGetErrorName(cudaSuccess)) == "cudaSuccess");
    CHECK(std::string(cudaGetErrorName(static_cast<cudaError_t>(12345))) == "unrecognized error code");
}

TEST_CASE("device flags round-trip and cudaDeviceReset leaves a usable device") {
    unsigned flags = 0;
    CHECK(cudaGetDeviceFlags(&flags) == cudaSuccess);
    CHECK((flags & cudaDeviceMapHost) != 0);
    CHECK(cudaSetDeviceFlags(0x100) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);

    CHECK(cudaFree(nullptr) == cudaSuccess);  // the initialisation idiom
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaDeviceReset() == cudaSuccess);
    void* pointer = nullptr;
    CHECK(cudaMalloc(&pointer, 256) == cudaSuccess);
    CHECK(pointer != nullptr);
    CHECK(cudaFree(pointer) == cudaSuccess);
}

TEST_CASE("driver entry points are handed out through cuGetProcAddress") {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    CHECK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &function, 12000, cudaEnableDefault, &status) ==
          cudaSuccess);
    CHECK(status == cudaDriverEntryPointSuccess);
    CHECK(function != nullptr);

    function = reinterpret_cast<void*>(0x1);
    CHECK(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &function, 12000, cudaEnableDefault, &status) ==
          cudaSuccess);
    CHECK(status == cudaDriverEntryPointSymbolNotFound);
    CHECK(function == nullptr);
}

TEST_CASE("profiler control is accepted") {
    CHECK(cudaProfilerStart() == cudaSuccess);
    CHECK(cudaProfilerStop() == cudaSuccess);
}
