// exec and _exit with the collector loaded: the image is replaced without running exit handlers, so the
// collector writes what it has buffered first (flush_before_exec); the new image's collector then
// writes a file of its own (session.cpp). glibc's execl/execv/execvp call execve internally, not
// through the PLT, so each entry point is wrapped, not only execve.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hook_support.h"
#include "libc_symbols.h"
#include "tbdprof/collector/session.h"

namespace {

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using ExitFn = void (*)(int);

using tbdprof::preload::next_libc;

// Without libc's own entry points (libc_dlsym could not read libc) exec must still work: the
// program must never be broken by being profiled. execve is then the system call itself, and the
// PATH search of execvp is done here (without glibc's fallback to /bin/sh for scripts without #!).
int system_execve(const char* path, char* const argv[], char* const envp[]) {
    return static_cast<int>(syscall(SYS_execve, path, argv, envp));
}

int search_path_execve(const char* file, char* const argv[], char* const envp[]) {
    if (file == nullptr || *file == '\0') {
        errno = ENOENT;
        return -1;
    }
    if (std::strchr(file, '/') != nullptr) return system_execve(file, argv, envp);
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
    int error = ENOENT;
    for (size_t start = 0; start <= dirs.size();) {
        const size_t end = std::min(dirs.find(':', start), dirs.size());
        std::string candidate = dirs.substr(start, end - start);
        candidate = (candidate.empty() ? std::string(".") : candidate) + "/" + file;
        system_execve(candidate.c_str(), argv, envp);
        if (errno == EACCES) error = EACCES;  // as execvp: a later hit wins, else EACCES is reported
        start = end + 1;
    }
    errno = error;
    return -1;
}

// execl-style argument lists: arg0, ..., nullptr [, envp].
std::vector<char*> collect(const char* arg0, va_list& args) {
    std::vector<char*> argv{const_cast<char*>(arg0)};
    while (argv.back() != nullptr) argv.push_back(va_arg(args, char*));
    return argv;
}

}  // namespace

extern "C" TBD_VISIBLE int execve(const char* path, char* const argv[], char* const envp[]) {
    static const auto real = next_libc<ExecveFn>("execve");
    tbdprof::collector::flush_before_exec();
    return real ? real(path, argv, envp) : system_execve(path, argv, envp);
}

extern "C" TBD_VISIBLE int execv(const char* path, char* const argv[]) {
    static const auto real = next_libc<ExecvFn>("execv");
    tbdprof::collector::flush_before_exec();
    return real ? real(path, argv) : system_execve(path, argv, environ);
}

extern "C" TBD_VISIBLE int execvp(const char* file, char* const argv[]) {
    static const auto real = next_libc<ExecvFn>("execvp");
    tbdprof::collector::flush_before_exec();
    return real ? real(file, argv) : search_path_execve(file, argv, environ);
}

extern "C" TBD_VISIBLE int execvpe(const char* file, char* const argv[], char* const envp[]) {
    static const auto real = next_libc<ExecveFn>("execvpe");
    tbdprof::collector::flush_before_exec();
    return real ? real(file, argv, envp) : search_path_execve(file, argv, envp);
}

extern "C" TBD_VISIBLE int fexecve(int fd, char* const argv[], char* const envp[]) {
    static const auto real = next_libc<FexecveFn>("fexecve");
    tbdprof::collector::flush_before_exec();
    return real ? real(fd, argv, envp) : static_cast<int>(syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
}

extern "C" TBD_VISIBLE int execl(const char* path, const char* arg0, ...) {
    va_list args;
    va_start(args, arg0);
    std::vector<char*> argv = collect(arg0, args);
    va_end(args);
    return execv(path, argv.data());
}

extern "C" TBD_VISIBLE int execlp(const char* file, const char* arg0, ...) {
    va_list args;
    va_start(args, arg0);
    std::vector<char*> argv = collect(arg0, args);
    va_end(args);
    return execvp(file, argv.data());
}

extern "C" TBD_VISIBLE int execle(const char* path, const char* arg0, ...) {
    va_list args;
    va_start(args, arg0);
    std::vector<char*> argv = collect(arg0, args);
    char* const* envp = va_arg(args, char* const*);
    va_end(args);
    return execve(path, argv.data(), envp);
}

// _exit and _Exit end the process without exit handlers: a program that ends so (or a fork child)
// would lose what the collector buffered, silently (5,000 launches gave 0 kernels).
namespace {

[[noreturn]] void quick_exit_now(const char* name, int status) {
    tbdprof::collector::finish_at_quick_exit();
    static const auto real = next_libc<ExitFn>(name);
    if (real) real(status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

}  // namespace

extern "C" {
// As declared by unistd.h and stdlib.h (_Exit is noexcept there, _exit is not).
[[noreturn]] TBD_VISIBLE void _exit(int status) {
    quick_exit_now("_exit", status);
}
[[noreturn]] TBD_VISIBLE void _Exit(int status) noexcept {
    quick_exit_now("_Exit", status);
}
}
