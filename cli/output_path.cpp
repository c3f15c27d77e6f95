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

std::string check_output_writable(const std::string& path, bool force, bool& usage_error) {
    usage_error = false;
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return "output " + path + " is a directory";
        if (!force) {
            usage_error = true;
            return "output " + path + " exists; use --force to replace it";
        }
    }
    const std::string probe = path + ".tmp";
    const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST) {  // a leftover from an interrupted build: the builder replaces it
            if (access(probe.c_str(), W_OK) == 0) return {};
        }
        return "cannot write the trace to " + path + ": " + std::strerror(errno);
    }
    close(fd);
    unlink(probe.c_str());
    return {};
}

}  // namespace tbdprof::cli
