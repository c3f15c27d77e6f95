#include "memory_painter.h"

#include <algorithm>
#include <cmath>

#include "tbdprof/analyzer/units.h"
#include "timeline_painter.h"
#include "trace_session.h"

namespace tbdprof::viewer {
namespace {

constexpr int kLegendHeight = 22;
constexpr int kNoteHeight = 34;  // two lines

QString bytes_text(int64_t bytes) {
    return QString::fromStdString(analyzer::format_bytes(bytes));
}

// Categories that appear, with their colours.
void paintLegend(QPainter& painter, const QRect& area, const QRect& plot, const analyzer::Report& report,
                 const ViewerColors& colors) {
    int x = plot.left();
    const int y = area.bottom() - kLegendHeight + 4;
    for (int c = 0; c < analyzer::kCategoryCount; ++c) {
        if (report.memory.category_max[static_cast<size_t>(c)] <= 0) continue;
        painter.fillRect(QRect(x, y + 3, 12, 12), colors.category(c));
        painter.setPen(colors.text);
        const QString label = QString::fromUtf8(analyzer::category_name(c));
        painter.drawText(QPoint(x + 16, y + 13), label);
        x += 26 + painter.fontMetrics().horizontalAdvance(label);
    }
}

// Black or white, whichever reads better on `fill`.
QColor text_on(const QColor& fill) {
    return fill.lightnessF() > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
}

// Live memory stacked by category in `plot`, scaled so that `scale_bytes` fills it; the peak marked.
void paint_stacked(QPainter& painter, const QRect& area, const QRect& plot, const MemorySeries& series,
                   double scale_bytes, int64_t peak_bytes, int64_t peak_trace_ns, const QString& title,
                   const TimeAxis& axis, const ViewerColors& colors, const std::optional<int64_t>& moment) {
    const double peak = std::max(1.0, scale_bytes);
    const double scale = plot.height() / (peak * 1.08);
    // Y axis: a few round sizes.
    painter.setPen(colors.grid);
    const double raw = peak / std::clamp(plot.height() / 50, 1, 4);  // fewer lines in a short lane
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
        const int64_t t0 = static_cast<int64_t>(std::floor(axis.trace_ns_at(x)));
        const int64_t t1 = std::max(t0 + 1, static_cast<int64_t>(std::floor(axis.trace_ns_at(x + 1))));
        if (t1 < 0 || t0 > axis.run_duration_ns()) continue;
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
    // The run's (or the device's) peak.
    const double px = plot.left() + axis.x_of(static_cast<double>(peak_trace_ns));
    const double py = plot.bottom() - static_cast<double>(peak_bytes) * scale;
    painter.setPen(QPen(colors.highlight, 1, Qt::DashLine));
    painter.drawLine(QPointF(px, plot.top()), QPointF(px, plot.bottom()));
    painter.setBrush(colors.highlight);
    painter.drawEllipse(QPointF(px, py), 4, 4);
    const QString peak_text =
        (title.isEmpty() ? QString() : title + " ") +
        QStringLiteral("peak %1 at %2")
            .arg(bytes_text(peak_bytes),
                 QString::fromStdString(analyzer::format_duration_ns(static_cast<double>(peak_trace_ns))));
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
    if (!title.isEmpty()) {  // the lane's device, left of its axis
        painter.setPen(colors.text);
        QFont bold = painter.font();
        bold.setBold(true);
        painter.save();
        painter.setFont(bold);
        painter.drawText(QRect(area.left() + 6, plot.top(), kLabelWidth - 80, 18), Qt::AlignLeft | Qt::AlignVCenter,
                         title);
        painter.restore();
    }
}

// The what-if's predicted timeline (whatif_series.h) over the stacked chart, on its byte scale: a
// dashed line through each pixel column's highest predicted moment, the predicted peak marked.
void paint_predicted(QPainter& painter, const QRect& plot, const PredictedMemory& predicted, double scale_bytes,
                     const TimeAxis& axis, const ViewerColors& colors) {
    const double scale = plot.height() / (std::max(1.0, scale_bytes) * 1.08);
    painter.save();
    painter.setClipRect(plot);
    QPolygonF line;
    for (int x = 0; x < plot.width(); ++x) {
        const int64_t t0 = static_cast<int64_t>(std::floor(axis.trace_ns_at(x)));
        const int64_t t1 = std::max(t0 + 1, static_cast<int64_t>(std::floor(axis.trace_ns_at(x + 1))));
        if (t1 < 0 || t0 > axis.run_duration_ns()) continue;
        const RangeExtent e = predicted.series.extent(t0, t1);
        if (e.max_point == SIZE_MAX) continue;
        line << QPointF(plot.left() + x + 0.5, plot.bottom() - static_cast<double>(e.max) * scale);
    }
    painter.setPen(QPen(colors.text, 2, Qt::DashLine));
    painter.drawPolyline(line);
    const double px = plot.left() + axis.x_of(static_cast<double>(predicted.peak_trace_ns));
    const double py = plot.bottom() - static_cast<double>(predicted.peak_bytes) * scale;
    painter.setBrush(Qt::NoBrush);
    painter.drawEllipse(QPointF(px, py), 5, 5);
    const QString text =
        QStringLiteral("predicted (%1): peak %2 at %3, %4")
            .arg(QString::fromStdString(predicted.scenario), bytes_text(predicted.peak_bytes),
                 QString::fromStdString(analyzer::format_duration_ns(static_cast<double>(predicted.peak_trace_ns))),
                 QString::fromStdString(predicted.verdict));
    // Its label top left, with a stroke of the line: the recorded peak's label sits by its own mark.
    const QPointF key(plot.left() + 8, plot.top() + 10);
    painter.setPen(QPen(colors.text, 2, Qt::DashLine));
    painter.drawLine(key, key + QPointF(28, 0));
    painter.setPen(colors.text);
    painter.drawText(QRectF(key.x() + 34, key.y() - 8, plot.width() - 50, 16), Qt::AlignVCenter, text);
    painter.restore();
}

// What the breakdown means, where the report says it is not per tensor; an unreliable breakdown
// says so first (tag_plausibility.h), lifetime bars that show a segment's tensors say that, and so
// does a what-if scenario drawn or not drawn.
QStringList breakdown_notes(const analyzer::Report& report, bool bars_of_subranges, const QString& whatif_note) {
    QStringList notes;
    for (const std::string& note : report.notes) {
        if (note.find("memory breakdown") != std::string::npos || note.find("sub-range") != std::string::npos ||
            note.find("not tagged") != std::string::npos) {
            notes << QString::fromStdString(note);
        }
    }
    if (!whatif_note.isEmpty()) notes.prepend(whatif_note);
    if (bars_of_subranges)
        notes.prepend(QStringLiteral("a pooled segment is drawn as the tensors inside it (its sub-ranges)"));
    if (report.memory.tags.verdict == analyzer::TagVerdict::implausible) {
        QString warning = QString::fromStdString(report.memory.tags.summary);
        if (!report.memory.tags.warnings.empty())
            warning += QStringLiteral(": ") + QString::fromStdString(report.memory.tags.warnings.front());
        notes.prepend(warning);
    }
    return notes;
}

// The what-if scenario to draw over the single chart (its peak is of all devices together), or none;
// `note` says which, or why not.
const PredictedMemory* predicted_to_draw(const ReportData& data, bool drew_bars, QString& note) {
    const PredictedMemory* predicted = data.predicted ? &*data.predicted : nullptr;
    if (predicted && !predicted->cannot_predict.empty()) {
        note = QStringLiteral("what-if '%1': cannot predict: %2")
                   .arg(QString::fromStdString(predicted->options), QString::fromStdString(predicted->cannot_predict));
        return nullptr;
    }
    if (predicted && (drew_bars || data.devices.size() >= 2)) {
        note = QStringLiteral("the predicted timeline is drawn over the stacked chart of a one-device run");
        return nullptr;
    }
    if (predicted)
        note = QStringLiteral("dashed: the predicted timeline of what-if '%1'")
                   .arg(QString::fromStdString(predicted->options));
    return predicted;
}

// What is drawn: lifetime bars, or the stacked chart (a lane per device when there are several).
QString chart_heading(bool drew_bars, const LifetimeLayout& layout, size_t devices) {
    if (drew_bars) {
        return QStringLiteral(
                   "lifetime bars: %1 %2 alive in view, each from allocation to free (zoom out for the "
                   "stacked chart)")
            .arg(layout.bars.size())
            .arg(layout.has_subranges ? QStringLiteral("allocations and tensors") : QStringLiteral("allocations"));
    }
    return QStringLiteral(
               "live device memory%1, stacked by category (each column: the highest moment in "
               "its span)")
        .arg(devices >= 2 ? QStringLiteral(" per device (a lane each, same time axis and byte scale)") : QString());
}

// Two lines: what is drawn, then what the breakdown means (segment level, sub-ranges, untagged).
void paint_note_lines(QPainter& painter, const QRect& area, const QString& heading, const QStringList& notes,
                      bool unreliable, const ViewerColors& colors) {
    painter.setPen(colors.text);
    painter.drawText(QRect(area.left() + 6, area.top() + kRulerHeight, area.width() - 12, kNoteHeight / 2),
                     Qt::AlignVCenter, heading);
    painter.setPen(unreliable ? colors.highlight : colors.dim_text);
    painter.drawText(
        QRect(area.left() + 6, area.top() + kRulerHeight + kNoteHeight / 2, area.width() - 12, kNoteHeight / 2),
        Qt::AlignVCenter, painter.fontMetrics().elidedText(notes.join(" · "), Qt::ElideRight, area.width() - 12));
}

// One chart of all devices (with the what-if's predicted timeline over it), or a lane per device on
// the same axis and the same byte scale.
void paint_stacked_charts(QPainter& painter, const QRect& area, const QRect& plot, const ReportData& data,
                          const PredictedMemory* predicted, const TimeAxis& axis, const ViewerColors& colors,
                          const std::optional<int64_t>& moment) {
    const MemorySeries& series = data.memory;
    const analyzer::Report& report = data.report;
    if (data.devices.size() < 2) {
        const double scale_bytes =
            static_cast<double>(std::max<int64_t>({1, series.peak(), predicted ? predicted->peak_bytes : 0}));
        paint_stacked(painter, area, plot, series, scale_bytes, report.memory.peak_bytes, report.memory.peak_trace_ns,
                      QString(), axis, colors, moment);
        if (predicted) paint_predicted(painter, plot, *predicted, scale_bytes, axis, colors);
        return;
    }
    int64_t largest = 1;
    for (const DeviceMemory& d : data.devices) largest = std::max(largest, d.series.peak());
    const int count = static_cast<int>(data.devices.size());
    const int gap = 8;
    const int lane_height = (plot.height() - gap * (count - 1)) / count;
    for (int i = 0; i < count; ++i) {
        const DeviceMemory& d = data.devices[static_cast<size_t>(i)];
        const QRect lane(plot.left(), plot.top() + i * (lane_height + gap), plot.width(), lane_height);
        const RangeExtent whole = d.series.extent(INT64_MIN / 2, INT64_MAX / 2);
        const int64_t peak_trace_ns = whole.max_point == SIZE_MAX ? 0 : d.series.point(whole.max_point).trace_ns;
        paint_stacked(painter, area, lane, d.series, static_cast<double>(largest), d.series.peak(), peak_trace_ns,
                      QStringLiteral("GPU %1").arg(d.device), axis, colors, moment);
    }
}

}  // namespace

QRect MemoryPainter::plotArea(const QRect& area) {
    return QRect(area.left() + kLabelWidth, area.top() + kRulerHeight + kNoteHeight, area.width() - kLabelWidth,
                 area.height() - kRulerHeight - kNoteHeight - kLegendHeight);
}

void MemoryPainter::paint(QPainter& painter, const QRect& area, const TraceSession& session, const TimeAxis& axis,
                          const ViewerColors& colors, const MemoryPaintOptions& options) {
    drew_bars_ = false;
    layout_ = {};
    painter.fillRect(area, colors.background);
    TimelinePainter::paintRuler(painter, area, axis, colors);
    const QRect plot = plotArea(area);
    const ReportData* data = session.report();
    painter.setPen(colors.dim_text);
    if (!data) {
        painter.drawText(plot, Qt::AlignCenter, QStringLiteral("analysing memory…"));
        return;
    }
    const analyzer::Report& report = data->report;
    if (data->memory.empty()) {
        painter.drawText(plot, Qt::AlignCenter, QStringLiteral("no device allocations in this trace"));
        return;
    }
    // Zoomed in far enough, every allocation alive in the span as a bar of its own.
    // (Only zoomed in: the whole run opens on the stacked chart, where the totals over time read at once.)
    const bool zoomed_in =
        axis.end_trace_ns() - axis.begin_trace_ns() <= 0.5 * static_cast<double>(axis.run_duration_ns());
    if (options.lifetime_bars && zoomed_in && session.overview()) {
        const int64_t t0 = static_cast<int64_t>(std::floor(axis.trace_ns_at(0)));
        const int64_t t1 = static_cast<int64_t>(std::ceil(axis.trace_ns_at(plot.width()))) + 1;
        layout_ = layout_lifetimes(*session.overview(), t0, t1, axis.run_duration_ns(), kMaxBars);
        drew_bars_ = !layout_.too_many && !layout_.bars.empty() && layout_.lanes * kMinBarHeight <= plot.height();
        if (!drew_bars_) layout_ = {};
    }
    QString whatif_note;
    const PredictedMemory* predicted = predicted_to_draw(*data, drew_bars_, whatif_note);
    paint_note_lines(painter, area, chart_heading(drew_bars_, layout_, data->devices.size()),
                     breakdown_notes(report, drew_bars_ && layout_.has_subranges, whatif_note),
                     report.memory.tags.verdict == analyzer::TagVerdict::implausible, colors);
    if (drew_bars_)
        paintBars(painter, plot, axis, colors, options);
    else
        paint_stacked_charts(painter, area, plot, *data, predicted, axis, colors, options.moment);
    paintLegend(painter, area, plot, report, colors);
}

void MemoryPainter::paintBars(QPainter& painter, const QRect& plot, const TimeAxis& axis, const ViewerColors& colors,
                              const MemoryPaintOptions& options) {
    bar_height_ = std::min(kMaxBarHeight, plot.height() / std::max(1, layout_.lanes));
    painter.setPen(colors.dim_text);
    painter.drawText(QRect(plot.left() - kLabelWidth + 6, plot.top(), kLabelWidth - 12, 32),
                     Qt::AlignRight | Qt::AlignTop | Qt::TextWordWrap,
                     QStringLiteral("%1 lanes, one bar per allocation; click one for its details").arg(layout_.lanes));
    painter.save();
    painter.setClipRect(plot);
    for (const LifetimeBar& bar : layout_.bars) {
        const double x0 = std::max(-2.0, axis.x_of(static_cast<double>(bar.begin_trace_ns)));
        const double x1 = std::min(axis.width() + 2.0, axis.x_of(static_cast<double>(bar.end_trace_ns)));
        const QRectF rect(plot.left() + x0, plot.top() + bar.lane * bar_height_, std::max(1.0, x1 - x0),
                          std::max(1, bar_height_ - 1));
        const QColor fill = colors.category(bar.category);
        painter.fillRect(rect, fill);
        const bool chosen =
            options.chosen && options.chosen->first == bar.allocation && options.chosen->second == bar.subrange;
        if (chosen) {
            painter.setPen(QPen(colors.selection, 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(rect.adjusted(1, 1, -1, -1));
        }
        if (bar_height_ >= 14 && rect.width() > 70) {  // room for a line of text
            const QString label = QString::fromStdString(analyzer::format_bytes(bar.bytes)) + " " +
                                  QString::fromUtf8(analyzer::category_name(bar.category)) +
                                  (bar.subrange != SIZE_MAX ? QStringLiteral(" (in a segment)") : QString());
            const QRectF visible = rect.intersected(QRectF(plot)).adjusted(4, 0, -2, 0);
            painter.setPen(text_on(fill));
            painter.drawText(
                visible, Qt::AlignVCenter | Qt::AlignLeft,
                painter.fontMetrics().elidedText(label, Qt::ElideRight, static_cast<int>(visible.width())));
        }
    }
    if (options.moment) {
        const double mx = plot.left() + axis.x_of(static_cast<double>(*options.moment));
        painter.setPen(QPen(colors.selection, 2));
        painter.drawLine(QPointF(mx, plot.top()), QPointF(mx, plot.bottom()));
    }
    painter.restore();
}

}  // namespace tbdprof::viewer
