// Messages for the user from the collector, and the one rule that keeps tbdprof's lines off the
// profiled program's lines. Shared by the collector (which writes) and `tbdprof` (which prints);
// header-only, among the stage-0 contracts (contracts/).
//
// The collector runs inside the program, whose output may be mid-line at any moment: what it has to
// say goes into the run directory's messages file, one line per message, "<pid>\t<text>\n", and
// tbdprof prints each message once after the program has exited (docs/collector.md, "Messages").
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace tbdprof::user_messages {

// In TBDPROF_RUN_DIR.
inline constexpr const char* kFileName = "messages.txt";

// Longest message text kept (longer ones are cut).
inline constexpr int kMaxText = 900;

// Whether the last byte written to `fd` ends a line, so that a line written now starts a fresh one.
// Known only for a regular file: the byte before the file offset (or the end, when appending) is
// read back. A terminal, pipe or socket cannot tell what was written to it last: false.
inline bool ends_with_newline(int fd) {
    const int saved_errno = errno;
    struct stat st {};
    bool at_line_start = false;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        const int flags = ::fcntl(fd, F_GETFL);
        off_t position = (flags >= 0 && (flags & O_APPEND) != 0) ? st.st_size : ::lseek(fd, 0, SEEK_CUR);
        if (position > st.st_size) position = st.st_size;
        if (position == 0) {
            at_line_start = true;
        } else if (position > 0) {
            char last = 0;
            // Opened for writing only, as shells open redirections: read it through another descriptor.
            if (::pread(fd, &last, 1, position - 1) != 1) {
                char path[40];
                std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
                const int reader = ::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                struct stat same {};
                if (reader >= 0 && ::fstat(reader, &same) == 0 && same.st_dev == st.st_dev &&
                    same.st_ino == st.st_ino && ::pread(reader, &last, 1, position - 1) != 1)
                    last = 0;
                if (reader >= 0) ::close(reader);
            }
            at_line_start = last == '\n';
        }
    }
    errno = saved_errno;
    return at_line_start;
}

}  // namespace tbdprof::user_messages
