#include "static_runtime_note.h"

#include <fstream>

namespace tbdprof::cli {
namespace {

// The file named on the mark's first line; empty when the mark is older (a pid only) or unreadable.
std::string asking_file(const std::string& mark_path) {
    std::ifstream in(mark_path);
    std::string line;
    if (!std::getline(in, line)) return {};
    const size_t tab = line.find('\t');
    return tab == std::string::npos ? std::string() : line.substr(tab + 1);
}

}  // namespace

std::string static_runtime_message(const std::string& mark_path, const std::string& program) {
    const std::string file = asking_file(mark_path);
    // A shared library (by its name) other than the program: name it, the program is not to blame.
    if (file.find(".so") != std::string::npos)
        return file + " (loaded by " + program +
               ") carries its own static CUDA runtime, which the simulated GPU cannot run; put a simulated or "
               "`-cudart shared` build of that library first on the library path (no trace written)";
    return program +
           " uses the static CUDA runtime, which the simulated GPU cannot run; rebuild it with `nvcc -cudart shared` "
           "(no trace written)";
}

}  // namespace tbdprof::cli
