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

std::string render_report(const Report& report, Format format);
std::string render_json(const Report& report);

// Several runs side by side: per-metric and per-category tables; stacked bars in HTML.
std::string render_compare(const std::vector<Report>& reports, const std::vector<std::string>& labels, Format format);
// What changed from `base` to `next`: relative changes, largest first.
std::string render_diff(const Report& base, const Report& next, Format format);

}  // namespace tbdprof::analyzer
