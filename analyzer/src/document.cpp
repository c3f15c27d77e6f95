#include "document.h"

#include <algorithm>

namespace tbdprof::analyzer {
namespace {

// Display width: count UTF-8 code points, not bytes, so names with non-ASCII characters align.
size_t width(const std::string& text) {
    return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad(const std::string& text, size_t to, bool right) {
    const size_t w = width(text);
    if (w >= to) return text;
    return right ? std::string(to - w, ' ') + text : text + std::string(to - w, ' ');
}

std::string markdown_cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += ' ';
        else out += c;
    }
    return out;
}

}  // namespace

std::string to_text(const Document& document) {
    std::string out = document.title + "\n" + std::string(width(document.title), '=') + "\n";
    for (const std::string& line : document.intro) out += line + "\n";
    for (const Section& section : document.sections) {
        out += "\n" + section.title + "\n" + std::string(width(section.title), '-') + "\n";
        for (const std::string& line : section.lines) out += line + "\n";
        if (!section.table) continue;
        const Table& table = *section.table;
        std::vector<size_t> widths(table.header.size(), 0);
        for (size_t c = 0; c < table.header.size(); ++c) widths[c] = width(table.header[c]);
        for (const auto& row : table.rows) {
            for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], width(row[c]));
        }
        auto print_row = [&](const std::vector<std::string>& row) {
            std::string line;
            for (size_t c = 0; c < widths.size(); ++c) {
                const bool right = c < table.right_aligned.size() && table.right_aligned[c];
                line += pad(c < row.size() ? row[c] : "", widths[c], right);
                if (c + 1 < widths.size()) line += "  ";
            }
            while (!line.empty() && line.back() == ' ') line.pop_back();
            out += line + "\n";
        };
        print_row(table.header);
        std::string rule;
        for (size_t c = 0; c < widths.size(); ++c) rule += std::string(widths[c], '-') + (c + 1 < widths.size() ? "  " : "");
        out += rule + "\n";
        for (const auto& row : table.rows) print_row(row);
    }
    return out;
}

std::string to_markdown(const Document& document) {
    std::string out = "# " + document.title + "\n\n";
    for (const std::string& line : document.intro) out += line + "  \n";
    for (const Section& section : document.sections) {
        out += "\n## " + section.title + "\n\n";
        for (const std::string& line : section.lines) out += line + "  \n";
        if (!section.lines.empty()) out += "\n";
        if (!section.table) continue;
        const Table& table = *section.table;
        out += "|";
        for (const auto& h : table.header) out += " " + markdown_cell(h) + " |";
        out += "\n|";
        for (size_t c = 0; c < table.header.size(); ++c) {
            out += (c < table.right_aligned.size() && table.right_aligned[c]) ? "---:|" : "---|";
        }
        out += "\n";
        for (const auto& row : table.rows) {
            out += "|";
            for (size_t c = 0; c < table.header.size(); ++c) out += " " + markdown_cell(c < row.size() ? row[c] : "") + " |";
            out += "\n";
        }
    }
    return out;
}

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string to_html(const Document& document) {
    std::string out =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + html_escape(document.title) +
        "</title>\n<style>\n"
        "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}\n"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}\n"
        "th,td{border:1px solid #ccc;padding:.25em .6em;font-size:.9em}\n"
        "th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
        "svg{display:block;margin:.5em 0 1em}\n.note{color:#555}\n"
        "</style></head><body>\n<h1>" + html_escape(document.title) + "</h1>\n";
    for (const std::string& line : document.intro) out += "<p class=\"note\">" + html_escape(line) + "</p>\n";
    for (const Section& section : document.sections) {
        out += "<h2>" + html_escape(section.title) + "</h2>\n";
        for (const std::string& line : section.lines) out += "<p>" + html_escape(line) + "</p>\n";
        for (const std::string& chart : section.charts) out += chart + "\n";  // built by svg_charts, escaped there
        if (!section.table) continue;
        const Table& table = *section.table;
        out += "<table><thead><tr>";
        for (const auto& h : table.header) out += "<th>" + html_escape(h) + "</th>";
        out += "</tr></thead><tbody>\n";
        for (const auto& row : table.rows) {
            out += "<tr>";
            for (size_t c = 0; c < table.header.size(); ++c) {
                const bool right = c < table.right_aligned.size() && table.right_aligned[c];
                out += right ? "<td class=\"num\">" : "<td>";
                out += html_escape(c < row.size() ? row[c] : "") + "</td>";
            }
            out += "</tr>\n";
        }
        out += "</tbody></table>\n";
    }
    out += "</body></html>\n";
    return out;
}

}  // namespace tbdprof::analyzer
