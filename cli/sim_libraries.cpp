#include "sim_libraries.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <system_error>

namespace tbdprof::cli {
namespace {

namespace fs = std::filesystem;

// The CUDA major version the simulated runtime stands for, from libcudart.so.<major>; empty if none.
std::string runtime_major(const std::vector<std::string>& libraries) {
    static const std::regex cudart(R"(libcudart\.so\.(\d+)$)");
    for (const std::string& path : libraries) {
        std::smatch match;
        const std::string name = fs::path(path).filename().string();
        if (std::regex_match(name, match, cudart)) return match[1].str();
    }
    return {};
}

}  // namespace

std::vector<std::string> simulated_libraries(const std::string& simgpu_dir) {
    static const std::regex soname(R"(lib[\w-]+\.so\.\d+)");  // libnvidia-ml.so.1 too
    std::vector<std::string> libraries;
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(simgpu_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (std::regex_match(name, soname) && entry.is_regular_file(ec)) libraries.push_back(entry.path().string());
    }
    std::sort(libraries.begin(), libraries.end());
    return libraries;
}

std::string make_python_library_mirror(const std::string& folder, const std::vector<std::string>& libraries,
                                       std::string& error) {
    const std::string major = runtime_major(libraries);
    if (major.empty()) {
        error = "the simulated CUDA runtime (libcudart.so.N) is missing";
        return {};
    }
    const fs::path lib_dir = fs::path(folder) / "nvidia" / ("cu" + major) / "lib";
    std::error_code ec;
    fs::create_directories(lib_dir, ec);
    if (ec) {
        error = "cannot create " + lib_dir.string() + ": " + ec.message();
        return {};
    }
    for (const std::string& library : libraries) {
        fs::create_symlink(library, lib_dir / fs::path(library).filename(), ec);
        if (ec && ec != std::errc::file_exists) {
            error = "cannot link " + library + " into " + lib_dir.string() + ": " + ec.message();
            return {};
        }
    }
    return folder;
}

void remove_python_library_mirror(const std::string& folder) {
    std::error_code ec;
    std::vector<fs::path> links, folders{fs::path(folder)};
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (it->is_symlink(ec))
            links.push_back(it->path());
        else if (it->is_directory(ec))
            folders.push_back(it->path());
    }
    for (const fs::path& link : links) fs::remove(link, ec);
    // Deepest first: fs::remove takes a folder only when it is empty.
    for (auto f = folders.rbegin(); f != folders.rend(); ++f) fs::remove(*f, ec);
}

std::string preload_list(const std::vector<std::string>& libraries) {
    std::string joined;
    for (const std::string& library : libraries) joined += (joined.empty() ? "" : ":") + library;
    return joined;
}

}  // namespace tbdprof::cli
