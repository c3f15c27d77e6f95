#include "json_writer.h"

#include <charconv>
#include <cmath>

#include <tbdprof/trace/safe_text.h>

namespace tbdprof::interop {

JsonWriter& JsonWriter::string(std::string_view raw_text) {
    // Strict JSON parsers reject invalid UTF-8; names from a trace may hold any bytes.
    const std::string text = trace::valid_utf8(raw_text);
    buffer_.push_back('"');
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            buffer_.push_back('\\');
            buffer_.push_back(c);
        } else if (byte < 0x20) {
            static constexpr char kHex[] = "0123456789abcdef";
            buffer_.append("\\u00");
            buffer_.push_back(kHex[byte >> 4]);
            buffer_.push_back(kHex[byte & 15]);
        } else {
            buffer_.push_back(c);
        }
    }
    buffer_.push_back('"');
    if (buffer_.size() >= kFlushAt) flush();
    return *this;
}

JsonWriter& JsonWriter::number(int64_t value) {
    char text[24];
    const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
    buffer_.append(text, end);
    return *this;
}

JsonWriter& JsonWriter::number(double value) {
    if (!std::isfinite(value)) return raw("0");
    char text[32];
    const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
    buffer_.append(text, end);
    return *this;
}

JsonWriter& JsonWriter::micros(int64_t ns) {
    if (ns < 0) {
        buffer_.push_back('-');
        ns = -ns;
    }
    number(ns / 1000);
    const int64_t fraction = ns % 1000;
    if (fraction != 0) {
        char text[5] = {'.', static_cast<char>('0' + fraction / 100), static_cast<char>('0' + fraction / 10 % 10),
                        static_cast<char>('0' + fraction % 10), 0};
        buffer_.append(text, 4);
    }
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view name, bool first) {
    if (!first) buffer_.push_back(',');
    string(name);
    buffer_.push_back(':');
    return *this;
}

void JsonWriter::flush() {
    if (buffer_.empty()) return;
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) failed_ = true;
    written_ += buffer_.size();
    buffer_.clear();
}

}  // namespace tbdprof::interop
