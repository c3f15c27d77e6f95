#include "svg_charts.h"

#include <fmt/format.h>

#include <algorithm>

#include "document.h"
#include "tbdprof/analyzer/category_colors.h"
#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer {
namespace {

constexpr const auto& kColors = kCategoryColors;
constexpr double kWidth = 900, kHeight = 240, kLeft = 70, kRight = 10, kTop = 10, kBottom = 30;

std::string num(double v) {
    return fmt::format("{:.1f}", v);
}

std::string open_svg(double height) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" + num(height) +
           "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) + "\" font-family=\"sans-serif\" font-size=\"11\">";
}

std::string text_at(double x, double y, const std::string& text, const char* anchor = "start") {
    return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\">" + html_escape(text) +
           "</text>";
}

std::string axes(const std::string& y_top_label, double duration_s) {
    const double bottom = kHeight - kBottom;
    std::string out = "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(bottom) + "\" x2=\"" + num(kWidth - kRight) +
                      "\" y2=\"" + num(bottom) + "\" stroke=\"#333\"/>";
    out += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(kLeft) + "\" y2=\"" + num(bottom) +
           "\" stroke=\"#333\"/>";
    out += text_at(kLeft - 4, kTop + 10, y_top_label, "end");
    out += text_at(kLeft - 4, bottom, "0", "end");
    for (int i = 0; i <= 4; ++i) {
        const double x = kLeft + (kWidth - kLeft - kRight) * i / 4.0;
        out += text_at(x, bottom + 14, fmt::format("{:.3g} s", duration_s * i / 4.0),
                       i == 0 ? "start" : (i == 4 ? "end" : "middle"));
    }
    return out;
}

std::string legend(double y, const std::vector<std::pair<std::string, const char*>>& entries) {
    std::string out;
    double x = kLeft;
    for (const auto& [label, color] : entries) {
        out += "<rect x=\"" + num(x) + "\" y=\"" + num(y - 9) + "\" width=\"10\" height=\"10\" fill=\"" + color + "\"/>";
        out += text_at(x + 14, y, label);
        x += 24 + 7.0 * static_cast<double>(label.size());
    }
    return out;
}

}  // namespace

std::string memory_timeline_chart(const MemoryMetrics& memory, int64_t run_duration_ns) {
    if (memory.timeline.empty()) return {};
    const double duration =
        static_cast<double>(std::max<int64_t>(run_duration_ns, memory.timeline.back().trace_ns) + 1);
    double max_total = 1;
    for (const MemoryPoint& p : memory.timeline) {
        int64_t total = 0;
        for (int64_t b : p.bytes) total += b;
        max_total = std::max(max_total, static_cast<double>(total));
    }
    const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom, bottom = kHeight - kBottom;
    auto x_of = [&](int64_t t) { return kLeft + plot_w * std::clamp(static_cast<double>(t) / duration, 0.0, 1.0); };
    auto y_of = [&](double bytes) { return bottom - plot_h * bytes / max_total; };

    std::string out = open_svg(kHeight + 20);
    std::vector<double> lower(memory.timeline.size(), 0.0);
    std::vector<std::pair<std::string, const char*>> entries;
    for (int c = 0; c < kCategoryCount; ++c) {
        if (memory.category_max[c] == 0) continue;
        entries.emplace_back(category_name(c), kColors[c]);
        std::vector<double> upper(lower);
        for (size_t i = 0; i < upper.size(); ++i) upper[i] += static_cast<double>(memory.timeline[i].bytes[c]);
        // Steps: each value holds until the next point; the last holds to the end of the run.
        std::string path;
        for (size_t i = 0; i < upper.size(); ++i) {
            const double x0 = x_of(memory.timeline[i].trace_ns);
            const double x1 = i + 1 < upper.size() ? x_of(memory.timeline[i + 1].trace_ns) : kLeft + plot_w;
            path += (i == 0 ? "M" : "L") + num(x0) + " " + num(y_of(upper[i])) + " L" + num(x1) + " " + num(y_of(upper[i]));
        }
        for (size_t i = upper.size(); i-- > 0;) {
            const double x0 = x_of(memory.timeline[i].trace_ns);
            const double x1 = i + 1 < upper.size() ? x_of(memory.timeline[i + 1].trace_ns) : kLeft + plot_w;
            path += " L" + num(x1) + " " + num(y_of(lower[i])) + " L" + num(x0) + " " + num(y_of(lower[i]));
        }
        out += "<path d=\"" + path + " Z\" fill=\"" + kColors[c] + "\" stroke=\"none\"><title>" +
               html_escape(category_name(c)) + "</title></path>";
        lower = std::move(upper);
    }
    out += axes(format_bytes(static_cast<int64_t>(max_total)), duration * 1e-9);
    out += legend(kHeight + 14, entries);
    return out + "</svg>";
}

