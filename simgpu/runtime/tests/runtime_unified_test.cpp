// Managed-memory advice and prefetch (CUDA 13 forms), host registration, and peer access and copies
// between two simulated devices (the test runs with TBDSIM_DEVICE_COUNT=2).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

TEST_CASE("cudaMemAdvise and cudaMemPrefetchAsync accept managed ranges and refuse the rest") {
    constexpr size_t kBytes = 1 << 20;
    void* managed = nullptr;
    REQUIRE(cudaMallocManaged(&managed, kBytes) == cudaSuccess);
    cudaMemLocation device0{cudaMemLocationTypeDevice, 0};
    cudaMemLocation host{cudaMemLocationTypeHost, 0};
    CHECK(cudaMemAdvise(managed, kBytes, cudaMemAdviseSetPreferredLocation, device0) == cudaSuccess);
    CHECK(cudaMemAdvise(managed, kBytes, cudaMemAdviseSetAccessedBy, host) == cudaSuccess);
    CHECK(cudaMemAdvise(managed, kBytes / 2, cudaMemAdviseSetReadMostly, cudaMemLocation{}) == cudaSuccess);
    CHECK(cudaMemPrefetchAsync(managed, kBytes, device0, 0, nullptr) == cudaSuccess);
    CHECK(cudaMemPrefetchAsync(managed, kBytes, host, 0, nullptr) == cudaSuccess);
    CHECK(cudaStreamSynchronize(nullptr) == cudaSuccess);
    // Not managed, past the end, a bad device, bad flags.
    void* device = nullptr;
    REQUIRE(cudaMalloc(&device, kBytes) == cudaSuccess);
    CHECK(cudaMemAdvise(device, kBytes, cudaMemAdviseSetPreferredLocation, device0) == cudaErrorInvalidValue);
    CHECK(cudaMemPrefetchAsync(managed, 2 * kBytes, device0, 0, nullptr) == cudaErrorInvalidValue);
    CHECK(cudaMemPrefetchAsync(managed, kBytes, cudaMemLocation{cudaMemLocationTypeDevice, 7}, 0, nullptr) ==
          cudaErrorInvalidValue);
    CHECK(cudaMemPrefetchAsync(managed, kBytes, device0, 1, nullptr) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaFree(device) == cudaSuccess);
    CHECK(cudaFree(managed) == cudaSuccess);
}

TEST_CASE("registered host memory is pinned until unregistered") {
    std::vector<char> buffer(1 << 16, 3);
    CHECK(cudaHostRegister(buffer.data(), buffer.size(), cudaHostRegisterDefault) == cudaSuccess);
    cudaPointerAttributes attributes{};
    CHECK(cudaPointerGetAttributes(&attributes, buffer.data()) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeHost);
    void* mapped = nullptr;
    CHECK(cudaHostGetDevicePointer(&mapped, buffer.data(), 0) == cudaSuccess);
    CHECK(mapped == buffer.data());
    CHECK(cudaHostRegister(buffer.data() + 100, 100, 0) == cudaErrorHostMemoryAlreadyRegistered);
    CHECK(cudaFreeHost(buffer.data()) == cudaErrorInvalidValue);  // the program's memory, not the runtime's
    CHECK(cudaHostUnregister(buffer.data()) == cudaSuccess);
    CHECK(cudaHostUnregister(buffer.data()) == cudaErrorHostMemoryNotRegistered);
    CHECK(cudaPointerGetAttributes(&attributes, buffer.data()) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeUnregistered);
    CHECK(buffer[0] == 3);
    cudaGetLastError();
}

TEST_CASE("peer access and peer copies between two devices") {
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    REQUIRE(count == 2);
    int can = -1;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
    CHECK(can == 1);
    CHECK(cudaDeviceCanAccessPeer(&can, 1, 1) == cudaSuccess);
    CHECK(can == 0);

    constexpr size_t kBytes = 4096;
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    void* on1 = nullptr;
    REQUIRE(cudaMalloc(&on1, kBytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    void* on0 = nullptr;
    REQUIRE(cudaMalloc(&on0, kBytes) == cudaSuccess);
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled);
    CHECK(cudaGetLastError() == cudaErrorPeerAccessAlreadyEnabled);
    CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorInvalidDevice);  // itself
    cudaGetLastError();

    std::vector<unsigned char> host(kBytes, 0x42), back(kBytes, 0);
    CHECK(cudaMemcpy(on0, host.data(), kBytes, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpyPeer(on1, 1, on0, 0, kBytes) == cudaSuccess);
    CHECK(cudaMemset(on0, 0, kBytes) == cudaSuccess);
    CHECK(cudaMemcpyPeerAsync(on0, 0, on1, 1, kBytes / 2, nullptr) == cudaSuccess);
    CHECK(cudaMemcpy(back.data(), on0, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[0] == 0x42);
    CHECK(back[kBytes / 2 - 1] == 0x42);
    CHECK(back[kBytes / 2] == 0);
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaSuccess);
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled);
    cudaGetLastError();
    CHECK(cudaFree(on0) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    CHECK(cudaFree(on1) == cudaSuccess);
}
