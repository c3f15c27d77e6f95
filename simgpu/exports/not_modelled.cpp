// One line per unmodelled function called (simgpu/include/simgpu/not_modelled.h has the contract).
// A stub may be called from any thread, before main or at exit: no allocation-heavy state, one
// write() per line so that concurrent processes appending to the same file do not interleave.
#include <simgpu/not_modelled.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace {

// `length` as snprintf returned it: a line longer than the buffer is cut (its newline with it).
void write_line(int fd, const char* text, int length, size_t capacity) {
    if (length <= 0) return;
    const size_t bytes = static_cast<size_t>(length) < capacity ? static_cast<size_t>(length) : capacity - 1;
    ssize_t ignored = ::write(fd, text, bytes);
    (void)ignored;
}

// True the first time `function` is reported in this process (per library: names do not repeat
// across libraries).
bool first_time(const char* function) {
    static std::mutex* mutex = new std::mutex;  // never destroyed: stubs may run during exit
    static auto* told = new std::set<std::string>;
    std::lock_guard lock(*mutex);
    return told->insert(function).second;
}

}  // namespace

extern "C" void tbdsim_not_modelled(const char* function, const char* result) {
    if (function == nullptr || result == nullptr || !first_time(function)) return;
    char line[512];
    write_line(2, line, std::snprintf(line, sizeof line, "tbdsim: not modelled: %s (returned %s)\n", function, result),
               sizeof line);
    const char* path = std::getenv("TBDSIM_NOT_MODELLED");
    if (path == nullptr || *path == '\0') return;
    const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    write_line(fd, line, std::snprintf(line, sizeof line, "%d\t%s\t%s\n", static_cast<int>(getpid()), function, result),
               sizeof line);
    ::close(fd);
}
