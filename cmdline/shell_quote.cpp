#include "tbdprof/cmdline/shell_quote.h"

#include <fmt/format.h>

namespace tbdprof::cmdline {
namespace {

bool plain(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
}

bool control(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

// $'...': backslash and quote escaped, control characters as \xHH.
std::string ansi_c_quoted(std::string_view word) {
    std::string out = "$'";
    for (const char c : word) {
        if (c == '\\' || c == '\'') {
            out += '\\';
            out += c;
        } else if (control(c)) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
            out += c;
        }
    }
    return out + "'";
}

}  // namespace

std::string shell_quote(std::string_view word) {
    if (word.empty()) return "''";
    bool all_plain = true, any_control = false;
    for (const char c : word) {
        all_plain = all_plain && plain(c);
        any_control = any_control || control(c);
    }
    if (all_plain) return std::string(word);
    if (any_control) return ansi_c_quoted(word);
    std::string out = "'";
    for (const char c : word) {
        if (c == '\'')
            out += "'\\''";  // end the quote, a quoted quote, quote again
        else
            out += c;
    }
    return out + "'";
}

std::string shell_command(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& word : words) {
        if (!out.empty()) out += ' ';
        out += shell_quote(word);
    }
    return out;
}

}  // namespace tbdprof::cmdline
