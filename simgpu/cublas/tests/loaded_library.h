// The simulated libraries' tests first check that the library under test is the simulated one (a
// real CUDA installation on the library path would make every other check meaningless).
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace tbdsim::test {

// True when `symbol` was loaded from the file `library` (e.g. "libcupti.so", any version suffix)
// in the simulated GPU's folder TBDPROF_SIMGPU_DIR.
inline bool loaded_from_simulated(const void* symbol, const std::string& library) {
    Dl_info info{};
    if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return false;
    char* loaded = realpath(info.dli_fname, nullptr);
    char* folder = realpath(TBDPROF_SIMGPU_DIR, nullptr);
    const bool match = loaded != nullptr && folder != nullptr &&
                       std::string(loaded).rfind(std::string(folder) + "/" + library, 0) == 0;
    std::free(loaded);
    std::free(folder);
    return match;
}

}  // namespace tbdsim::test
