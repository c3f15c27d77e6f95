// The result of a memory what-if rendered as a table of scenarios (text, markdown), an HTML page or
// JSON (scenarios[] with name, peak_bytes, by_category, fits), for `tbdprof whatif` (cli/).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tbdprof/trace/json_writer.h>
#include <tbdprof/trace/safe_text.h>

#include "document.h"
#include "svg_charts.h"
#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/units.h"
#include "tbdprof/analyzer/whatif.h"

namespace tbdprof::analyzer {
namespace {

std::string fit_line(const WhatIfScenario& s, const WhatIfResult& r) {
    if (!r.device_memory_bytes && !s.headroom_bytes) return "device memory unknown (give --device-memory)";
    const std::string headroom = s.headroom_bytes ? format_bytes(*s.headroom_bytes) : "?";
    switch (s.verdict) {
        case FitVerdict::fits:
            return "fits (headroom " + headroom + ")";
        case FitVerdict::borderline:
            return "borderline: within the model's " + format_percent(r.fit_margin) + " error of the device memory";
        case FitVerdict::does_not_fit:
            return "does not fit (short by " + format_bytes(-*s.headroom_bytes) + ")";
        case FitVerdict::unknown:
            return "device memory unknown";
    }
    return {};
}

// Text and markdown: one row per scenario, the peak and its split by category, the verdict.
std::string render_table(const WhatIfResult& r, bool markdown) {
    std::vector<std::string> header{"scenario", "peak"};
    for (int c = 0; c < kCategoryCount; ++c) header.emplace_back(category_name(c));
    header.emplace_back("headroom");
    std::vector<std::vector<std::string>> rows{header};
    for (const WhatIfScenario& s : r.scenarios) {
        std::vector<std::string> row{s.name, format_bytes(s.peak_bytes)};
        for (int64_t bytes : s.at_peak) row.push_back(format_bytes(bytes));
        row.push_back(s.headroom_bytes ? format_bytes(*s.headroom_bytes) : "-");
        rows.push_back(std::move(row));
    }
    std::vector<size_t> width(header.size(), 0);
    for (const auto& row : rows)
        for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    std::string out = markdown ? "## Memory what-if\n\n" : "Memory what-if\n--------------\n";
    out += "device memory: " + (r.device_memory_bytes ? format_bytes(*r.device_memory_bytes) : "unknown") +
           (r.device_name.empty() ? "" : " (" + trace::printable(r.device_name) + ")") + "\n\n";
    for (size_t k = 0; k < rows.size(); ++k) {
        for (size_t i = 0; i < rows[k].size(); ++i)
            out += markdown ? "| " + rows[k][i] + " "
                            : (i == 0 ? fmt::format("{:<{}}", rows[k][i], width[i])
                                      : fmt::format("  {:>{}}", rows[k][i], width[i]));
        out += markdown ? "|\n" : "\n";
        if (k == 0 && markdown) {
            for (size_t i = 0; i < rows[k].size(); ++i) out += i == 0 ? "|---" : "|---:";
            out += "|\n";
        }
    }
    out += "\n";
    for (const WhatIfScenario& s : r.scenarios) out += (markdown ? "- " : "") + s.name + ": " + fit_line(s, r) + "\n";
    if (!r.cannot_predict.empty()) out += "\ncannot predict: " + r.cannot_predict + "\n";
    for (const std::string& note : r.notes) out += (markdown ? "- note: " : "note: ") + note + "\n";
    return out;
}

// HTML: the report's page (document.h) with the scenarios' table, a bar per scenario split by
// category (the report's chart), the verdicts and the notes.
std::string render_html(const WhatIfResult& r) {
    Document doc;
    doc.title = "Memory what-if";
    doc.intro.push_back("device memory: " +
                        (r.device_memory_bytes ? format_bytes(*r.device_memory_bytes) : std::string("unknown")) +
                        (r.device_name.empty() ? "" : " (" + r.device_name + ")"));
    Section scenarios{"Scenarios", {}, Table{}, {}};
    scenarios.table->header = {"scenario", "peak"};
    for (int c = 0; c < kCategoryCount; ++c) scenarios.table->header.emplace_back(category_name(c));
    scenarios.table->header.emplace_back("headroom");
    scenarios.table->header.emplace_back("verdict");
    scenarios.table->right_aligned.assign(scenarios.table->header.size(), true);
    scenarios.table->right_aligned.front() = scenarios.table->right_aligned.back() = false;
    std::vector<std::string> labels;
    std::vector<CategoryBytes> bars;
    for (const WhatIfScenario& s : r.scenarios) {
        std::vector<std::string> row{s.name, format_bytes(s.peak_bytes)};
        for (int64_t bytes : s.at_peak) row.push_back(format_bytes(bytes));
        row.push_back(s.headroom_bytes ? format_bytes(*s.headroom_bytes) : "-");
        row.push_back(fit_line(s, r));
        scenarios.table->add(std::move(row));
        labels.push_back(s.name);
        bars.push_back(s.at_peak);
    }
    scenarios.charts.push_back(category_bars_chart(labels, bars));
    if (!r.cannot_predict.empty()) scenarios.warnings.push_back("cannot predict: " + r.cannot_predict);
    doc.sections.push_back(std::move(scenarios));
    if (r.checkpoint)
        doc.sections.push_back(Section{"Checkpointing",
                                       {std::to_string(r.checkpoint->layers) + " layers, segments of " +
                                            std::to_string(r.checkpoint->segment_layers) + ": " +
                                            format_bytes(r.checkpoint->recomputed_bytes) +
                                            " of activations recomputed per step, " +
                                            format_number(r.checkpoint->extra_forward_ns_per_step / 1e6) +
                                            " ms more forward per step"},
                                       std::nullopt,
                                       {}});
    if (!r.notes.empty()) doc.sections.push_back(Section{"Notes", r.notes, std::nullopt, {}});
    return to_html(doc);
}

std::string render_json(const WhatIfResult& r) {
    trace::JsonWriter json;
    json.begin_object();
    if (r.device_memory_bytes)
        json.value("device_memory_bytes", *r.device_memory_bytes);
    else
        json.null("device_memory_bytes");
    if (r.precision_recorded) json.value("precision_recorded", storage_precision_name(*r.precision_recorded));
    json.value("granularity_bytes", r.granularity_bytes);
    json.value("fit_margin", r.fit_margin);
    if (r.checkpoint) {
        json.begin_object("checkpoint");
        json.value("layers", int64_t{r.checkpoint->layers})
            .value("segment_layers", int64_t{r.checkpoint->segment_layers})
            .value("segments", int64_t{r.checkpoint->segments})
            .value("recomputed_bytes", r.checkpoint->recomputed_bytes)
            .value("extra_forward_ns_per_step",
                   static_cast<int64_t>(std::llround(r.checkpoint->extra_forward_ns_per_step)))
            .value("step_ns", static_cast<int64_t>(std::llround(r.checkpoint->iteration_duration_ns)));
        json.end_object();
    }
    if (r.cannot_predict.empty())
        json.null("cannot_predict");
    else
        json.value("cannot_predict", r.cannot_predict);
    json.begin_array("scenarios");
    for (const WhatIfScenario& s : r.scenarios) {
        json.begin_object();
        json.value("name", s.name).value("peak_bytes", s.peak_bytes).value("peak_ns", s.peak_trace_ns);
        json.value("device_peak_bytes", s.device_peak_bytes);
        json.begin_object("by_category");
        for (int c = 0; c < kCategoryCount; ++c) json.value(category_name(c), s.at_peak[static_cast<size_t>(c)]);
        json.end_object();
        if (s.headroom_bytes)
            json.value("headroom_bytes", *s.headroom_bytes);
        else
            json.null("headroom_bytes");
        if (s.verdict == FitVerdict::unknown)
            json.null("fits");
        else
            json.value("fits", s.verdict == FitVerdict::fits);
        json.value("verdict", fit_verdict_name(s.verdict));
        json.end_object();
    }
    json.end_array();
    json.begin_array("notes");
    for (const std::string& note : r.notes) json.value("", note);
    json.end_array();
    json.end_object();
    return json.str() + "\n";
}

}  // namespace

std::string render_whatif(const WhatIfResult& result, Format format) {
    return format == Format::json   ? render_json(result)
           : format == Format::html ? render_html(result)
                                    : render_table(result, format == Format::markdown);
}

}  // namespace tbdprof::analyzer
