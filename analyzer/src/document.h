// A neutral document (titled sections of lines and tables, optional SVG charts) that the text,
// markdown and HTML renderers print. Report, compare and diff build one; printing is shared.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tbdprof::analyzer {

struct Table {
    std::vector<std::string> header;
    std::vector<bool> right_aligned;  // per column; numbers are right-aligned
    std::vector<std::vector<std::string>> rows;
    // Per column: cut keeping the start (call stacks, innermost frame first; lists, largest first)
    // rather than in the middle (names), when the text table does not fit the width.
    std::vector<bool> keep_start = {};
    void add(std::vector<std::string> row) { rows.push_back(std::move(row)); }
};

struct Section {
    std::string title;
    std::vector<std::string> lines;  // plain sentences, printed before the table
    std::optional<Table> table;
    std::vector<std::string> charts;  // inline SVG, HTML only
    // Printed first and marked as warnings in every format (text "WARNING:", a markdown quote, a
    // red HTML box): what makes the section's figures unreliable.
    std::vector<std::string> warnings = {};
};

struct Document {
    std::string title;
    std::vector<std::string> intro;
    std::vector<Section> sections;
};

// `width`: the text fits it (tables shrink their text columns, eliding cells; a table that cannot
// fit is printed row by row; sentences wrap); 0: no limit.
std::string to_text(const Document& document, size_t width = 0);
std::string to_markdown(const Document& document);
std::string to_html(const Document& document);
std::string html_escape(std::string_view text);

}  // namespace tbdprof::analyzer
