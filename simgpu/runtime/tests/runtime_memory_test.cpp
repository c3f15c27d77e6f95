// Allocation, copies and sets through the simulated libcudart.so.13: data must round-trip exactly and
// misuse must produce the real runtime's error codes.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

TEST_CASE("cudaFree of a pointer that was never allocated is an invalid value") {
    int not_device_memory = 0;
    CHECK(cudaFree(&not_device_memory) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("allocating beyond the device's capacity fails with cudaErrorMemoryAllocation, reported once") {
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    REQUIRE(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
    void* pointer = reinterpret_cast<void*>(0x1);
    CHECK(cudaMalloc(&pointer, total_bytes * 2) == cudaErrorMemoryAllocation);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaGetLastError() == cudaSuccess);
    // The failure is not sticky: ordinary allocations keep working.
    CHECK(cudaMalloc(&pointer, 1024) == cudaSuccess);
    CHECK(cudaFree(pointer) == cudaSuccess);
}

TEST_CASE("zero-byte and null arguments") {
    void* pointer = reinterpret_cast<void*>(0x1);
    CHECK(cudaMalloc(&pointer, 0) == cudaSuccess);
    CHECK(pointer == nullptr);
    CHECK(cudaMalloc(nullptr, 16) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaFreeHost(nullptr) == cudaSuccess);
    // Pinned host memory of 0 bytes: success and NULL, as for cudaMalloc (frameworks pin empty buffers).
    pointer = reinterpret_cast<void*>(0x1);
    CHECK(cudaMallocHost(&pointer, 0) == cudaSuccess);
    CHECK(pointer == nullptr);
    pointer = reinterpret_cast<void*>(0x1);
    CHECK(cudaHostAlloc(&pointer, 0, cudaHostAllocPortable) == cudaSuccess);
    CHECK(pointer == nullptr);
    CHECK(cudaFreeHost(pointer) == cudaSuccess);
    CHECK(cudaHostAlloc(nullptr, 0, 0) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

TEST_CASE("functions the simulator does not model return cudaErrorNotSupported") {
    cudaArray_t array = nullptr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    CHECK(desc.x == 32);
    CHECK(desc.f == cudaChannelFormatKindFloat);
    CHECK(cudaMallocArray(&array, &desc, 16, 16, 0) == cudaErrorNotSupported);
    CHECK(cudaGraphicsUnregisterResource(nullptr) == cudaErrorNotSupported);
}

TEST_CASE("H2D, D2D, memset and D2H round-trip the bytes") {
    constexpr size_t kCount = 1 << 16;
    std::vector<uint32_t> source(kCount);
    std::iota(source.begin(), source.end(), 7u);
    void* first = nullptr;
    void* second = nullptr;
    REQUIRE(cudaMalloc(&first, kCount * 4) == cudaSuccess);
    REQUIRE(cudaMalloc(&second, kCount * 4) == cudaSuccess);
    CHECK(cudaMemcpy(first, source.data(), kCount * 4, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(second, first, kCount * 4, cudaMemcpyDeviceToDevice) == cudaSuccess);
    // Overwrite the second quarter with 0xAB bytes.
    CHECK(cudaMemset(static_cast<char*>(second) + kCount, 0xAB, kCount) == cudaSuccess);
    std::vector<uint32_t> result(kCount, 0);
    CHECK(cudaMemcpy(result.data(), second, kCount * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (size_t i = 0; i < kCount; ++i) {
        const uint32_t expected = (i >= kCount / 4 && i < kCount / 2) ? 0xABABABABu : source[i];
        if (result[i] != expected) {
            FAIL_CHECK("mismatch at " << i << ": " << result[i] << " != " << expected);
            break;
        }
    }
    // cudaMemcpyDefault lets the driver tell the direction from the pointers.
    std::vector<uint32_t> again(kCount, 0);
    CHECK(cudaMemcpy(again.data(), first, kCount * 4, cudaMemcpyDefault) == cudaSuccess);
    CHECK(again == source);
    CHECK(cudaMemcpy(again.data(), first, 4, static_cast<cudaMemcpyKind>(7)) == cudaErrorInvalidMemcpyDirection);
    CHECK(cudaGetLastError() == cudaErrorInvalidMemcpyDirection);
    CHECK(cudaFree(first) == cudaSuccess);
    CHECK(cudaFree(second) == cudaSuccess);
}

TEST_CASE("cudaMemcpy2D into pitched memory and back") {
    constexpr size_t kWidth = 100;  // bytes per row
    constexpr size_t kHeight = 37;
    void* device = nullptr;
    size_t pitch = 0;
    REQUIRE(cudaMallocPitch(&device, &pitch, kWidth, kHeight) == cudaSuccess);
    CHECK(pitch >= kWidth);
    std::vector<unsigned char> host(kWidth * kHeight);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 31 + 5);
    CHECK(cudaMemcpy2D(device, pitch, host.data(), kWidth, kWidth, kHeight, cudaMemcpyHostToDevice) == cudaSuccess);
    // Read back into a wider host layout, then compare row by row.
    constexpr size_t kHostPitch = 128;
    std::vector<unsigned char> back(kHostPitch * kHeight, 0);
    CHECK(cudaMemcpy2D(back.data(), kHostPitch, device, pitch, kWidth, kHeight, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
    bool rows_match = true;
    for (size_t row = 0; row < kHeight; ++row) {
        for (size_t column = 0; column < kWidth; ++column) {
            rows_match = rows_match && back[row * kHostPitch + column] == host[row * kWidth + column];
        }
        rows_match = rows_match && back[row * kHostPitch + kWidth] == 0;  // padding untouched
    }
    CHECK(rows_match);
    CHECK(cudaMemset2D(device, pitch, 0x11, kWidth / 2, kHeight) == cudaSuccess);
    CHECK(cudaMemcpy2D(back.data(), kHostPitch, device, pitch, kWidth, kHeight, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
    CHECK(back[0] == 0x11);
    CHECK(back[kWidth / 2] == host[kWidth / 2]);
    CHECK(cudaMemcpy2D(back.data(), 10, device, pitch, 20, 2, cudaMemcpyDeviceToHost) == cudaErrorInvalidPitchValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidPitchValue);
    CHECK(cudaFree(device) == cudaSuccess);
}

TEST_CASE("stream-ordered allocation, async copies and frees") {
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    constexpr size_t kBytes = 4096;
    void* device = nullptr;
    REQUIRE(cudaMallocAsync(&device, kBytes, stream) == cudaSuccess);
    REQUIRE(device != nullptr);
    void* pinned = nullptr;
    REQUIRE(cudaMallocHost(&pinned, kBytes) == cudaSuccess);
    std::memset(pinned, 0x5A, kBytes);
    CHECK(cudaMemcpyAsync(device, pinned, kBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    CHECK(cudaMemsetAsync(device, 0x3C, 16, stream) == cudaSuccess);
    std::vector<unsigned char> back(kBytes, 0);
    CHECK(cudaMemcpyAsync(back.data(), device, kBytes, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    CHECK(cudaFreeAsync(device, stream) == cudaSuccess);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(back[0] == 0x3C);
    CHECK(back[15] == 0x3C);
    CHECK(back[16] == 0x5A);
    CHECK(back[kBytes - 1] == 0x5A);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("pointer attributes tell device, pinned, managed and pageable memory apart") {
    void* device = nullptr;
    void* pinned = nullptr;
    void* managed = nullptr;
    REQUIRE(cudaMalloc(&device, 64) == cudaSuccess);
    REQUIRE(cudaHostAlloc(&pinned, 64, cudaHostAllocDefault) == cudaSuccess);
    REQUIRE(cudaMallocManaged(&managed, 64, cudaMemAttachGlobal) == cudaSuccess);
    int pageable = 0;
    cudaPointerAttributes attributes{};
    CHECK(cudaPointerGetAttributes(&attributes, device) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeDevice);
    CHECK(attributes.device == 0);
    CHECK(attributes.devicePointer == device);
    CHECK(cudaPointerGetAttributes(&attributes, pinned) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeHost);
    CHECK(attributes.hostPointer == pinned);
    CHECK(cudaPointerGetAttributes(&attributes, managed) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeManaged);
    CHECK(cudaPointerGetAttributes(&attributes, &pageable) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeUnregistered);
    CHECK(cudaFree(device) == cudaSuccess);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    CHECK(cudaFree(managed) == cudaSuccess);
}
