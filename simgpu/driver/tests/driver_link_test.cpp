// JIT linking of one unit: the linked image loads as a module with the unit's kernels; what needs a
// real device linker (several units, relocatable objects) says it is not supported.
#include "driver_test_support.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

TEST_CASE("cuLink* of one fat binary gives a loadable image") {
    use_primary_context();
    const std::string path = std::string(TEST_FATBIN_DIR) + "/test_kernels_sm90.fatbin";
    CUlinkState link = nullptr;
    CHECK_CU(cuLinkCreate(0, nullptr, nullptr, &link));
    CHECK_CU(cuLinkAddFile(link, CU_JIT_INPUT_FATBINARY, path.c_str(), 0, nullptr, nullptr));
    void* image = nullptr;
    size_t size = 0;
    CHECK_CU(cuLinkComplete(link, &image, &size));
    CHECK_GT(size, 0u);
    CUmodule module = nullptr;
    CHECK_CU(cuModuleLoadData(&module, image));
    CUfunction axpy = nullptr;
    CHECK_CU(cuModuleGetFunction(&axpy, module, "_Z4axpyfPKfPfi"));
    CHECK_CU(cuModuleUnload(module));
    CHECK_CU(cuLinkDestroy(link));

    std::ifstream file(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    CHECK_CU(cuLinkCreate(0, nullptr, nullptr, &link));
    CHECK_CU(cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, bytes.data(), bytes.size(), "a", 0, nullptr, nullptr));
    CHECK_CU(cuLinkAddData(link, CU_JIT_INPUT_FATBINARY, bytes.data(), bytes.size(), "b", 0, nullptr, nullptr));
    CHECK_EQ(cuLinkComplete(link, &image, &size), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(cuLinkAddData(link, CU_JIT_INPUT_OBJECT, bytes.data(), bytes.size(), "o", 0, nullptr, nullptr),
             CUDA_ERROR_NOT_SUPPORTED);
    const char garbage[] = "not an image";
    CHECK_EQ(
        cuLinkAddData(link, CU_JIT_INPUT_CUBIN, const_cast<char*>(garbage), sizeof garbage, "g", 0, nullptr, nullptr),
        CUDA_ERROR_INVALID_IMAGE);
    CHECK_CU(cuLinkDestroy(link));
    CHECK_EQ(cuLinkDestroy(link), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ(cuLinkAddFile(link, CU_JIT_INPUT_PTX, "/nonexistent.ptx", 0, nullptr, nullptr), CUDA_ERROR_FILE_NOT_FOUND);
}
