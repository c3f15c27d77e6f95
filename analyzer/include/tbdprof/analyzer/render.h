// Printing reports: aligned text for a terminal, markdown for CI summaries, JSON with a documented
// schema (schemas/report.schema.json), and one self-contained HTML file with inline SVG charts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

enum class Format { text, markdown, json, html };
std::optional<Format> parse_format(std::string_view text);

// `text_width`: the text format fits it (names and stacks elided, sentences wrapped); 0: no limit.
// JSON, markdown and HTML keep full names (markdown cuts call stacks to 100 characters).
std::string render_report(const Report& report, Format format, size_t text_width = 0);
std::string render_json(const Report& report);

// Several runs side by side: per-metric and per-category tables; stacked bars in HTML.
std::string render_compare(const std::vector<Report>& reports, const std::vector<std::string>& labels, Format format,
                           size_t text_width = 0);
// What changed from `base` to `next`: relative changes, largest first.
std::string render_diff(const Report& base, const Report& next, Format format, size_t text_width = 0);

}  // namespace tbdprof::analyzer
