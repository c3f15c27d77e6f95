#include "document.h"

#include "text_fit.h"

#include <algorithm>

namespace tbdprof::analyzer {
namespace {

size_t width(const std::string& text) { return display_width(text); }

std::string pad(const std::string& text, size_t to, bool right) {
    const size_t w = width(text);
    if (w >= to) return text;
    return right ? std::string(to - w, ' ') + text : text + std::string(to - w, ' ');
}

constexpr size_t kGap = 2;        // spaces between columns
constexpr size_t kMinColumn = 8;        // a text column is not cut below this
constexpr size_t kMinStackColumn = 30;  // a column cut at its end shrinks first, to this

bool flag(const std::vector<bool>& flags, size_t c) { return c < flags.size() && flags[c]; }

// Column widths for `table` within `limit` (0: none): the text columns shrink, widest first. Empty
// when even the narrowest layout does not fit.
std::vector<size_t> fit_columns(const Table& table, size_t limit) {
    std::vector<size_t> widths(table.header.size(), 0);
    for (size_t c = 0; c < table.header.size(); ++c) widths[c] = width(table.header[c]);
    for (const auto& row : table.rows)
        for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], width(row[c]));
    if (limit == 0 || widths.empty()) return widths;
    size_t total = kGap * (widths.size() - 1);
    for (size_t w : widths) total += w;
    while (total > limit) {
        // Columns cut at their end (call stacks, lists) give way first, widest first, down to a few
        // items' worth; then the widest text column.
        size_t widest = widths.size();
        for (size_t c = 0; c < widths.size(); ++c)
            if (flag(table.keep_start, c) && widths[c] > kMinStackColumn &&
                (widest == widths.size() || widths[c] > widths[widest]))
                widest = c;
        const bool end_cut_found = widest != widths.size();
        for (size_t c = 0; c < widths.size() && !end_cut_found; ++c)
            if (!flag(table.right_aligned, c) && widths[c] > kMinColumn && (widest == widths.size() || widths[c] > widths[widest]))
                widest = c;
        if (widest == widths.size()) return {};
        --widths[widest];
        --total;
    }
    return widths;
}

std::string fit_cell(const Table& table, size_t c, const std::string& text, size_t to) {
    return flag(table.keep_start, c) ? elide_end(text, to) : shorten_symbol(text, to);
}

void append_wrapped(std::string& out, const std::string& line, size_t limit) {
    for (const std::string& part : wrap_words(line, limit)) out += part + "\n";
}

// A table too wide for any column layout: one "header: value" line per cell, rows apart.
void append_records(std::string& out, const Table& table, size_t limit) {
    for (size_t r = 0; r < table.rows.size(); ++r) {
        if (r) out += "\n";
        for (size_t c = 0; c < table.header.size(); ++c) {
            const std::string key = table.header[c] + ": ";
            const std::string value = c < table.rows[r].size() ? table.rows[r][c] : "";
            const size_t room = limit > width(key) ? limit - width(key) : 0;
            out += elide_middle(key, limit) + fit_cell(table, c, value, room) + "\n";
        }
    }
}

void append_table(std::string& out, const Table& table, size_t limit) {
    const std::vector<size_t> widths = fit_columns(table, limit);
    if (widths.empty() && !table.header.empty()) return append_records(out, table, limit);
    auto print_row = [&](const std::vector<std::string>& row) {
        std::string line;
        for (size_t c = 0; c < widths.size(); ++c) {
            const std::string cell = fit_cell(table, c, c < row.size() ? row[c] : "", widths[c]);
            line += pad(cell, widths[c], flag(table.right_aligned, c));
            if (c + 1 < widths.size()) line += std::string(kGap, ' ');
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

std::string to_text(const Document& document, size_t limit) {
    const std::string title = limit ? elide_middle(document.title, limit) : document.title;
    std::string out = title + "\n" + std::string(width(title), '=') + "\n";
    for (const std::string& line : document.intro) append_wrapped(out, line, limit);
    for (const Section& section : document.sections) {
        const std::string heading = limit ? elide_middle(section.title, limit) : section.title;
        out += "\n" + heading + "\n" + std::string(width(heading), '-') + "\n";
        for (const std::string& line : section.warnings) append_wrapped(out, "WARNING: " + line, limit);
        for (const std::string& line : section.lines) append_wrapped(out, line, limit);
        if (section.table) append_table(out, *section.table, limit);
    }
    return out;
}

std::string to_markdown(const Document& document) {
    std::string out = "# " + document.title + "\n\n";
    for (const std::string& line : document.intro) out += line + "  \n";
    for (const Section& section : document.sections) {
        out += "\n## " + section.title + "\n\n";
        for (const std::string& line : section.warnings) out += "> **Warning:** " + line + "  \n";
        if (!section.warnings.empty()) out += "\n";
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
        ".warning{color:#7f1d1d;background:#fdecea;border-left:4px solid #c62828;padding:.35em .7em;margin:.3em 0}\n"
        "</style></head><body>\n<h1>" + html_escape(document.title) + "</h1>\n";
    for (const std::string& line : document.intro) out += "<p class=\"note\">" + html_escape(line) + "</p>\n";
    for (const Section& section : document.sections) {
        out += "<h2>" + html_escape(section.title) + "</h2>\n";
        for (const std::string& line : section.warnings)
            out += "<p class=\"warning\"><strong>Warning:</strong> " + html_escape(line) + "</p>\n";
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
