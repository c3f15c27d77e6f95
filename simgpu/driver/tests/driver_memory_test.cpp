// Memory: capacity, errors the real driver returns, real bytes behind device pointers.
#include "driver_test_support.h"

#include <cstring>
#include <vector>

TEST_CASE("allocations move real bytes through copies and sets") {
    use_primary_context();
    RecordLog log;
    const size_t n = 4096;
    CUdeviceptr a = 0, b = 0;
    CHECK_CU(cuMemAlloc(&a, n));
    CHECK_CU(cuMemAlloc(&b, n));
    CHECK_EQ(a % 256, 0u);
    std::vector<unsigned char> host(n), back(n, 0);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 7);
    CHECK_CU(cuMemcpyHtoD(a, host.data(), n));
    CHECK_CU(cuMemcpyDtoD(b, a, n));
    CHECK_CU(cuMemcpyDtoH(back.data(), b, n));
    CHECK(back == host);
    CHECK_CU(cuMemsetD32(b, 0xdeadbeef, n / 4));
    CHECK_CU(cuMemcpyDtoH(back.data(), b, n));
    uint32_t word = 0;
    std::memcpy(&word, back.data() + 100, 4);
    CHECK_EQ(word, 0xdeadbeefu);

    auto copies = log.records(TBDSIM_RECORD_MEMCPY);
    REQUIRE_EQ(copies.size(), 4u);
    CHECK_EQ(copies[0].sub_kind, TBDSIM_COPY_HTOD);
    CHECK_EQ(copies[1].sub_kind, TBDSIM_COPY_DTOD);
    CHECK_EQ(copies[2].sub_kind, TBDSIM_COPY_DTOH);
    CHECK_EQ(copies[0].bytes, n);
    CHECK_EQ(copies[0].address, a);
    CHECK_EQ(log.records(TBDSIM_RECORD_MEMSET).size(), 1u);
    auto allocs = log.records(TBDSIM_RECORD_ALLOC);
    REQUIRE_EQ(allocs.size(), 2u);
    CHECK_EQ(allocs[0].address, a);
    CHECK_EQ(allocs[0].bytes, n);
    CHECK_CU(cuMemFree(a));
    CHECK_CU(cuMemFree(b));
    CHECK_EQ(log.records(TBDSIM_RECORD_FREE).size(), 2u);
}

TEST_CASE("misuse returns the real error codes") {
    use_primary_context();
    CUdeviceptr p = 0;
    size_t free_before = 0, total = 0;
    CHECK_CU(cuMemGetInfo(&free_before, &total));
    CHECK_EQ(total, 80ull << 30);
    SUBCASE("out of memory leaves nothing allocated") {
        CHECK_EQ(cuMemAlloc(&p, total + 1), CUDA_ERROR_OUT_OF_MEMORY);
        size_t free_after = 0;
        CHECK_CU(cuMemGetInfo(&free_after, &total));
        CHECK_EQ(free_after, free_before);
    }
    SUBCASE("zero bytes") {
        CHECK_EQ(cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
    }
    SUBCASE("freeing what was never allocated, or twice") {
        int local = 0;
        CHECK_EQ(cuMemFree(reinterpret_cast<CUdeviceptr>(&local)), CUDA_ERROR_INVALID_VALUE);
        CHECK_CU(cuMemAlloc(&p, 64));
        CHECK_CU(cuMemFree(p));
        CHECK_EQ(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
    }
    SUBCASE("copies outside an allocation") {
        CHECK_CU(cuMemAlloc(&p, 64));
        std::vector<char> host(128);
        CHECK_EQ(cuMemcpyHtoD(p, host.data(), 128), CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(host.data()), host.data(), 8), CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ(cuMemsetD8(p + 60, 0, 8), CUDA_ERROR_INVALID_VALUE);
        CHECK_CU(cuMemFree(p));
    }
    SUBCASE("host memory freed with the device call and the reverse") {
        void* host = nullptr;
        CHECK_CU(cuMemAllocHost(&host, 256));
        CHECK_EQ(cuMemFree(reinterpret_cast<CUdeviceptr>(host)), CUDA_ERROR_INVALID_VALUE);
        CHECK_CU(cuMemFreeHost(host));
        CHECK_CU(cuMemAlloc(&p, 64));
        CHECK_EQ(cuMemFreeHost(reinterpret_cast<void*>(p)), CUDA_ERROR_INVALID_VALUE);
        CHECK_CU(cuMemFree(p));
    }
    SUBCASE("invalid stream handle") {
        CHECK_CU(cuMemAlloc(&p, 64));
        int bogus = 0;
        CHECK_EQ(cuMemsetD8Async(p, 0, 64, reinterpret_cast<CUstream>(&bogus)), CUDA_ERROR_INVALID_HANDLE);
        CHECK_EQ(cuMemAllocAsync(&p, 64, reinterpret_cast<CUstream>(&bogus)), CUDA_ERROR_INVALID_HANDLE);
        CHECK_CU(cuMemFree(p));
    }
}

TEST_CASE("capacity is accounted and returned") {
    use_primary_context();
    size_t free0 = 0, total = 0;
    CHECK_CU(cuMemGetInfo(&free0, &total));
    CUdeviceptr big = 0;
    CHECK_CU(cuMemAlloc(&big, 1ull << 30));  // host pages are reserved lazily, so 1 GiB is cheap
    size_t free1 = 0;
    CHECK_CU(cuMemGetInfo(&free1, &total));
    CHECK_EQ(free0 - free1, 1ull << 30);
    CHECK_CU(cuMemFree(big));
    CHECK_CU(cuMemGetInfo(&free1, &total));
    CHECK_EQ(free1, free0);
}

TEST_CASE("stream-ordered, pinned and managed allocations") {
    use_primary_context();
    RecordLog log;
    CUstream s = nullptr;
    CHECK_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a = 0, m = 0;
    void* h = nullptr;
    CHECK_CU(cuMemAllocAsync(&a, 1000, s));
    CHECK_CU(cuMemAllocManaged(&m, 2000, CU_MEM_ATTACH_GLOBAL));
    CHECK_CU(cuMemAllocHost(&h, 3000));
    unsigned type = 0;
    CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(h)));
    CHECK_EQ(type, CU_MEMORYTYPE_HOST);
    CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a + 10));
    CHECK_EQ(type, CU_MEMORYTYPE_DEVICE);
    CHECK_CU(cuMemFreeAsync(a, s));
    CHECK_CU(cuMemFree(m));
    CHECK_CU(cuMemFreeHost(h));
    CHECK_CU(cuStreamSynchronize(s));
    CHECK_CU(cuStreamDestroy(s));
    auto allocs = log.records(TBDSIM_RECORD_ALLOC);
    REQUIRE_EQ(allocs.size(), 3u);
    CHECK_EQ(allocs[0].sub_kind, TBDSIM_MEMORY_DEVICE_ASYNC);
    CHECK_NE(allocs[0].stream_id, 0u);
    CHECK_EQ(allocs[1].sub_kind, TBDSIM_MEMORY_MANAGED);
    CHECK_EQ(allocs[2].sub_kind, TBDSIM_MEMORY_PINNED_HOST);
    CHECK_EQ(log.records(TBDSIM_RECORD_FREE).size(), 3u);
}
