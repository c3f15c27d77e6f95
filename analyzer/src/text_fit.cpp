#include "text_fit.h"

#include <algorithm>
#include <cctype>

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

namespace {

// Index of the bracket that closes the one at `open` (same kind), or npos.
size_t matching_close(const std::string& text, size_t open) {
    const char o = text[open], c = o == '(' ? ')' : '>';
    int depth = 0;
    for (size_t i = open; i < text.size(); ++i) {
        if (text[i] == o) ++depth;
        if (text[i] == c && --depth == 0) return i;
    }
    return std::string::npos;
}

bool identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '>';
}

// The parameter list's opening parenthesis: the last top-level "(" right after a name, whose
// matching ")" ends the text (or is followed only by qualifiers such as " const").
size_t parameter_list(const std::string& text) {
    int angle = 0;
    size_t found = std::string::npos;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '<') ++angle;
        if (text[i] == '>' && angle > 0) --angle;
        if (text[i] == '(' && angle == 0 && i > 0 && identifier_char(text[i - 1])) {
            const size_t close = matching_close(text, i);
            if (close == std::string::npos) return std::string::npos;
            if (text.find_first_not_of(" constvolatile&", close + 1) == std::string::npos) found = i;
            i = close;
        }
    }
    return found;
}

}  // namespace

std::string shorten_symbol(const std::string& text, size_t width) {
    if (display_width(text) <= width) return text;
    const size_t params = parameter_list(text);
    if (params == std::string::npos && text.find("::") == std::string::npos) return elide_middle(text, width);
    std::string s = text;
    // 1. The parameter list.
    if (params != std::string::npos) {
        const size_t close = matching_close(s, params);
        if (close > params + 1) s = s.substr(0, params) + "(...)" + s.substr(close + 1);
    }
    // 2. Leading scopes (and a return type before them): the name's own part stays.
    while (display_width(s) > width) {
        int depth = 0;
        size_t cut = std::string::npos;
        for (size_t i = 0; i + 1 < s.size() && cut == std::string::npos; ++i) {
            if (s[i] == '<' || s[i] == '(') ++depth;
            if ((s[i] == '>' || s[i] == ')') && depth > 0) --depth;
            if (depth == 0 && s[i] == ':' && s[i + 1] == ':') cut = i + 2;
        }
        if (cut == std::string::npos) break;
        s = s.substr(cut);
    }
    // 3. Template argument lists, outermost first.
    for (size_t i = 0; display_width(s) > width && i < s.size(); ++i) {
        if (s[i] != '<' || i == 0 || !identifier_char(s[i - 1])) continue;
        const size_t close = matching_close(s, i);
        if (close == std::string::npos) break;
        if (close > i + 4 || s.compare(i, 5, "<...>") != 0) s = s.substr(0, i) + "<...>" + s.substr(close + 1);
        i += 4;
    }
    return elide_middle(s, width);
}

std::string elide_end(const std::string& text, size_t width) {
    if (display_width(text) <= width) return text;
    if (width <= kEllipsisWidth) return text.substr(0, offset_of(text, width));
    return text.substr(0, offset_of(text, width - kEllipsisWidth)) + kEllipsis;
}

std::vector<std::string> wrap_words(const std::string& text, size_t width, size_t indent) {
    std::vector<std::string> lines;
    if (width == 0 || display_width(text) <= width) return {text};
    // A line indented under another (one item of a list) keeps its indent, and its continuation lines
    // go further in than it.
    const size_t lead = std::min(text.find_first_not_of(' '), text.size());
    const std::string first_prefix(std::min(lead, width / 2), ' ');
    const std::string next_prefix(std::min(lead + indent, width / 2), ' ');
    std::string line;
    size_t start = lead;
    while (start <= text.size()) {
        size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        std::string word = text.substr(start, end - start);
        start = end + 1;
        if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
            lines.push_back(line);
            line.clear();
        }
        const std::string prefix = line.empty() ? (lines.empty() ? first_prefix : next_prefix) : line + " ";
        if (line.empty()) word = elide_middle(word, width - display_width(prefix));
        line = prefix + word;
        if (end == text.size()) break;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

}  // namespace tbdprof::analyzer
