// Contexts the program creates (cuCtxCreate v2-v4) and destroys, and the context stack around them;
// every (name, version) of cudaTypedefs.h served by cuGetProcAddress; unsupported entry points.
#include "driver_test_support.h"

#include <dlfcn.h>

#include <cstring>

namespace {

using CreateV2 = CUresult (*)(CUcontext*, unsigned, CUdevice);
using CreateV3 = CUresult (*)(CUcontext*, CUexecAffinityParam*, int, unsigned, CUdevice);

template <typename Fn>
Fn entry(const char* name, int version) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status{};
    REQUIRE_EQ(cuGetProcAddress_v2(name, &p, version, 0, &status), CUDA_SUCCESS);
    REQUIRE_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
    return reinterpret_cast<Fn>(p);
}

}  // namespace

TEST_CASE("cuCtxCreate pushes a new context that owns its memory until cuCtxDestroy") {
    CUcontext primary = use_primary_context();
    CUdevice dev = 0;
    CUcontext created = nullptr;
    CHECK_CU(cuCtxCreate(&created, nullptr, 0, dev));  // cuCtxCreate_v4, CUDA 13's form
    REQUIRE(created != nullptr);
    CHECK_NE(created, primary);
    CUcontext current = nullptr;
    CHECK_CU(cuCtxGetCurrent(&current));
    CHECK_EQ(current, created);
    unsigned long long created_id = 0, primary_id = 0;
    CHECK_CU(cuCtxGetId(created, &created_id));
    CHECK_CU(cuCtxGetId(primary, &primary_id));
    CHECK_NE(created_id, primary_id);

    size_t free_before = 0, total = 0;
    CHECK_CU(cuMemGetInfo(&free_before, &total));
    CUdeviceptr p = 0;
    CHECK_CU(cuMemAlloc(&p, 64 << 20));
    CUcontext owner = nullptr;
    CHECK_CU(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
    CHECK_EQ(owner, created);

    // Popping it leaves the primary context current; destroying it frees what it allocated.
    CUcontext popped = nullptr;
    CHECK_CU(cuCtxPopCurrent(&popped));
    CHECK_EQ(popped, created);
    CHECK_CU(cuCtxGetCurrent(&current));
    CHECK_EQ(current, primary);
    CHECK_CU(cuCtxDestroy(created));
    size_t free_after = 0;
    CHECK_CU(cuMemGetInfo(&free_after, &total));
    CHECK_EQ(free_after, free_before);
    CHECK_EQ(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);  // freed with the context
    CHECK_EQ(cuCtxPushCurrent(created), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ(cuCtxDestroy(created), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ(cuCtxDestroy(primary), CUDA_ERROR_INVALID_CONTEXT);  // primary contexts are released, not destroyed
}

TEST_CASE("cuCtxCreate's older forms and their limits") {
    use_primary_context();
    CUcontext a = nullptr, b = nullptr;
    CHECK_CU(entry<CreateV2>("cuCtxCreate", 3020)(&a, CU_CTX_SCHED_BLOCKING_SYNC, 0));
    CHECK_CU(entry<CreateV3>("cuCtxCreate", 11040)(&b, nullptr, 0, 0, 0));
    unsigned flags = 0;
    CHECK_CU(cuCtxGetCurrent(&a) == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
    CHECK_CU(cuCtxGetFlags(&flags));
    CUexecAffinityParam affinity{};
    affinity.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    affinity.param.smCount.val = 8;
    CUcontext c = nullptr;
    CHECK_EQ(entry<CreateV3>("cuCtxCreate", 11040)(&c, &affinity, 1, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(cuCtxCreate(&c, nullptr, 0, 99), CUDA_ERROR_INVALID_DEVICE);
    CHECK_EQ(cuCtxCreate(nullptr, nullptr, 0, 0), CUDA_ERROR_INVALID_VALUE);
    // Both created contexts are on this thread's stack: destroying them leaves the primary one.
    CHECK_CU(cuCtxDestroy(b));
    CUcontext dummy = nullptr;
    CHECK_CU(cuCtxGetCurrent(&dummy));
    CHECK_NE(dummy, b);
    CHECK_CU(cuCtxGetCurrent(&a));
    CHECK_CU(cuCtxDestroy(a));
    CHECK_CU(cuCtxGetCurrent(&dummy));
    CHECK_EQ(dummy, use_primary_context());
}

TEST_CASE("older versions with the same signature are served by the current implementation") {
    use_primary_context();
    using GetUuid = CUresult (*)(CUuuid*, CUdevice);
    CUuuid old_form{}, new_form{};
    CHECK_CU(entry<GetUuid>("cuDeviceGetUuid", 9020)(&old_form, 0));
    CHECK_CU(cuDeviceGetUuid(&new_form, 0));
    CHECK_EQ(std::memcmp(old_form.bytes, new_form.bytes, sizeof old_form.bytes), 0);
    CHECK_EQ(entry<void*>("cuDevicePrimaryCtxRelease", 7000), own_symbol("cuDevicePrimaryCtxRelease_v2"));
    CHECK_EQ(entry<void*>("cuDevicePrimaryCtxReset", 7000), own_symbol("cuDevicePrimaryCtxReset_v2"));
}

TEST_CASE("every entry of cudaTypedefs.h is served, by its own symbol or a same-signature one") {
    struct Row {
        const char* name;
        int version;
        const char* symbol;
        const char* same_as;
    };
    const Row rows[] = {
#define ENTRY(name, version, symbol, same_as) {#name, version, #symbol, #same_as},
#define ENTRY_PT(name, version, symbol, pt, same_as) {#name, version, #symbol, #same_as},
#include "proc_table.inc"
#undef ENTRY
#undef ENTRY_PT
    };
    CHECK_GT(sizeof rows / sizeof rows[0], 500u);
    for (const Row& row : rows) {
        CAPTURE(row.name);
        CAPTURE(row.version);
        void* p = nullptr;
        CUdriverProcAddressQueryResult status{};
        CHECK_EQ(cuGetProcAddress_v2(row.name, &p, row.version, 0, &status), CUDA_SUCCESS);
        CHECK((p == own_symbol(row.symbol) || p == own_symbol(row.same_as)));
    }
}

TEST_CASE("entry points the driver does not model return CUDA_ERROR_NOT_SUPPORTED") {
    use_primary_context();
    CUarray array = nullptr;
    CUDA_ARRAY_DESCRIPTOR descriptor{};
    descriptor.Width = 16;
    descriptor.Height = 16;
    descriptor.Format = CU_AD_FORMAT_FLOAT;
    descriptor.NumChannels = 1;
    CHECK_EQ(cuArrayCreate(&array, &descriptor), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(cuGraphicsUnregisterResource(nullptr), CUDA_ERROR_NOT_SUPPORTED);
}
