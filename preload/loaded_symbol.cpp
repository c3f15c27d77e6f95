// The library definition of a symbol that RTLD_NEXT cannot find: a library loaded as a dependency of
// a module dlopen'd with RTLD_LOCAL (PyTorch's _C extension brings libcublas.so.13 and libcudnn.so.9
// that way) is outside the global scope, so dlsym(RTLD_NEXT) from this preload misses it, while the
// program's own calls still reach our wrappers through its PLT.
#include "loaded_symbol.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

#include "hook_registry.h"

namespace tbdprof::preload {
namespace {

int collect_path(dl_phdr_info* info, size_t, void* out) {
    if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
        static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
    return 0;
}

}  // namespace

void* find_in_loaded_libraries(const char* name) {
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&find_in_loaded_libraries), &self) == 0) return nullptr;
    std::vector<std::string> paths;
    dl_iterate_phdr(collect_path, &paths);  // load order: the first definition wins, as for the program
    for (const std::string& path : paths) {
        void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if (library == nullptr) continue;
        void* found = real_dlsym(library, name);
        dlclose(library);  // only drops the reference RTLD_NOLOAD took
        Dl_info where{};
        // dlsym also searches the library's dependencies: keep a definition that is not our own wrapper.
        if (found != nullptr && dladdr(found, &where) != 0 && where.dli_fbase != self.dli_fbase) return found;
    }
    return nullptr;
}

}  // namespace tbdprof::preload
