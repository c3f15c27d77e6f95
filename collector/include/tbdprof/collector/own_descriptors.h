// The one policy for every file the collector opens inside the profiled program. The program owns
// its descriptor numbers: it may close all of them (close_range(3, ~0), a loop up to the limit),
// start with stdout closed (`>&-`), or dup2 onto any number. A collector file on a low number would
// then be the program's next open() or its fd 1, and the program's bytes would go into the raw file
// (or ours into the program's file). So each collector descriptor is
//   - moved to a high number (at least kHighFloor, or near RLIMIT_NOFILE when that is lower), which
//     the kernel hands to the program only after every lower number is taken;
//   - close-on-exec, and never 0, 1 or 2;
//   - for a long-lived file (the raw file), checked before each write (same device and inode as
//     when opened), so that a descriptor the program closed or replaced is never written into.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

namespace tbdprof::collector {

inline constexpr int kHighFloor = 1000;

// open(2) under the policy above (O_CLOEXEC is added), inside a descriptor_guard::OpeningWindow
// held until the descriptor is closed again or its number published. -1 (errno set) when the file cannot be opened
// or no descriptor >= 3 is free.
int open_own(const char* path, int flags, mode_t mode = 0);

// Moves `fd` to a high number under the policy; closes `fd`. Returns the new descriptor, or -1
// (errno set; `fd` closed) when none >= 3 is free.
int move_high(int fd);

// The identity of an open file, to notice that a descriptor number now names another file.
struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    bool known = false;
};
FileIdentity identity_of(int fd);
// Whether `fd` is still open on the file `expected` names.
bool still_same_file(int fd, const FileIdentity& expected);

}  // namespace tbdprof::collector
