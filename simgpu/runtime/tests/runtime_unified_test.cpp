// Memory beyond cudaMalloc: managed-memory advice and prefetch (CUDA 13 forms), host registration,
// stream-ordered pools, and peer access and copies between two simulated devices (the test runs with
// TBDSIM_DEVICE_COUNT=2).
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <cstdint>
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

TEST_CASE("stream-ordered pools: create, allocate, attributes, trim, the device's current pool") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);  // the peer test above ends on device 1
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    REQUIRE(cudaMemPoolCreate(&pool, &props) == cudaSuccess);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    void* a = nullptr;
    void* b = nullptr;
    CHECK(cudaMallocFromPoolAsync(&a, 1 << 20, pool, stream) == cudaSuccess);
    CHECK(cudaMallocFromPoolAsync(&b, 3 << 20, pool, stream) == cudaSuccess);
    uint64_t used = 0, high = 0, threshold = 64 << 20;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) == cudaSuccess);
    threshold = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) == cudaSuccess);
    CHECK(threshold == (64u << 20));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
    CHECK(used == (4u << 20));
    CHECK(cudaFreeAsync(b, stream) == cudaSuccess);
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
    CHECK(used == (1u << 20));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high) == cudaSuccess);
    CHECK(high == (4u << 20));
    uint64_t zero = 0;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero) == cudaSuccess);  // reset
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high) == cudaSuccess);
    CHECK(high == (1u << 20));
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &zero) == cudaErrorInvalidValue);
    CHECK(cudaMemPoolTrimTo(pool, 0) == cudaSuccess);

    // cudaMallocAsync follows the device's current pool; the default pool is separate.
    cudaMemPool_t default_pool = nullptr, current = nullptr;
    CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0) == cudaSuccess);
    CHECK(default_pool != pool);
    CHECK(cudaDeviceSetMemPool(0, pool) == cudaSuccess);
    CHECK(cudaDeviceGetMemPool(&current, 0) == cudaSuccess);
    CHECK(current == pool);
    void* c = nullptr;
    CHECK(cudaMallocAsync(&c, 1 << 20, stream) == cudaSuccess);
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
    CHECK(used == (2u << 20));
    CHECK(cudaMemPoolGetAttribute(default_pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
    CHECK(used == 0);
    CHECK(cudaDeviceSetMemPool(0, default_pool) == cudaSuccess);
    CHECK(cudaFreeAsync(a, stream) == cudaSuccess);
    CHECK(cudaFreeAsync(c, stream) == cudaSuccess);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(cudaMemPoolDestroy(pool) == cudaSuccess);
    CHECK(cudaMallocFromPoolAsync(&a, 16, pool, stream) == cudaErrorInvalidValue);
    CHECK(cudaMemPoolDestroy(default_pool) == cudaErrorInvalidValue);
    cudaGetLastError();
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    CHECK(cudaMemPoolCreate(&pool, &props) == cudaErrorNotSupported);
    cudaGetLastError();
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
