#include "tbdprof/cmdline/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace tbdprof::cmdline {

bool is_terminal(std::FILE* stream) {
    return stream != nullptr && ::isatty(::fileno(stream)) == 1;
}

int output_width(std::FILE* stream) {
    if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
        int value = 0;
        const char* end = columns + std::strlen(columns);
        const auto [at, ec] = std::from_chars(columns, end, value);
        if (ec == std::errc() && at == end && value >= 20 && value <= 10000) return value;
    }
    if (is_terminal(stream)) {
        struct winsize size {};
        if (::ioctl(::fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) return size.ws_col;
    }
    return kDefaultWidth;
}

bool use_colour(std::FILE* stream) {
    const char* no_colour = std::getenv("NO_COLOR");
    if (no_colour != nullptr && *no_colour != '\0') return false;
    return is_terminal(stream);
}

}  // namespace tbdprof::cmdline
