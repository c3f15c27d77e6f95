#include "view_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "install_layout.h"

namespace tbdprof::cli {

int view_command(int argc, char** argv) {
    const std::filesystem::path viewer =
        std::filesystem::path(find_install_layout().executable).parent_path() / "tbdprof-viewer";
    if (::access(viewer.c_str(), X_OK) != 0) {
        std::fprintf(stderr,
                     "tbdprof view: the desktop viewer is not installed next to tbdprof (%s); it is built when Qt 6 "
                     "is found (Debian: apt-get install qt6-base-dev qt6-svg-dev)\n",
                     viewer.c_str());
        return 2;
    }
    std::vector<std::string> args{viewer.string()};
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    std::vector<char*> exec_args;
    for (std::string& a : args) exec_args.push_back(a.data());
    exec_args.push_back(nullptr);
    ::execv(viewer.c_str(), exec_args.data());
    std::fprintf(stderr, "tbdprof view: cannot run %s: %s\n", viewer.c_str(), std::strerror(errno));
    return 2;
}

}  // namespace tbdprof::cli
