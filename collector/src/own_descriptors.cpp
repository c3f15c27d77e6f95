#include "tbdprof/collector/own_descriptors.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

namespace tbdprof::collector {
namespace {

// The lowest number to ask for: kHighFloor, or below the soft descriptor limit when that is lower
// (F_DUPFD fails with EINVAL at or above it), keeping a few numbers free above ours.
int high_floor() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kHighFloor;
    const long soft = static_cast<long>(limit.rlim_cur);
    if (soft > kHighFloor + 16) return kHighFloor;
    return soft > 3 + 16 ? static_cast<int>(soft - 16) : 3;
}

}  // namespace

int move_high(int fd) {
    if (fd < 0) return -1;
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, high_floor());
    if (moved < 0) moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);  // the limit was lowered meanwhile
    const int error = errno;
    ::close(fd);
    errno = error;
    return moved;
}

int open_own(const char* path, int flags, mode_t mode) {
    return move_high(::open(path, flags | O_CLOEXEC, mode));
}

FileIdentity identity_of(int fd) {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) return {};
    return {st.st_dev, st.st_ino, true};
}

bool still_same_file(int fd, const FileIdentity& expected) {
    const FileIdentity now = identity_of(fd);
    return now.known && expected.known && now.device == expected.device && now.inode == expected.inode;
}

}  // namespace tbdprof::collector
