// How a PyTorch program is made to load the simulated NVIDIA libraries under `--sim`, and only them.
// PyTorch's wheels reach the NVIDIA libraries two ways that LD_LIBRARY_PATH (the simulated folder,
// record.cpp) does not win against when NVIDIA's pip packages are installed next to torch:
//  - DT_RPATH ($ORIGIN/../../nvidia/.../lib) on every torch library, which the loader searches before
//    LD_LIBRARY_PATH. Preloading the simulated libraries (LD_PRELOAD) settles each DT_NEEDED name by
//    the soname of a library already loaded, before any path is searched.
//  - torch/__init__.py loading libraries by path from site-packages (nvidia/cu13/lib/...). A folder
//    put first on PYTHONPATH holds the same layout, linked to the simulated libraries: the loader finds
//    those files already loaded and maps nothing new.
#pragma once

#include <string>
#include <vector>

namespace tbdprof::cli {

// The mirror's folder inside a run directory.
inline constexpr const char* kPythonMirrorFolder = "python";

// The simulated libraries in `simgpu_dir` by their sonames (lib<name>.so.<major>), sorted.
std::vector<std::string> simulated_libraries(const std::string& simgpu_dir);

// Creates `folder`/nvidia/cu<major>/lib/<soname> links to `libraries`, where <major> is the CUDA major
// version of the simulated runtime (libcudart.so.<major>). Returns the folder to put on PYTHONPATH,
// or empty with `error` set.
std::string make_python_library_mirror(const std::string& folder, const std::vector<std::string>& libraries,
                                       std::string& error);

// Removes a mirror made by make_python_library_mirror: its links, then its folders once empty.
// Anything else found there (a file the program wrote) is left, and so is the folder holding it.
void remove_python_library_mirror(const std::string& folder);

// Joins the libraries with ':' for LD_PRELOAD.
std::string preload_list(const std::vector<std::string>& libraries);

}  // namespace tbdprof::cli
