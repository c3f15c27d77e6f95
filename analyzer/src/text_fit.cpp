#include "text_fit.h"

#include <algorithm>

namespace tbdprof::analyzer {
namespace {

bool starts_code_point(char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
}

// Byte offset of the code point number `n` (or the size when there are fewer).
size_t offset_of(const std::string& text, size_t n) {
    size_t seen = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if (!starts_code_point(text[i])) continue;
        if (seen == n) return i;
        ++seen;
    }
    return text.size();
}

constexpr const char* kEllipsis = "...";
constexpr size_t kEllipsisWidth = 3;

}  // namespace

size_t display_width(const std::string& text) {
    return static_cast<size_t>(std::count_if(text.begin(), text.end(), starts_code_point));
}

std::string elide_middle(const std::string& text, size_t width) {
    const size_t have = display_width(text);
    if (have <= width) return text;
    if (width <= kEllipsisWidth) return text.substr(0, offset_of(text, width));
    const size_t keep = width - kEllipsisWidth;
    const size_t head = (keep + 1) / 2, tail = keep / 2;
    return text.substr(0, offset_of(text, head)) + kEllipsis + text.substr(offset_of(text, have - tail));
}

std::string elide_end(const std::string& text, size_t width) {
    if (display_width(text) <= width) return text;
    if (width <= kEllipsisWidth) return text.substr(0, offset_of(text, width));
    return text.substr(0, offset_of(text, width - kEllipsisWidth)) + kEllipsis;
}

std::vector<std::string> wrap_words(const std::string& text, size_t width, size_t indent) {
    std::vector<std::string> lines;
    if (width == 0 || display_width(text) <= width) return {text};
    indent = std::min(indent, width / 2);
    std::string line;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        std::string word = text.substr(start, end - start);
        start = end + 1;
        if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
            lines.push_back(line);
            line.clear();
        }
        const std::string prefix = line.empty() ? (lines.empty() ? "" : std::string(indent, ' ')) : line + " ";
        if (line.empty()) word = elide_middle(word, width - display_width(prefix));
        line = prefix + word;
        if (end == text.size()) break;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

}  // namespace tbdprof::analyzer
