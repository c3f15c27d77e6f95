// Modules from nvcc fat binaries: kernels, parameter layouts from the cubin, architecture checks,
// launches and their validation.
#include "driver_test_support.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace {
CUmodule load_sm90() {
    CUmodule module = nullptr;
    REQUIRE_EQ(cuModuleLoadData(&module, load_fatbin("test_kernels_sm90.fatbin")), CUDA_SUCCESS);
    return module;
}
}  // namespace

TEST_CASE("parameter layouts come from the cubin") {
    use_primary_context();
    CUmodule module = load_sm90();
    CUfunction axpy = nullptr;
    CHECK_CU(cuModuleGetFunction(&axpy, module, "_Z4axpyfPKfPfi"));
    const size_t expected[4][2] = {{0, 4}, {8, 8}, {16, 8}, {24, 4}};
    for (size_t i = 0; i < 4; ++i) {
        size_t offset = 99, size = 99;
        CHECK_CU(cuFuncGetParamInfo(axpy, i, &offset, &size));
        CHECK_EQ(offset, expected[i][0]);
        CHECK_EQ(size, expected[i][1]);
    }
    CHECK_EQ(cuFuncGetParamInfo(axpy, 4, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
    const char* name = nullptr;
    CHECK_CU(cuFuncGetName(&name, axpy));
    CHECK_EQ(std::string(name), "_Z4axpyfPKfPfi");

    CUfunction by_value = nullptr;
    CHECK_CU(cuModuleGetFunction(&by_value, module, "by_value"));
    size_t offset = 0, size = 0;
    CHECK_CU(cuFuncGetParamInfo(by_value, 0, &offset, &size));
    CHECK_EQ(offset, 0u);
    CHECK_EQ(size, 16u);  // struct {float*; int;} padded to 16
    CHECK_CU(cuFuncGetParamInfo(by_value, 1, &offset, &size));
    CHECK_EQ(offset, 16u);
    CHECK_EQ(size, 8u);

    CUfunction missing = nullptr;
    CHECK_EQ(cuModuleGetFunction(&missing, module, "nope"), CUDA_ERROR_NOT_FOUND);
    CUdeviceptr global = 0;
    size_t bytes = 0;
    CHECK_CU(cuModuleGetGlobal(&global, &bytes, module, "device_counter"));
    CHECK_EQ(bytes, 64u);
    float values[16] = {1, 2, 3};
    CHECK_CU(cuMemcpyHtoD(global, values, sizeof values));
    CHECK_CU(cuModuleUnload(module));
    CHECK_EQ(cuFuncGetParamInfo(axpy, 0, &offset, &size), CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("an image without code for the device is refused") {
    use_primary_context();
    CUmodule module = nullptr;
    CHECK_EQ(cuModuleLoadData(&module, load_fatbin("test_kernels_sm80.fatbin")), CUDA_ERROR_NO_BINARY_FOR_GPU);
    const char garbage[64] = "definitely not a cubin";
    CHECK_EQ(cuModuleLoadData(&module, garbage), CUDA_ERROR_INVALID_IMAGE);
}

TEST_CASE("libraries and kernels (the runtime's path since CUDA 12)") {
    use_primary_context();
    CUlibrary library = nullptr;
    CHECK_CU(
        cuLibraryLoadData(&library, load_fatbin("test_kernels_sm90.fatbin"), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel kernel = nullptr;
    CHECK_CU(cuLibraryGetKernel(&kernel, library, "_Z4axpyfPKfPfi"));
    size_t offset = 0, size = 0;
    CHECK_CU(cuKernelGetParamInfo(kernel, 2, &offset, &size));
    CHECK_EQ(offset, 16u);
    CUfunction f = nullptr;
    CHECK_CU(cuKernelGetFunction(&f, kernel));
    CHECK_CU(cuFuncGetParamInfo(f, 3, &offset, &size));
    CHECK_EQ(size, 4u);
    CHECK_CU(cuLibraryUnload(library));
}

TEST_CASE("launch validation and records") {
    use_primary_context();
    RecordLog log;
    CUmodule module = load_sm90();
    CUfunction axpy = nullptr;
    CHECK_CU(cuModuleGetFunction(&axpy, module, "_Z4axpyfPKfPfi"));
    CUdeviceptr x = 0, y = 0;
    CHECK_CU(cuMemAlloc(&x, 4096));
    CHECK_CU(cuMemAlloc(&y, 4096));
    float a = 2.0f;
    int n = 1024;
    void* params[] = {&a, &x, &y, &n};
    CHECK_CU(cuLaunchKernel(axpy, 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));
    CHECK_EQ(cuLaunchKernel(axpy, 4, 1, 1, 2048, 1, 1, 0, nullptr, params, nullptr), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuLaunchKernel(axpy, 0, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuLaunchKernel(axpy, 4, 1, 1, 256, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
    int bogus = 0;
    CHECK_EQ(cuLaunchKernel(reinterpret_cast<CUfunction>(&bogus), 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
             CUDA_ERROR_INVALID_HANDLE);
    CUlaunchConfig config{};
    config.gridDimX = 8;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 128;
    config.blockDimY = config.blockDimZ = 1;
    CHECK_CU(cuLaunchKernelEx(&config, axpy, params, nullptr));
    CHECK_CU(cuCtxSynchronize());

    auto kernels = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(kernels.size(), 2u);
    CHECK_EQ(std::string(kernels[0].name), "_Z4axpyfPKfPfi");
    CHECK_EQ(kernels[0].grid[0], 4u);
    CHECK_EQ(kernels[0].block[0], 256u);
    CHECK_EQ(kernels[0].stream_id, 7u);
    CHECK_EQ(kernels[1].grid[0], 8u);
    CHECK_LT(kernels[0].start_ns, kernels[0].end_ns);
    CHECK_GE(kernels[1].start_ns, kernels[0].end_ns);

    // The ground-truth file has the same kernels, in the documented format.
    std::ifstream truth(truth_path());
    std::string line;
    int matching = 0;
    while (std::getline(truth, line)) {
        std::istringstream fields(line);
        std::string kind, pid, corr;
        fields >> kind >> pid >> corr;
        if (kind == "kernel" && corr == std::to_string(kernels[0].correlation_id)) {
            ++matching;
            CHECK_NE(line.find("\t" + std::to_string(kernels[0].start_ns) + "\t"), std::string::npos);
            CHECK_NE(line.find("_Z4axpyfPKfPfi"), std::string::npos);
        }
    }
    CHECK_EQ(matching, 1);
    CHECK_CU(cuMemFree(x));
    CHECK_CU(cuMemFree(y));
    CHECK_CU(cuModuleUnload(module));
}
