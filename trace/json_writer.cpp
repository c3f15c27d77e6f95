#include "tbdprof/trace/json_writer.h"

#include "tbdprof/trace/output_file.h"
#include "tbdprof/trace/safe_text.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <iterator>

namespace tbdprof::trace {

JsonWriter& JsonWriter::raw(std::string_view text) {
    buffer_.append(text);
    spill();
    return *this;
}

// The characters JSON writes as a backslash and a letter, and those letters; other control
// characters are written as \u00XX.
constexpr std::string_view kEscaped = "\"\\\n\r\t", kEscapeLetters = "\"\\nrt";

JsonWriter& JsonWriter::string(std::string_view text) {
    buffer_.push_back('"');
    for (const char c : valid_utf8(text)) {
        if (const size_t letter = kEscaped.find(c); letter != std::string_view::npos) {
            buffer_.push_back('\\');
            buffer_.push_back(kEscapeLetters[letter]);
        } else if (const auto byte = static_cast<unsigned char>(c); byte < 0x20) {
            fmt::format_to(std::back_inserter(buffer_), "\\u{:04x}", byte);
        } else {
            buffer_.push_back(c);
        }
    }
    buffer_.push_back('"');
    spill();
    return *this;
}

JsonWriter& JsonWriter::number(int64_t value) {
    char text[24];
    const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
    buffer_.append(text, end);
    return *this;
}

JsonWriter& JsonWriter::number(double value) {
    if (!std::isfinite(value)) return raw("null");
    if (std::fabs(value) < 9e15 && value == std::trunc(value)) return number(static_cast<int64_t>(value));
    char text[40];
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
    if (const int64_t fraction = ns % 1000; fraction != 0) {
        const char text[4] = {'.', static_cast<char>('0' + fraction / 100), static_cast<char>('0' + fraction / 10 % 10),
                              static_cast<char>('0' + fraction % 10)};
        buffer_.append(text, sizeof text);
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
    if (file_ == nullptr || buffer_.empty()) return;
    file_->write(buffer_);
    written_ += buffer_.size();
    buffer_.clear();
}

void JsonWriter::newline() {
    if (!pretty_) return;
    buffer_ += '\n';
    buffer_.append(first_.size() * 2, ' ');
}

JsonWriter& JsonWriter::prefix(std::string_view key) {
    if (!first_.empty()) {
        if (!first_.back()) buffer_ += ',';
        first_.back() = false;
        newline();
    }
    if (!key.empty()) {
        string(key);
        buffer_ += pretty_ ? ": " : ":";
    }
    return *this;
}

JsonWriter& JsonWriter::open(std::string_view key, char bracket) {
    prefix(key);
    buffer_ += bracket;
    first_.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    buffer_ += bracket;
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    close('}');
    if (first_.empty() && pretty_) buffer_ += '\n';  // a document ends with a newline
    return *this;
}

}  // namespace tbdprof::trace
