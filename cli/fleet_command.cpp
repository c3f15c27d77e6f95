#include "fleet_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "install_layout.h"

namespace tbdprof::cli {

int fleet_command(int argc, char** argv) {
    const std::filesystem::path self = find_install_layout().executable;
    const std::filesystem::path fleet = self.parent_path() / "tbdprof-fleet";
    if (::access(fleet.c_str(), X_OK) != 0) {
        std::fprintf(stderr, "tbdprof fleet: tbdprof-fleet is not installed next to tbdprof (%s)\n", fleet.c_str());
        return 2;
    }
    // The workers run this very tbdprof unless told otherwise (--tbdprof, for a real cluster).
    std::vector<std::string> args{fleet.string()};
    bool tbdprof_given = false;
    for (int i = 1; i < argc; ++i) {
        args.emplace_back(argv[i]);
        tbdprof_given = tbdprof_given || std::strncmp(argv[i], "--tbdprof", 9) == 0;
    }
    if (!tbdprof_given) args.insert(args.begin() + 1, {"--tbdprof", self.string()});
    std::vector<char*> exec_args;
    for (std::string& a : args) exec_args.push_back(a.data());
    exec_args.push_back(nullptr);
    ::execv(fleet.c_str(), exec_args.data());
    std::fprintf(stderr, "tbdprof fleet: cannot run %s: %s\n", fleet.c_str(), std::strerror(errno));
    return 2;
}

}  // namespace tbdprof::cli
