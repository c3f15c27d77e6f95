#include "time_text.h"

#include <charconv>
#include <cmath>
#include <string>

namespace tbdprof::interop {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Rare forms (exponents, very long numbers) go through a double: precise enough for them.
std::optional<int64_t> via_double(std::string_view text) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
    const double ns = value * 1000.0;
    if (std::fabs(ns) > 9.2e18) return std::nullopt;
    return static_cast<int64_t>(std::llround(ns));
}

}  // namespace

std::optional<int64_t> microseconds_text_to_ns(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' || text.front() == '\r')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    if (text.empty()) return std::nullopt;
    const std::string_view whole = text;
    bool negative = false;
    if (text.front() == '-' || text.front() == '+') {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || !is_digit(text.front())) return std::nullopt;
    // (A loop, not find_first_of: that calls memchr once per byte, on every timestamp of a trace.)
    for (char c : text)
        if (c == 'e' || c == 'E') return via_double(whole);
    const size_t dot = text.find('.');
    const std::string_view integer = text.substr(0, dot);
    const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    if (integer.size() > 16) return std::nullopt;  // beyond int64 nanoseconds
    int64_t us = 0;
    for (char c : integer) {
        if (!is_digit(c)) return std::nullopt;
        us = us * 10 + (c - '0');
    }
    if (us > 9'223'372'036'854'774) return std::nullopt;
    int64_t ns_part = 0;
    int digits = 0;
    bool round_up = false;
    for (char c : fraction) {
        if (!is_digit(c)) return std::nullopt;
        if (digits < 3) {
            ns_part = ns_part * 10 + (c - '0');
        } else if (digits == 3) {
            round_up = c >= '5';
        }
        ++digits;
    }
    for (int d = digits; d < 3; ++d) ns_part *= 10;
    int64_t ns = us * 1000 + ns_part + (round_up ? 1 : 0);
    return negative ? -ns : ns;
}

}  // namespace tbdprof::interop
