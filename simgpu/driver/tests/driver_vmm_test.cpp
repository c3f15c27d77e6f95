// Virtual memory management as PyTorch's expandable segments use it: reserve, create, map, grant
// access, copy through the mapping, grow the segment with a second chunk, unmap, release, free.
#include "driver_test_support.h"

#include <cstring>
#include <vector>

namespace {

CUmemAllocationProp device_prop() {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}

CUresult grant(CUdeviceptr ptr, size_t bytes) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return cuMemSetAccess(ptr, bytes, &access, 1);
}

}  // namespace

TEST_CASE("reserve, create, map and access memory; a segment grows by mapping another chunk") {
    use_primary_context();
    RecordLog log;
    const CUmemAllocationProp prop = device_prop();
    size_t granularity = 0;
    CHECK_CU(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    CHECK_EQ(granularity, size_t(2) << 20);
    size_t free_before = 0, total = 0;
    CHECK_CU(cuMemGetInfo(&free_before, &total));

    CUdeviceptr base = 0;
    CHECK_CU(cuMemAddressReserve(&base, 8 * granularity, 0, 0, 0));
    CHECK_EQ(base % granularity, 0u);
    CUmemGenericAllocationHandle first = 0, second = 0;
    CHECK_CU(cuMemCreate(&first, granularity, &prop, 0));
    CHECK_CU(cuMemCreate(&second, granularity, &prop, 0));
    size_t free_after_create = 0;
    CHECK_CU(cuMemGetInfo(&free_after_create, &total));
    CHECK_EQ(free_before - free_after_create, 2 * granularity);  // physical memory is what counts

    CHECK_CU(cuMemMap(base, granularity, 0, first, 0));
    std::vector<unsigned char> bytes(granularity, 0x5A), back(granularity, 0);
    CHECK_EQ(cuMemcpyHtoD(base, bytes.data(), 64), CUDA_ERROR_INVALID_VALUE);  // no access granted yet
    CHECK_CU(grant(base, granularity));
    unsigned long long flags = 0;
    CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CHECK_CU(cuMemGetAccess(&flags, &location, base));
    CHECK_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK_CU(cuMemcpyHtoD(base, bytes.data(), granularity));

    // The segment grows: the next chunk right after the first; a copy may span both.
    CHECK_CU(cuMemMap(base + granularity, granularity, 0, second, 0));
    CHECK_CU(grant(base + granularity, granularity));
    CHECK_CU(cuMemsetD8(base + granularity - 16, 0x11, 32));
    CHECK_CU(cuMemcpyDtoH(back.data(), base + granularity - 16, 32));
    CHECK_EQ(back[0], 0x11);
    CHECK_EQ(back[31], 0x11);
    CUdeviceptr range_base = 0;
    size_t range_bytes = 0;
    CHECK_CU(cuMemGetAddressRange(&range_base, &range_bytes, base + granularity + 5));
    CHECK_EQ(range_base, base + granularity);
    CHECK_EQ(range_bytes, granularity);

    // The same physical memory through a second mapping shows the same bytes.
    CHECK_CU(cuMemMap(base + 4 * granularity, granularity, 0, first, 0));
    CHECK_CU(grant(base + 4 * granularity, granularity));
    CHECK_CU(cuMemcpyDtoH(back.data(), base + 4 * granularity, 64));
    CHECK_EQ(back[0], 0x5A);

    CUmemGenericAllocationHandle retained = 0;
    CHECK_CU(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(base + 4 * granularity)));
    CHECK_EQ(retained, first);
    CHECK_CU(cuMemRelease(retained));
    CUmemAllocationProp read_back{};
    CHECK_CU(cuMemGetAllocationPropertiesFromHandle(&read_back, second));
    CHECK_EQ(read_back.location.id, 0);

    // Misuse: overlapping or unaligned maps, partial unmaps, freeing a mapping or a mapped reservation.
    CHECK_EQ(cuMemMap(base, granularity, 0, second, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuMemMap(base + 6 * granularity + 4096, granularity, 0, second, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuMemUnmap(base, granularity / 2), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuMemFree(base), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuMemAddressFree(base, 8 * granularity), CUDA_ERROR_INVALID_VALUE);
    // A file-descriptor handle may be asked for (PyTorch does), not exported; other types are refused.
    CUmemAllocationProp shareable = prop;
    shareable.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle ipc = 0;
    CHECK_CU(cuMemCreate(&ipc, granularity, &shareable, 0));
    int fd = -1;
    CHECK_EQ(cuMemExportToShareableHandle(&fd, ipc, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
             CUDA_ERROR_NOT_SUPPORTED);
    CHECK_CU(cuMemRelease(ipc));
    shareable.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    CHECK_EQ(cuMemCreate(&ipc, granularity, &shareable, 0), CUDA_ERROR_NOT_SUPPORTED);

    // Releasing the handles keeps the memory while it is mapped; unmapping everything frees it.
    CHECK_CU(cuMemRelease(first));
    CHECK_CU(cuMemRelease(second));
    CHECK_CU(cuMemcpyDtoH(back.data(), base, 64));
    CHECK_EQ(back[63], 0x5A);
    CHECK_CU(cuMemUnmap(base, 8 * granularity));
    size_t free_end = 0;
    CHECK_CU(cuMemGetInfo(&free_end, &total));
    CHECK_EQ(free_end, free_before);
    CHECK_CU(cuMemAddressFree(base, 8 * granularity));

    // Each mapping was an allocation from map to unmap, of the mapped kind (not a cuMemAlloc).
    const auto allocs = log.records(TBDSIM_RECORD_ALLOC);
    const auto frees = log.records(TBDSIM_RECORD_FREE);
    CHECK_EQ(allocs.size(), 3u);
    CHECK_EQ(frees.size(), 3u);
    for (const auto& r : allocs) {
        CHECK_EQ(r.bytes, granularity);
        CHECK_EQ(r.sub_kind, uint32_t(TBDSIM_MEMORY_DEVICE_MAPPED));
    }
}
