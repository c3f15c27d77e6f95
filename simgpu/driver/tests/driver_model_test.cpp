// The device model from TBDSIM_MODEL / TBDSIM_MEMORY_BYTES. ctest runs these cases alone, in
// processes with the variables set; the main driver test run leaves them out.
#include "driver_test_support.h"

#include <cstdlib>
#include <cstring>

TEST_CASE("the model chosen by the environment") {
    const char* model = std::getenv("TBDSIM_MODEL");
    REQUIRE_MESSAGE(model != nullptr, "run with TBDSIM_MODEL set (see simgpu/driver/tests/CMakeLists.txt)");
    use_primary_context();
    char name[128] = {};
    int sms = 0, major = 0, minor = 0, clock = 0;
    CHECK_CU(cuDeviceGetName(name, sizeof name, 0));
    CHECK_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    CHECK_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    CHECK_CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
    CHECK_CU(cuDeviceGetAttribute(&clock, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 0));
    if (std::strcmp(model, "a100-sxm") == 0) {
        CHECK_EQ(std::string(name), "NVIDIA A100-SXM4-80GB");
        CHECK_EQ(sms, 108);
        CHECK_EQ(major * 10 + minor, 80);
        CHECK_EQ(clock, 1410000);
        // An sm_90 image does not run on an sm_80 device.
        CUmodule module = nullptr;
        CHECK_EQ(cuModuleLoadData(&module, load_fatbin("test_kernels_sm90.fatbin")), CUDA_ERROR_NO_BINARY_FOR_GPU);
        CHECK_CU(cuModuleLoadData(&module, load_fatbin("test_kernels_sm80.fatbin")));
    } else {
        REQUIRE_EQ(std::string(model), "v100-sxm");
        CHECK_EQ(sms, 80);
        CHECK_EQ(major * 10 + minor, 70);
    }
    if (const char* memory = std::getenv("TBDSIM_MEMORY_BYTES")) {
        size_t free_bytes = 0, total = 0;
        CHECK_CU(cuMemGetInfo(&free_bytes, &total));
        CHECK_EQ(total, std::strtoull(memory, nullptr, 10));
        CUdeviceptr p = 0;
        CHECK_EQ(cuMemAlloc(&p, total + 512), CUDA_ERROR_OUT_OF_MEMORY);
        CHECK_CU(cuMemAlloc(&p, total / 2));
        CHECK_EQ(cuMemAlloc(&p, total / 2 + 4096), CUDA_ERROR_OUT_OF_MEMORY);
    }
}

TEST_CASE("an unknown model leaves no device") {
    const char* model = std::getenv("TBDSIM_MODEL");
    REQUIRE(model != nullptr);
    REQUIRE_EQ(std::string(model), "no-such-gpu");
    CHECK_EQ(cuInit(0), CUDA_ERROR_NO_DEVICE);
}
