// compare: several runs side by side (one model under different frameworks, settings, commits).
#include "document.h"
#include "metrics_list.h"
#include "report_document.h"
#include "svg_charts.h"
#include "tbdprof/analyzer/render.h"
#include "tbdprof/analyzer/tag_plausibility.h"
#include "tbdprof/analyzer/units.h"
#include "tbdprof/trace/json_writer.h"

namespace tbdprof::analyzer {
namespace {

std::string compare_json(const std::vector<Report>& reports, const std::vector<std::string>& labels) {
    trace::JsonWriter json;
    json.begin_object().value("schema", "tbdprof-compare").value("schema_version", 1);
    json.begin_array("runs");
    for (size_t i = 0; i < reports.size(); ++i) {
        json.begin_object().value("label", labels[i]).value("trace", reports[i].run.trace_path);
        json.value("window", reports[i].window.used);
        json.begin_object("metrics");
        for (const Metric& m : headline_metrics(reports[i])) json.value(m.key, m.value);
        json.end_object();
        json.begin_object("at_peak");
        for (int c = 0; c < kCategoryCount; ++c) json.value(category_name(c), reports[i].memory.at_peak[c]);
        json.end_object();
        json.begin_object("category_max");
        for (int c = 0; c < kCategoryCount; ++c) json.value(category_name(c), reports[i].memory.category_max[c]);
        json.end_object();
        const TagPlausibility& tags = reports[i].memory.tags;
        if (tags.verdict == TagVerdict::not_checked) json.null("tags_plausible");
        else json.value("tags_plausible", tags.verdict == TagVerdict::plausible);
        json.begin_array("tag_warnings");
        for (const std::string& warning : tags.warnings) json.value("", warning);
        json.end_array().end_object();
    }
    json.end_array().end_object();
    return json.str();
}

Table runs_table(const std::vector<std::string>& labels, const char* first) {
    Table table;
    table.header.push_back(first);
    table.right_aligned.push_back(false);
    for (const std::string& label : labels) {
        table.header.push_back(label);
        table.right_aligned.push_back(true);
    }
    return table;
}

}  // namespace

std::string render_compare(const std::vector<Report>& reports, const std::vector<std::string>& labels, Format format,
                           size_t text_width) {
    if (format == Format::json) return compare_json(reports, labels);
    Document document;
    document.title = "tbdprof compare: " + std::to_string(reports.size()) + " runs";
    Section runs{"Runs", {}, Table{{"run", "trace", "window", "command"}, {false, false, false, false}, {}}, {}};
    for (size_t i = 0; i < reports.size(); ++i) {
        runs.table->add({labels[i], reports[i].run.trace_path, reports[i].window.used, reports[i].run.command_line});
    }
    document.sections.push_back(std::move(runs));

    Section metrics{"Metrics", {}, runs_table(labels, "metric"), {}};
    std::vector<std::vector<Metric>> all;
    for (const Report& r : reports) all.push_back(headline_metrics(r));
    for (size_t m = 0; m < all.front().size(); ++m) {
        std::vector<std::string> row{all.front()[m].label};
        for (const auto& list : all) row.push_back(m < list.size() ? format_metric(list[m].unit, list[m].value) : "-");
        metrics.table->add(std::move(row));
    }
    document.sections.push_back(std::move(metrics));

    Section at_peak{"Memory at peak, by category", {}, runs_table(labels, "category"), {}};
    Section maxima{"Each category's own maximum", {}, runs_table(labels, "category"), {}};
    for (int c = 0; c < kCategoryCount; ++c) {
        std::vector<std::string> row{category_name(c)}, max_row{category_name(c)};
        for (const Report& r : reports) {
            row.push_back(format_bytes(r.memory.at_peak[c]));
            max_row.push_back(format_bytes(r.memory.category_max[c]));
        }
        at_peak.table->add(std::move(row));
        maxima.table->add(std::move(max_row));
    }
    std::vector<std::string> peak_row{"total (peak)"};
    for (const Report& r : reports) peak_row.push_back(format_bytes(r.memory.peak_bytes));
    at_peak.table->add(std::move(peak_row));
    // Which breakdowns can be believed (tag_plausibility.h): never a column of guesses without a warning.
    std::vector<std::string> tags_row{"memory tags"};
    for (size_t i = 0; i < reports.size(); ++i) {
        const TagVerdict verdict = reports[i].memory.tags.verdict;
        tags_row.push_back(verdict == TagVerdict::plausible     ? "plausible"
                           : verdict == TagVerdict::implausible ? "UNRELIABLE"
                                                                : "not checked");
        for (std::string& line : tag_warning_lines(reports[i].memory.tags, labels[i]))
            at_peak.warnings.push_back(std::move(line));
    }
    at_peak.table->add(std::move(tags_row));
    for (const std::string& line : at_peak.warnings) maxima.warnings.push_back(line);
    if (format == Format::html) {
        std::vector<CategoryBytes> values;
        for (const Report& r : reports) values.push_back(r.memory.at_peak);
        at_peak.charts.push_back(category_bars_chart(labels, values));
    }
    document.sections.push_back(std::move(at_peak));
    document.sections.push_back(std::move(maxima));

    Section notes{"Notes", {}, std::nullopt, {}};
    for (size_t i = 0; i < reports.size(); ++i) {
        for (const std::string& note : reports[i].notes) notes.lines.push_back(labels[i] + ": " + note);
    }
    if (!notes.lines.empty()) document.sections.push_back(std::move(notes));

    switch (format) {
    case Format::markdown: return to_markdown(document);
    case Format::html: return to_html(document);
    default: return to_text(document, text_width);
    }
}

}  // namespace tbdprof::analyzer