std::string utilization_chart(const UtilizationSeries& series, const Window& window, int64_t run_duration_ns) {
    if (series.devices.empty()) return {};
    const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom, bottom = kHeight - kBottom;
    const size_t buckets = series.devices.front().second.size();
    const double duration = static_cast<double>(series.bucket_ns) * static_cast<double>(buckets);
    auto x_of = [&](double t) { return kLeft + plot_w * std::clamp(t / duration, 0.0, 1.0); };
    std::string out = open_svg(kHeight + 20);
    out += "<rect x=\"" + num(x_of(static_cast<double>(window.begin_ns))) + "\" y=\"" + num(kTop) + "\" width=\"" +
           num(x_of(static_cast<double>(window.end_ns)) - x_of(static_cast<double>(window.begin_ns))) + "\" height=\"" +
           num(plot_h) + "\" fill=\"#eef3fb\"><title>analysis window</title></rect>";
    std::vector<std::pair<std::string, const char*>> entries;
    size_t index = 0;
    for (const auto& [device, values] : series.devices) {
        const char* color = kDeviceColors[index++ % std::size(kDeviceColors)];
        entries.emplace_back("GPU " + std::to_string(device), color);
        std::string points;
        for (size_t i = 0; i < values.size(); ++i) {
            const double t = (static_cast<double>(i) + 0.5) * static_cast<double>(series.bucket_ns);
            points += num(x_of(t)) + "," + num(bottom - plot_h * std::clamp(values[i], 0.0, 1.0)) + " ";
        }
        out += "<polyline fill=\"none\" stroke=\"" + std::string(color) + "\" stroke-width=\"1.5\" points=\"" + points + "\"/>";
    }
    out += axes("100%", std::max(duration, static_cast<double>(run_duration_ns)) * 1e-9);
    entries.emplace_back("analysis window", "#eef3fb");
    out += legend(kHeight + 14, entries);
    return out + "</svg>";
}

std::string category_bars_chart(const std::vector<std::string>& labels, const std::vector<CategoryBytes>& values) {
    if (labels.empty()) return {};
    double max_total = 1;
    for (const CategoryBytes& v : values) {
        int64_t total = 0;
        for (int64_t b : v) total += b;
        max_total = std::max(max_total, static_cast<double>(total));
    }
    const double bar_h = 22, gap = 8, label_w = 160, plot_w = kWidth - label_w - 120;
    const double height = static_cast<double>(labels.size()) * (bar_h + gap) + 40;
    std::string out = open_svg(height);
    std::vector<std::pair<std::string, const char*>> entries;
    CategoryBytes used{};
    for (const CategoryBytes& v : values)
        for (int c = 0; c < kCategoryCount; ++c) used[c] += v[c];
    for (int c = 0; c < kCategoryCount; ++c)
        if (used[c] > 0) entries.emplace_back(category_name(c), kColors[c]);
    for (size_t i = 0; i < labels.size(); ++i) {
        const double y = 10 + static_cast<double>(i) * (bar_h + gap);
        std::string label = labels[i].size() > 26 ? "…" + labels[i].substr(labels[i].size() - 25) : labels[i];
        out += text_at(label_w - 6, y + 15, label, "end");
        double x = label_w;
        int64_t total = 0;
        for (int c = 0; c < kCategoryCount; ++c) {
            const double w = plot_w * static_cast<double>(values[i][c]) / max_total;
            total += values[i][c];
            if (w <= 0) continue;
            out += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(bar_h) +
                   "\" fill=\"" + kColors[c] + "\"><title>" + html_escape(std::string(category_name(c)) + ": " +
                                                                           format_bytes(values[i][c])) +
                   "</title></rect>";
            x += w;
        }
        out += text_at(x + 6, y + 15, format_bytes(total));
    }
    out += legend(height - 8, entries);
    return out + "</svg>";
}

}  // namespace tbdprof::analyzer
