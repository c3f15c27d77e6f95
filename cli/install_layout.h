// Where tbdprof's companions are, found from the tbdprof executable's own location so that the same
// binary works in the build tree (build/bin/tbdprof, build/lib/...) and once installed
// (PREFIX/bin/tbdprof, PREFIX/lib/tbdprof/...).
#pragma once

#include <string>

namespace tbdprof::cli {

struct InstallLayout {
    std::string executable;       // /proc/self/exe, resolved
    std::string preload_library;  // libtbdprof_preload.so; empty when not found
    std::string simgpu_dir;       // folder holding the simulated libcuda.so.1 etc.; empty when not found
};

InstallLayout find_install_layout();

}  // namespace tbdprof::cli
