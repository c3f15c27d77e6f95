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

std::string bold_headings(const std::string& text) {
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        const size_t next_end = end < text.size() ? text.find('\n', end + 1) : std::string::npos;
        const std::string next =
            end < text.size() ? text.substr(end + 1, (next_end == std::string::npos ? text.size() : next_end) - end - 1) : "";
        const bool underlined = !line.empty() && !next.empty() && next.size() >= line.size() / 2 &&
                                next.find_first_not_of(next[0]) == std::string::npos && (next[0] == '=' || next[0] == '-');
        out += underlined ? "\033[1m" + line + "\033[0m" : line;
        if (end < text.size()) out += '\n';
        start = end + 1;
    }
    return out;
}

}  // namespace tbdprof::cmdline
