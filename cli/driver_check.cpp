#include "driver_check.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace tbdprof::cli {

bool nvidia_driver_present(const std::string& simgpu_dir) {
    if (access("/dev/nvidiactl", F_OK) != 0) return false;
    // Loading libcuda.so.1 only maps it; nothing runs until cuInit, which we never call.
    void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) return false;
    bool real = true;
    link_map* map = nullptr;
    if (!simgpu_dir.empty() && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name) {
        std::error_code ec;
        const auto loaded = std::filesystem::weakly_canonical(map->l_name, ec).parent_path();
        real = loaded != std::filesystem::weakly_canonical(simgpu_dir, ec);
    }
    dlclose(handle);
    return real;
}

}  // namespace tbdprof::cli
