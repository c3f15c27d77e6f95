#include "install_layout.h"

#include <filesystem>
#include <system_error>

namespace tbdprof::cli {
namespace {

namespace fs = std::filesystem;

// The first of `candidates` (relative to `base`) that exists, as an absolute path.
std::string first_existing(const fs::path& base, std::initializer_list<const char*> candidates) {
    std::error_code ec;
    for (const char* candidate : candidates) {
        const fs::path path = base / candidate;
        if (fs::exists(path, ec)) return fs::weakly_canonical(path, ec).string();
    }
    return {};
}

}  // namespace

InstallLayout find_install_layout() {
    InstallLayout layout;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    layout.executable = exe.string();
    const fs::path bin = exe.parent_path();
    // Build tree: lib/ next to bin/. Installed: lib/tbdprof/ (keeps a private libcuda.so.1 off the
    // system's library path).
    layout.preload_library =
        first_existing(bin, {"../lib/libtbdprof_preload.so", "../lib/tbdprof/libtbdprof_preload.so"});
    layout.simgpu_dir = first_existing(bin, {"../lib/simgpu/libcuda.so.1", "../lib/tbdprof/simgpu/libcuda.so.1"});
    if (!layout.simgpu_dir.empty()) layout.simgpu_dir = fs::path(layout.simgpu_dir).parent_path().string();
    return layout;
}

}  // namespace tbdprof::cli
