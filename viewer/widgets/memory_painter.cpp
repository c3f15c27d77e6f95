#include "memory_painter.h"

#include <algorithm>
#include <cmath>

#include "tbdprof/analyzer/units.h"
#include "timeline_painter.h"
#include "trace_session.h"

namespace tbdprof::viewer {
namespace {

constexpr int kLegendHeight = 22;
constexpr int kNoteHeight = 18;

QString bytes_text(int64_t bytes) {
    return QString::fromStdString(analyzer::format_bytes(bytes));
}

}  // namespace

QRect MemoryPainter::plotArea(const QRect& area) {
    return QRect(area.left() + kLabelWidth, area.top() + kRulerHeight + kNoteHeight, area.width() - kLabelWidth,
                 area.height() - kRulerHeight - kNoteHeight - kLegendHeight);
}

void MemoryPainter::paint(QPainter& painter, const QRect& area, const TraceSession& session, const TimeAxis& axis,
                          const ViewerColors& colors, std::optional<int64_t> moment) const {
    painter.fillRect(area, colors.background);
    TimelinePainter::paintRuler(painter, area, axis, colors);
    const QRect plot = plotArea(area);
    const ReportData* data = session.report();
    painter.setPen(colors.dim_text);
    if (!data) {
        painter.drawText(plot, Qt::AlignCenter, QStringLiteral("analysing memory…"));
        return;
    }
    const MemorySeries& series = data->memory;
    const analyzer::Report& report = data->report;
    if (series.empty()) {
        painter.drawText(plot, Qt::AlignCenter, QStringLiteral("no device allocations in this trace"));
        return;
    }
    // What the breakdown means, where the report says it is not per tensor.
    QStringList notes;
    for (const std::string& note : report.notes) {
        if (note.find("memory breakdown") != std::string::npos || note.find("sub-range") != std::string::npos ||
            note.find("not tagged") != std::string::npos) {
            notes << QString::fromStdString(note);
        }
    }
    painter.setPen(colors.text);
    painter.drawText(
        QRect(area.left() + 6, area.top() + kRulerHeight, area.width() - 12, kNoteHeight), Qt::AlignVCenter,
        QStringLiteral("live device memory, stacked by category (each column: the highest moment in its span)") +
            (notes.isEmpty() ? QString() : "  ·  " + notes.join("; ")));

    const double peak = static_cast<double>(std::max<int64_t>(1, series.peak()));
    const double scale = plot.height() / (peak * 1.08);
    // Y axis: a few round sizes.
    painter.setPen(colors.grid);
    const double raw = peak / 4;
    const double power = std::pow(2.0, std::floor(std::log2(std::max(1.0, raw))));
    const double step = raw / power >= 1.5 ? power * 2 : power;
    for (double v = 0; v <= peak * 1.08; v += step) {
        const double y = plot.bottom() - v * scale;
        painter.setPen(colors.grid);
        painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        painter.setPen(colors.dim_text);
        painter.drawText(QRectF(area.left(), y - 8, kLabelWidth - 6, 16), Qt::AlignRight | Qt::AlignVCenter,
                         bytes_text(static_cast<int64_t>(v)));
    }

    painter.save();
    painter.setClipRect(plot);
    std::array<QColor, analyzer::kCategoryCount> category_colors;
    for (int c = 0; c < analyzer::kCategoryCount; ++c) category_colors[static_cast<size_t>(c)] = colors.category(c);
    for (int x = 0; x < plot.width(); ++x) {
        const int64_t t0 = static_cast<int64_t>(std::floor(axis.t_of(x)));
        const int64_t t1 = std::max(t0 + 1, static_cast<int64_t>(std::floor(axis.t_of(x + 1))));
        if (t1 < 0 || t0 > axis.run_ns()) continue;
        const RangeExtent e = series.extent(t0, t1);
        if (e.max_point == SIZE_MAX || e.max <= 0) continue;
        const analyzer::MemoryPoint& p = series.point(e.max_point);
        double y = plot.bottom() + 1;
        for (int c = 0; c < analyzer::kCategoryCount; ++c) {
            const int64_t b = p.bytes[static_cast<size_t>(c)];
            if (b <= 0) continue;
            const double h = static_cast<double>(b) * scale;
            painter.fillRect(QRectF(plot.left() + x, y - h, 1, h), category_colors[static_cast<size_t>(c)]);
            y -= h;
        }
        if (e.min < e.max) {  // the column's lowest moment, so drops inside it stay visible
            painter.fillRect(QRectF(plot.left() + x, plot.bottom() - static_cast<double>(e.min) * scale, 1, 1),
                             colors.text);
        }
    }
    // The run's peak.
    const double px = plot.left() + axis.x_of(static_cast<double>(report.memory.peak_ns));
    const double py = plot.bottom() - static_cast<double>(report.memory.peak_bytes) * scale;
    painter.setPen(QPen(colors.highlight, 1, Qt::DashLine));
    painter.drawLine(QPointF(px, plot.top()), QPointF(px, plot.bottom()));
    painter.setBrush(colors.highlight);
    painter.drawEllipse(QPointF(px, py), 4, 4);
    const QString peak_text =
        QStringLiteral("peak %1 at %2")
            .arg(bytes_text(report.memory.peak_bytes),
                 QString::fromStdString(analyzer::format_duration_ns(static_cast<double>(report.memory.peak_ns))));
    const int text_width = painter.fontMetrics().horizontalAdvance(peak_text) + 8;
    const double tx = px + 8 + text_width > plot.right() ? px - 8 - text_width : px + 8;
    painter.setPen(colors.text);
    painter.drawText(QRectF(tx, std::max<double>(plot.top(), py - 18), text_width, 16), Qt::AlignVCenter, peak_text);
    if (moment) {
        const double mx = plot.left() + axis.x_of(static_cast<double>(*moment));
        painter.setPen(QPen(colors.selection, 2));
        painter.drawLine(QPointF(mx, plot.top()), QPointF(mx, plot.bottom()));
    }
    painter.restore();

    // Legend: categories that appear, with their maximum over the run.
    int x = plot.left();
    const int y = area.bottom() - kLegendHeight + 4;
    for (int c = 0; c < analyzer::kCategoryCount; ++c) {
        if (report.memory.category_max[static_cast<size_t>(c)] <= 0) continue;
        painter.fillRect(QRect(x, y + 3, 12, 12), category_colors[static_cast<size_t>(c)]);
        painter.setPen(colors.text);
        const QString label = QString::fromUtf8(analyzer::category_name(c));
        painter.drawText(QPoint(x + 16, y + 13), label);
        x += 26 + painter.fontMetrics().horizontalAdvance(label);
    }
}

}  // namespace tbdprof::viewer
