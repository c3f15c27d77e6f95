#include "tbdprof/collector/user_messages.h"
#include "tbdprof/collector/descriptor_guard.h"
#include "tbdprof/collector/own_descriptors.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "tbdprof/user_messages.h"

namespace tbdprof::collector {
namespace {

char g_messages_path[PATH_MAX] = {};
// Each message is said once by construction; the cap only bounds a runaway caller.
constexpr int kMaxMessagesPerProcess = 64;
std::atomic<int> g_messages_written{0};

// One line, no control characters that would break the file's or the terminal's lines.
void format_text(char (&text)[user_messages::kMaxText + 1], const char* format, va_list args) {
    std::vsnprintf(text, sizeof text, format, args);
    for (char* c = text; *c != '\0'; ++c)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

bool write_all(int fd, const char* data, size_t length) {
    while (length > 0) {
        const ssize_t n = ::write(fd, data, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        length -= static_cast<size_t>(n);
    }
    return true;
}

// One write(2) of the whole line with O_APPEND: lines of several processes do not mix.
bool append_to_file(const char* text) {
    if (g_messages_path[0] == '\0') return false;
    char line[user_messages::kMaxText + 32];
    const int length = std::snprintf(line, sizeof line, "%d\t%s\n", static_cast<int>(::getpid()), text);
    if (length <= 0 || static_cast<size_t>(length) >= sizeof line) return false;
    descriptor_guard::OpeningWindow window;
    const int fd = open_own(g_messages_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY, 0644);
    if (fd < 0) return false;
    const ssize_t written = ::write(fd, line, static_cast<size_t>(length));
    ::close(fd);
    return written == length;  // a cut line has no newline: tbdprof ignores it
}

// A closed pipe on stderr must not kill the program with SIGPIPE: the signal is blocked for this
// thread during the write, and one that the write raised is taken back before unblocking.
void write_to_stderr(const char* data, size_t length) {
    sigset_t pipe_only, previous, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    sigemptyset(&pending);
    sigpending(&pending);
    const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    if (!write_all(STDERR_FILENO, data, length) && errno == EPIPE && !was_pending) {
        const struct timespec no_wait = {0, 0};
        sigtimedwait(&pipe_only, nullptr, &no_wait);
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void say_now(const char* text) {
    char line[user_messages::kMaxText + 32];
    const bool fresh = user_messages::ends_with_newline(STDERR_FILENO);
    const int length = std::snprintf(line, sizeof line, "%stbdprof: %s\n", fresh ? "" : "\n", text);
    if (length > 0 && static_cast<size_t>(length) < sizeof line) write_to_stderr(line, static_cast<size_t>(length));
}

}  // namespace

void set_message_dir(const char* run_dir) {
    if (run_dir == nullptr || *run_dir == '\0' ||
        std::snprintf(g_messages_path, sizeof g_messages_path, "%s/%s", run_dir, user_messages::kFileName) >=
            static_cast<int>(sizeof g_messages_path))
        g_messages_path[0] = '\0';
}

void tell_user(const char* format, ...) {
    const int saved_errno = errno;
    if (g_messages_written.fetch_add(1, std::memory_order_relaxed) < kMaxMessagesPerProcess) {
        char text[user_messages::kMaxText + 1];
        va_list args;
        va_start(args, format);
        format_text(text, format, args);
        va_end(args);
        if (!append_to_file(text)) say_now(text);
    }
    errno = saved_errno;
}

void tell_user_now(const char* format, ...) {
    const int saved_errno = errno;
    char text[user_messages::kMaxText + 1];
    va_list args;
    va_start(args, format);
    format_text(text, format, args);
    va_end(args);
    say_now(text);
    errno = saved_errno;
}

}  // namespace tbdprof::collector
