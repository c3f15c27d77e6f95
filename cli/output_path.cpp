#include "output_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace tbdprof::cli {

std::string default_output_name(const std::string& command) {
    std::string base = command.substr(command.find_last_of('/') + 1);
    for (char& c : base) {
        if (c == ' ' || c == '\t') c = '_';
    }
    if (base.empty()) base = "run";
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    return "tbdprof-" + base + "-" + stamp + ".sqlite";
}

}  // namespace tbdprof::cli
