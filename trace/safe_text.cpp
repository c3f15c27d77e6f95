#include "tbdprof/trace/safe_text.h"

#include <fmt/format.h>

#include <cstdint>

namespace tbdprof::trace {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence at `at`, or 0 when it is not one (overlong forms, surrogates and
// code points above U+10FFFF are invalid).
size_t sequence_length(std::string_view text, size_t at) {
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
    const uint8_t lead = byte(at);
    if (lead < 0x80) return 1;
    size_t length = 0;
    uint32_t code = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        code = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        code = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        code = lead & 0x07;
    } else {
        return 0;
    }
    if (at + length > text.size()) return 0;
    for (size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80) return 0;
        code = code << 6 | (byte(at + i) & 0x3F);
    }
    if ((length == 3 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) ||
        (length == 4 && (code < 0x10000 || code > 0x10FFFF)))
        return 0;
    return length;
}

template <class OnValid>
std::string rewrite(std::string_view text, OnValid&& on_valid) {
    std::string out;
    out.reserve(text.size());
    for (size_t at = 0; at < text.size();) {
        const size_t length = sequence_length(text, at);
        if (length == 0) {
            out += kReplacement;
            ++at;
            while (at < text.size() && (static_cast<uint8_t>(text[at]) & 0xC0) == 0x80) ++at;  // its continuation bytes
            continue;
        }
        on_valid(out, text.substr(at, length));
        at += length;
    }
    return out;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
    return rewrite(text, [](std::string& out, std::string_view sequence) { out += sequence; });
}

std::string printable(std::string_view text) {
    return rewrite(text, [](std::string& out, std::string_view sequence) {
        const auto first = static_cast<uint8_t>(sequence[0]);
        if (sequence.size() == 1 && ((first < 0x20 && first != '\n' && first != '\t') || first == 0x7F)) {
            out += fmt::format("\\x{:02x}", first);
        } else if (sequence.size() == 2 && first == 0xC2 && static_cast<uint8_t>(sequence[1]) < 0xA0) {
            out += fmt::format("\\u{:04x}", static_cast<uint8_t>(sequence[1]));  // C1 control
        } else {
            out += sequence;
        }
    });
}

}  // namespace tbdprof::trace
