// An expandable segment the way PyTorch builds one with the driver's virtual memory API: reserve a
// large range, map 2 MiB chunks into it as the segment grows (each with read-write access), use
// memory across the chunk boundary, then unmap the whole segment at once and release everything.
// Next to it an ordinary cuMemAlloc buffer.
#include <cuda.h>

#include <cstdio>
#include <vector>

#define CHECK(call)                                                                 \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != CUDA_SUCCESS) {                                                   \
            std::fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, r_); \
            return 1;                                                               \
        }                                                                           \
    } while (0)

int main() {
    CHECK(cuInit(0));
    CUdevice device = 0;
    CHECK(cuDeviceGet(&device, 0));
    CUcontext context = nullptr;
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));

    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    size_t chunk = 0;
    CHECK(cuMemGetAllocationGranularity(&chunk, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    const size_t reserved = 16 * chunk;
    CUdeviceptr segment = 0;
    CHECK(cuMemAddressReserve(&segment, reserved, 0, 0, 0));
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    CUdeviceptr plain = 0;
    CHECK(cuMemAlloc(&plain, 1 << 20));
    std::vector<unsigned char> host(2 * chunk, 7);
    std::vector<CUmemGenericAllocationHandle> handles;
    for (int i = 0; i < 3; ++i) {  // the segment grows by one chunk three times
        CUmemGenericAllocationHandle handle = 0;
        CHECK(cuMemCreate(&handle, chunk, &prop, 0));
        CHECK(cuMemMap(segment + i * chunk, chunk, 0, handle, 0));
        CHECK(cuMemSetAccess(segment + i * chunk, chunk, &access, 1));
        handles.push_back(handle);
    }
    CHECK(cuMemcpyHtoD(segment + chunk / 2, host.data(), 2 * chunk));  // spans three chunks
    CHECK(cuMemcpyDtoD(plain, segment + chunk - 512, 1024));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemUnmap(segment, 3 * chunk));
    for (CUmemGenericAllocationHandle h : handles) CHECK(cuMemRelease(h));
    CHECK(cuMemAddressFree(segment, reserved));
    CHECK(cuMemFree(plain));
    CHECK(cuDevicePrimaryCtxRelease(device));
    std::printf("ok\n");
    return 0;
}
