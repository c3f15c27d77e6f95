// diff: what changed from a base run to a new one, largest relative change first.
#include <algorithm>

#include <fmt/format.h>
#include <cmath>
#include <map>

#include "document.h"
#include "metrics_list.h"
#include "tbdprof/analyzer/render.h"
#include "tbdprof/analyzer/tag_plausibility.h"
#include "tbdprof/analyzer/units.h"
#include "tbdprof/trace/json_writer.h"

namespace tbdprof::analyzer {
namespace {

struct Change {
    std::string section, name;
    Unit unit;
    double base, next;
    double relative() const {
        if (base == next) return 0;
        if (base == 0) return INFINITY;
        return (next - base) / std::fabs(base);
    }
};

std::string relative_text(const Change& c) {
    const double rel = c.relative();
    if (rel == 0) return "unchanged";
    if (std::isinf(rel)) return "new";
    return fmt::format("{:+.1f}%", rel * 100.0);
}

std::vector<Change> collect(const Report& base, const Report& next) {
    std::vector<Change> changes;
    const auto a = headline_metrics(base), b = headline_metrics(next);
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) changes.push_back({"metric", a[i].label, a[i].unit, a[i].value, b[i].value});
    for (int c = 0; c < kCategoryCount; ++c) {
        changes.push_back({"memory at peak", category_name(c), Unit::bytes, static_cast<double>(base.memory.at_peak[c]),
                           static_cast<double>(next.memory.at_peak[c])});
        changes.push_back({"category maximum", category_name(c), Unit::bytes,
                           static_cast<double>(base.memory.category_max[c]), static_cast<double>(next.memory.category_max[c])});
    }
    std::map<std::string, std::pair<double, double>> kernels;  // name -> (base total s, new total s)
    for (const KernelStat& k : base.kernels.top) kernels[k.name].first = static_cast<double>(k.total_ns) * 1e-9;
    for (const KernelStat& k : next.kernels.top) kernels[k.name].second = static_cast<double>(k.total_ns) * 1e-9;
    for (const auto& [name, totals] : kernels) changes.push_back({"kernel total time", name, Unit::seconds, totals.first, totals.second});
    std::stable_sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
        return std::fabs(x.relative()) > std::fabs(y.relative());
    });
    return changes;
}

}  // namespace

std::string render_diff(const Report& base, const Report& next, Format format, size_t text_width) {
    const std::vector<Change> changes = collect(base, next);
    if (format == Format::json) {
        trace::JsonWriter json;
        json.begin_object().value("schema", "tbdprof-diff").value("schema_version", 1);
        json.value("base", base.run.trace_path).value("new", next.run.trace_path);
        // Whose memory tags are unreliable (tag_plausibility.h): their category changes are guesses.
        for (const auto& [key, report] : {std::pair<const char*, const Report*>{"base_tag_warnings", &base},
                                          std::pair<const char*, const Report*>{"new_tag_warnings", &next}}) {
            json.begin_array(key);
            for (const std::string& warning : report->memory.tags.warnings) json.value("", warning);
            json.end_array();
        }
        json.begin_array("changes");
        for (const Change& c : changes) {
            json.begin_object().value("section", c.section).value("name", c.name).value("base", c.base).value("new", c.next);
            const double rel = c.relative();
            if (std::isinf(rel)) json.null("relative");
            else json.value("relative", rel);
            json.end_object();
        }
        json.end_array().end_object();
        return json.str();
    }
    Document document;
    document.title = "tbdprof diff";
    document.intro.push_back("base: " + base.run.trace_path + " (window " + base.window.used + ")");
    document.intro.push_back("new:  " + next.run.trace_path + " (window " + next.window.used + ")");
    Section changed{"Changes, largest first", {}, Table{{"what", "name", "base", "new", "change"}, {false, false, true, true, true}, {}}, {}};
    changed.warnings = tag_warning_lines(base.memory.tags, "base");
    for (std::string& line : tag_warning_lines(next.memory.tags, "new")) changed.warnings.push_back(std::move(line));
    Section same{"Unchanged", {}, std::nullopt, {}};
    std::string unchanged;
    for (const Change& c : changes) {
        if (c.relative() == 0) {
            unchanged += (unchanged.empty() ? "" : ", ") + c.name;
            continue;
        }
        changed.table->add({c.section, c.name.size() > 70 ? c.name.substr(0, 67) + "..." : c.name,
                            format_metric(c.unit, c.base), format_metric(c.unit, c.next), relative_text(c)});
    }
    if (changed.table->rows.empty()) changed.lines.push_back("no differences");
    document.sections.push_back(std::move(changed));
    if (!unchanged.empty()) {
        same.lines.push_back(unchanged);
        document.sections.push_back(std::move(same));
    }
    switch (format) {
    case Format::markdown: return to_markdown(document);
    case Format::html: return to_html(document);
    default: return to_text(document, text_width);
    }
}

}  // namespace tbdprof::analyzer
