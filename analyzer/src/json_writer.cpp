#include "json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace tbdprof::analyzer {

std::string json_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    for (unsigned char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char buffer[8];
                std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
                out += buffer;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    out += '"';
    return out;
}

void JsonWriter::newline() {
    if (!pretty_) return;
    out_ += '\n';
    out_.append(first_.size() * 2, ' ');
}

void JsonWriter::prefix(std::string_view key) {
    if (!first_.empty()) {
        if (!first_.back()) out_ += ',';
        first_.back() = false;
        newline();
    }
    if (!key.empty()) {
        out_ += json_escape(key);
        out_ += pretty_ ? ": " : ":";
    }
}

JsonWriter& JsonWriter::begin_object(std::string_view key) {
    prefix(key);
    out_ += '{';
    first_.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ += '}';
    if (first_.empty() && pretty_) out_ += '\n';
    return *this;
}

JsonWriter& JsonWriter::begin_array(std::string_view key) {
    prefix(key);
    out_ += '[';
    first_.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ += ']';
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, std::string_view text) {
    prefix(key);
    out_ += json_escape(text);
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, double number) {
    prefix(key);
    if (!std::isfinite(number)) {
        out_ += "null";
        return *this;
    }
    // Whole numbers (FLOP counts, bytes) print as integers; others as the shortest text that reads
    // back as the same double.
    if (std::fabs(number) < 9e15 && number == std::trunc(number)) {
        out_ += std::to_string(static_cast<int64_t>(number));
        return *this;
    }
    char buffer[40];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
    out_.append(buffer, result.ptr);
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, int64_t number) {
    prefix(key);
    out_ += std::to_string(number);
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, bool flag) {
    prefix(key);
    out_ += flag ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view key, std::optional<double> number) {
    return number ? value(key, *number) : null(key);
}

JsonWriter& JsonWriter::null(std::string_view key) {
    prefix(key);
    out_ += "null";
    return *this;
}

}  // namespace tbdprof::analyzer
