// close, dup2, dup3, close_range and closefrom: the program's calls that can take away or replace a
// collector descriptor ask the collector's descriptor guard first (descriptor_guard.h), so the
// writer's check and write, or its open and use, are never split by them. The calls themselves are
// never changed or refused; one is at most delayed for one of the collector's system calls.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "hook_support.h"
#include "libc_symbols.h"
#include "tbdprof/collector/descriptor_guard.h"

namespace {

using tbdprof::preload::next_libc;
namespace guard = tbdprof::collector::descriptor_guard;

using CloseFn = int (*)(int);
using Dup2Fn = int (*)(int, int);
using Dup3Fn = int (*)(int, int, int);
using CloseRangeFn = int (*)(unsigned, unsigned, int);
using ClosefromFn = void (*)(int);

// Runs `call` at once, or under the guard when it may touch a collector descriptor; errno is the call's.
template <class Call>
auto guarded(unsigned low, unsigned high, Call call) {
    decltype(call()) result;
    int error = 0;
    if (guard::begin_unguarded(low, high)) {
        result = call();
        error = errno;
        guard::end_unguarded();
    } else {
        guard::ProgramCall held;
        result = call();
        error = errno;
    }
    errno = error;
    return result;
}

unsigned as_number(int fd) {
    return fd < 0 ? UINT_MAX : static_cast<unsigned>(fd);
}

}  // namespace

// Without libc's entry points (libc_dlsym could not read libc) each call is the system call itself:
// the program must never be broken by being profiled.
extern "C" TBD_VISIBLE int close(int fd) {
    static const auto real = next_libc<CloseFn>("close");
    return guarded(as_number(fd), as_number(fd),
                   [&] { return real ? real(fd) : static_cast<int>(syscall(SYS_close, fd)); });
}

extern "C" TBD_VISIBLE int dup2(int old_fd, int new_fd) noexcept {
    static const auto real = next_libc<Dup2Fn>("dup2");
    return guarded(as_number(new_fd), as_number(new_fd), [&] {
        if (real) return real(old_fd, new_fd);
        // dup3 refuses equal numbers; dup2 then only checks that the descriptor is open.
        if (old_fd == new_fd) return static_cast<int>(syscall(SYS_fcntl, old_fd, F_GETFD)) < 0 ? -1 : new_fd;
        return static_cast<int>(syscall(SYS_dup3, old_fd, new_fd, 0));
    });
}

extern "C" TBD_VISIBLE int dup3(int old_fd, int new_fd, int flags) noexcept {
    static const auto real = next_libc<Dup3Fn>("dup3");
    return guarded(as_number(new_fd), as_number(new_fd), [&] {
        return real ? real(old_fd, new_fd, flags) : static_cast<int>(syscall(SYS_dup3, old_fd, new_fd, flags));
    });
}

extern "C" TBD_VISIBLE int close_range(unsigned first, unsigned last, int flags) noexcept {
    static const auto real = next_libc<CloseRangeFn>("close_range");
    return guarded(first, last, [&] {
        return real ? real(first, last, flags) : static_cast<int>(syscall(SYS_close_range, first, last, flags));
    });
}

extern "C" TBD_VISIBLE void closefrom(int low_fd) noexcept {
    static const auto real = next_libc<ClosefromFn>("closefrom");
    const unsigned low = low_fd < 0 ? 0 : static_cast<unsigned>(low_fd);
    guarded(low, UINT_MAX, [&] {
        if (real) {
            real(low_fd);
        } else if (syscall(SYS_close_range, low, UINT_MAX, 0) != 0) {
            for (int fd = static_cast<int>(low); fd < sysconf(_SC_OPEN_MAX); ++fd) syscall(SYS_close, fd);
        }
        return 0;
    });
}
