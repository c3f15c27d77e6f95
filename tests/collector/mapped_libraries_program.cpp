// Loads every CUDA library the simulated GPU provides, the way programs do (dlopen with RTLD_NOW,
// initialise the runtime, create a cuBLAS and a cuBLASLt handle), then lists the files mapped into
// the process that lie under TOOLKIT_ROOT (the CUDA toolkit's directory). Under `tbdprof --sim`
// there must be none: exit 1 and print them otherwise.
//   mapped_libraries_program TOOLKIT_ROOT
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: mapped_libraries_program TOOLKIT_ROOT\n");
        return 2;
    }
    char root[PATH_MAX];
    if (realpath(argv[1], root) == nullptr) {
        std::fprintf(stderr, "mapped_libraries_program: %s: no such directory\n", argv[1]);
        return 2;
    }
    const char* libraries[] = {"libcudart.so.13", "libcuda.so.1", "libcublas.so.13", "libcublasLt.so.13",
                               "libcupti.so.13"};
    void* handles[5] = {};
    for (int i = 0; i < 5; ++i) {
        handles[i] = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL);
        if (handles[i] == nullptr) {
            std::fprintf(stderr, "mapped_libraries_program: %s\n", dlerror());
            return 1;
        }
    }
    using Free = int (*)(void*);
    using Create = int (*)(void**);
    if (auto cuda_free = reinterpret_cast<Free>(dlsym(handles[0], "cudaFree"));
        cuda_free == nullptr || cuda_free(nullptr) != 0)
        return std::fprintf(stderr, "mapped_libraries_program: cudaFree(0) failed\n"), 1;
    void* blas = nullptr;
    void* lt = nullptr;
    auto blas_create = reinterpret_cast<Create>(dlsym(handles[2], "cublasCreate_v2"));
    auto lt_create = reinterpret_cast<Create>(dlsym(handles[3], "cublasLtCreate"));
    if (blas_create == nullptr || blas_create(&blas) != 0 || lt_create == nullptr || lt_create(&lt) != 0)
        return std::fprintf(stderr, "mapped_libraries_program: cuBLAS handles failed\n"), 1;

    std::ifstream maps("/proc/self/maps");
    std::set<std::string> from_toolkit;
    std::string line;
    const std::string prefix = std::string(root) + "/";
    while (std::getline(maps, line)) {
        const auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        char resolved[PATH_MAX];
        const std::string path = line.substr(slash);
        const std::string real = realpath(path.c_str(), resolved) ? std::string(resolved) : path;
        if (real.compare(0, prefix.size(), prefix) == 0) from_toolkit.insert(real);
    }
    for (const std::string& path : from_toolkit) std::printf("from the toolkit: %s\n", path.c_str());
    std::printf("%zu toolkit libraries mapped\n", from_toolkit.size());
    return from_toolkit.empty() ? 0 : 1;
}
