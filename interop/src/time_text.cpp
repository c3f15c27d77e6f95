#include "time_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
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

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Eight characters read as one little-endian word: true when all are digits, `value` their number.
// (Kineto's timestamps have 16 integer digits: two of these steps instead of sixteen.)
bool eight_digits(const char* p, uint64_t& value) {
    uint64_t word = 0;
    std::memcpy(&word, p, 8);
    // A byte is a digit iff its high nibble is 3 and adding 6 does not carry into that nibble.
    constexpr uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ull;
    if (((word & kHigh) | (((word + 0x0606060606060606ull) & kHigh) >> 4)) != 0x3333333333333333ull) return false;
    word &= 0x0F0F0F0F0F0F0F0Full;                               // eight digits, first in the lowest byte
    word = (word * 10 + (word >> 8)) & 0x00FF00FF00FF00FFull;    // pairs: 10 * first + second
    word = (word * 100 + (word >> 16)) & 0x0000FFFF0000FFFFull;  // fours
    value = (word & 0xFFFFFFFFull) * 10000 + (word >> 32);       // eight
    return true;
}

}  // namespace

// One pass over the digits (this runs for every timestamp and duration of a trace: two passes and a
// memchr for the dot were 4.6% of an import's instructions). A character other than a digit or the
// first dot ends it: the text is then a number only with an exponent, read through a double.
std::optional<int64_t> microseconds_text_to_ns(std::string_view text) {
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    if (text.empty()) return std::nullopt;
    const std::string_view whole = text;
    bool negative = false;
    if (text.front() == '-' || text.front() == '+') {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || !is_digit(text.front())) return std::nullopt;
    uint64_t us = 0;  // unsigned: more than 16 digits wrap harmlessly before they are refused below
    size_t integer_digits = 0;
    int64_t ns_part = 0;
    int fraction_digits = -1;  // -1: no dot yet
    bool round_up = false;
    size_t i = 0;
    for (uint64_t eight = 0; i + 8 <= text.size() && eight_digits(text.data() + i, eight); i += 8) {
        us = us * 100'000'000 + eight;
        integer_digits += 8;
    }
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (!is_digit(c)) {
            if (c == '.' && fraction_digits < 0) {
                fraction_digits = 0;
                continue;
            }
            for (char rest : text.substr(i))
                if (rest == 'e' || rest == 'E') return via_double(whole);
            return std::nullopt;
        }
        if (fraction_digits < 0) {
            us = us * 10 + static_cast<uint64_t>(c - '0');
            ++integer_digits;
            continue;
        }
        if (fraction_digits < 3) ns_part = ns_part * 10 + (c - '0');
        if (fraction_digits == 3) round_up = c >= '5';
        ++fraction_digits;
    }
    if (integer_digits > 16 || us > 9'223'372'036'854'774) return std::nullopt;  // beyond int64 nanoseconds
    for (int d = std::max(fraction_digits, 0); d < 3; ++d) ns_part *= 10;
    const int64_t ns = static_cast<int64_t>(us) * 1000 + ns_part + (round_up ? 1 : 0);
    return negative ? -ns : ns;
}

}  // namespace tbdprof::interop
