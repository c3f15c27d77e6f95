// How libraries find the driver: cuGetProcAddress with versions and per-thread-stream flags.
#include "driver_test_support.h"

#include <dlfcn.h>

namespace {

void* proc(const char* name, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status,
           CUresult* rc = nullptr) {
    void* p = nullptr;
    CUresult r = cuGetProcAddress_v2(name, &p, version, flags, status);
    if (rc) *rc = r;
    return p;
}
}  // namespace

TEST_CASE("calls before cuInit fail with CUDA_ERROR_NOT_INITIALIZED") {
    // This test case is the first in the file order doctest uses, so the driver is not yet set up.
    int count = -1;
    CHECK_EQ(cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
    CUdeviceptr p = 0;
    CHECK_EQ(cuMemAlloc(&p, 16), CUDA_ERROR_NOT_INITIALIZED);
}

TEST_CASE("cuGetProcAddress maps base names and versions to the right ABI") {
    CUdriverProcAddressQueryResult status{};
    CHECK_EQ(proc("cuMemAlloc", 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status), own_symbol("cuMemAlloc_v2"));
    CHECK_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK_EQ(proc("cuEventElapsedTime", 12000, 0, &status), own_symbol("cuEventElapsedTime"));
    CHECK_EQ(proc("cuEventElapsedTime", 13000, 0, &status), own_symbol("cuEventElapsedTime_v2"));
    CHECK_EQ(proc("cuGetProcAddress", 12000, 0, &status), own_symbol("cuGetProcAddress_v2"));

    SUBCASE("per-thread default stream variants") {
        CHECK_EQ(proc("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
                 own_symbol("cuLaunchKernel_ptsz"));
        CHECK_EQ(proc("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status),
                 own_symbol("cuLaunchKernel"));
        CHECK_EQ(proc("cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
                 own_symbol("cuMemcpyHtoD_v2_ptds"));
        // Entry points without a stream have one form only.
        CHECK_EQ(proc("cuMemAlloc", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
                 own_symbol("cuMemAlloc_v2"));
    }
    SUBCASE("too old a version and unknown names") {
        CUresult rc = CUDA_SUCCESS;
        CHECK_EQ(proc("cuLibraryLoadData", 11080, 0, &status, &rc), nullptr);
        CHECK_EQ(rc, CUDA_ERROR_NOT_FOUND);
        CHECK_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
        CHECK_EQ(proc("cuNoSuchFunction", 13000, 0, &status, &rc), nullptr);
        CHECK_EQ(rc, CUDA_ERROR_NOT_FOUND);
        CHECK_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
        CHECK_EQ(proc("cuMemAlloc", 12000, 0x80, &status, &rc), nullptr);
        CHECK_EQ(rc, CUDA_ERROR_INVALID_VALUE);
    }
}

TEST_CASE("error names and strings") {
    const char* text = nullptr;
    CHECK_EQ(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &text), CUDA_SUCCESS);
    CHECK_EQ(std::string(text), "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK_EQ(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &text), CUDA_SUCCESS);
    CHECK_EQ(std::string(text), "invalid argument");
    CHECK_EQ(cuGetErrorString(static_cast<CUresult>(1000), &text), CUDA_ERROR_INVALID_VALUE);
}
