#include "iteration_chart_painter.h"

#include <QPolygonF>

#include <algorithm>
#include <cmath>
#include <functional>

#include "tbdprof/analyzer/units.h"

namespace tbdprof::viewer {
namespace {

constexpr int kAxisWidth = 78;  // value labels left of each chart
constexpr int kTitleHeight = 20;
constexpr int kLegendHeight = 20;

using ValueOf = std::function<std::vector<double>(const TraceIterations&)>;
using Format = std::function<QString(double)>;

// One chart: a line per trace over iteration numbers 0..longest-1, from 0 to the largest value.
void line_chart(QPainter& p, const QRect& area, const QString& title, const std::vector<TraceIterations>& traces,
                const ValueOf& values_of, const Format& format, const ViewerColors& colors) {
    p.setPen(colors.text);
    QFont bold = p.font();
    bold.setBold(true);
    p.save();
    p.setFont(bold);
    p.drawText(QRect(area.left(), area.top(), area.width(), kTitleHeight), Qt::AlignLeft | Qt::AlignVCenter, title);
    p.restore();
    const QRect plot(area.left() + kAxisWidth, area.top() + kTitleHeight + 4, area.width() - kAxisWidth - 8,
                     area.height() - kTitleHeight - 4 - 18);
    if (plot.width() < 40 || plot.height() < 30) return;
    size_t longest = 0;
    double top = 0;
    std::vector<std::vector<double>> series;
    for (const TraceIterations& t : traces) {
        series.push_back(values_of(t));
        longest = std::max(longest, series.back().size());
        for (double v : series.back()) top = std::max(top, v);
    }
    if (longest == 0 || top <= 0) {
        p.setPen(colors.dim_text);
        p.drawText(plot, Qt::AlignCenter, QStringLiteral("no iterations detected in these traces"));
        return;
    }
    top *= 1.1;
    // Horizontal grid at quarters of the range, labelled.
    for (int k = 0; k <= 4; ++k) {
        const double v = top * k / 4;
        const double y = plot.bottom() - v / top * plot.height();
        p.setPen(colors.grid);
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(colors.dim_text);
        p.drawText(QRectF(area.left(), y - 8, kAxisWidth - 6, 16), Qt::AlignRight | Qt::AlignVCenter, format(v));
    }
    // Iteration numbers along the bottom: at most about one label per 40 px.
    const double step_px = longest > 1 ? static_cast<double>(plot.width()) / static_cast<double>(longest - 1) : 0;
    auto x_of = [&](size_t i) {
        return longest > 1 ? plot.left() + step_px * static_cast<double>(i) : plot.center().x();
    };
    const size_t label_every = std::max<size_t>(1, static_cast<size_t>(std::ceil(40.0 / std::max(1.0, step_px))));
    p.setPen(colors.dim_text);
    for (size_t i = 0; i < longest; i += label_every)
        p.drawText(QRectF(x_of(i) - 20, plot.bottom() + 2, 40, 16), Qt::AlignCenter, QString::number(i));
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    for (size_t t = 0; t < series.size(); ++t) {
        const QColor color = trace_color(t, colors);
        QPolygonF line;
        for (size_t i = 0; i < series[t].size(); ++i)
            line << QPointF(x_of(i), plot.bottom() - series[t][i] / top * plot.height());
        p.setPen(QPen(color, 2));
        p.drawPolyline(line);
        p.setBrush(color);
        for (const QPointF& point : line) p.drawEllipse(point, 3, 3);
    }
    p.restore();
}

}  // namespace

QColor trace_color(size_t index, const ViewerColors& colors) {
    static constexpr int kHues[] = {210, 20, 130, 280, 50, 180, 330, 90};
    const int hue = kHues[index % std::size(kHues)];
    return QColor::fromHsv(hue, 200, colors.dark ? 235 : 190);
}

void paint_iteration_charts(QPainter& p, const QRect& area, const std::vector<TraceIterations>& traces,
                            const ViewerColors& colors) {
    if (traces.size() < 2 || area.height() < 120) return;
    // Legend: each trace's colour and name.
    int lx = area.left() + kAxisWidth, ly = area.top();
    for (size_t t = 0; t < traces.size(); ++t) {
        const QString label = QStringLiteral("%1 (%2 iterations)").arg(traces[t].label).arg(traces[t].seconds.size());
        const int label_width = 36 + p.fontMetrics().horizontalAdvance(label);
        if (lx > area.left() + kAxisWidth && lx + label_width > area.right()) {  // wrap
            lx = area.left() + kAxisWidth;
            ly += kLegendHeight;
        }
        p.fillRect(QRect(lx, ly + 4, 14, 10), trace_color(t, colors));
        p.setPen(colors.text);
        p.drawText(QPoint(lx + 18, ly + 14), label);
        lx += label_width;
    }
    const QRect charts = area.adjusted(0, ly - area.top() + kLegendHeight, 0, 0);
    const int half = charts.height() / 2;
    line_chart(
        p, QRect(charts.left(), charts.top(), charts.width(), half - 6),
        QStringLiteral("Iteration time, per iteration in the window (each trace's first at 0)"), traces,
        [](const TraceIterations& t) { return t.seconds; },
        [](double s) { return QString::fromStdString(analyzer::format_duration_ns(s * 1e9)); }, colors);
    line_chart(
        p, QRect(charts.left(), charts.top() + half + 6, charts.width(), charts.height() - half - 6),
        QStringLiteral("Peak memory, per iteration"), traces,
        [](const TraceIterations& t) {
            std::vector<double> v;
            for (int64_t b : t.peak_bytes) v.push_back(static_cast<double>(b));
            return v;
        },
        [](double b) { return QString::fromStdString(analyzer::format_bytes(static_cast<int64_t>(b))); }, colors);
}

int paint_iteration_figures(QPainter& p, const QRect& area, const IterationCompareModel& model,
                            const ViewerColors& colors) {
    const int rows = model.rowCount();
    const int columns = model.columnCount();
    if (rows == 0 || columns < 3) return area.top();
    const int row_height = std::max(16, p.fontMetrics().height() + 3);
    int name_width = 0;
    for (int r = 0; r < rows; ++r)
        name_width = std::max(name_width, p.fontMetrics().horizontalAdvance(model.data(model.index(r, 0)).toString()));
    name_width = std::min(area.width() * 2 / 5, name_width + 12);
    const int cell_width = (area.width() - name_width) / (columns - 1);
    int y = area.top();
    p.setPen(colors.text);
    QFont bold = p.font();
    bold.setBold(true);
    p.save();
    p.setFont(bold);
    for (int c = 0; c < columns; ++c) {
        const QString header = model.headerData(c, Qt::Horizontal).toString();
        const QRect cell = c == 0
                               ? QRect(area.left(), y, name_width, row_height)
                               : QRect(area.left() + name_width + (c - 1) * cell_width, y, cell_width - 6, row_height);
        if (c > 0)
            p.fillRect(QRect(cell.left(), cell.top() + 4, 10, 10), trace_color(static_cast<size_t>(c - 1), colors));
        p.drawText(c == 0 ? cell : cell.adjusted(14, 0, 0, 0),
                   (c == 0 ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter,
                   p.fontMetrics().elidedText(header, Qt::ElideMiddle, cell.width() - 14));
    }
    p.restore();
    y += row_height;
    for (int r = 0; r < rows && y + row_height <= area.bottom(); ++r) {
        if (r % 2 == 1) p.fillRect(QRect(area.left(), y, area.width(), row_height), colors.alternate);
        p.setPen(colors.text);
        p.drawText(QRect(area.left(), y, name_width, row_height), Qt::AlignLeft | Qt::AlignVCenter,
                   model.data(model.index(r, 0)).toString());
        for (int c = 1; c < columns; ++c) {
            const QModelIndex index = model.index(r, c);
            const QRect cell(area.left() + name_width + (c - 1) * cell_width, y, cell_width - 6, row_height);
            const QVariant change = model.data(index, IterationCompareModel::ChangeRole);
            // A notable difference from the first trace: more (red) or less (green), as a tinted cell.
            if (change.isValid() && std::fabs(change.toDouble()) >= kNotableChange)
                p.fillRect(cell, change.toDouble() > 0 ? QColor(230, 80, 60, 80) : QColor(60, 170, 90, 80));
            p.setPen(colors.text);
            // Value and change; in a narrow column a smaller font, then the value alone (the tint stays).
            QString text = model.data(index).toString();
            p.save();
            if (p.fontMetrics().horizontalAdvance(text) > cell.width() - 4) {
                QFont small = p.font();
                small.setPointSizeF(small.pointSizeF() * 0.85);
                p.setFont(small);
                if (p.fontMetrics().horizontalAdvance(text) > cell.width() - 4) text = text.section(" (", 0, 0);
            }
            p.drawText(cell.adjusted(0, 0, -3, 0), Qt::AlignRight | Qt::AlignVCenter, text);
            p.restore();
        }
        y += row_height;
    }
    p.setPen(colors.dim_text);
    p.drawText(
        QRect(area.left(), y + 2, area.width(), row_height), Qt::AlignLeft | Qt::AlignVCenter,
        QStringLiteral("change from the first trace in brackets; tinted at 5% or more (red: more, green: less)"));
    return y + 2 + row_height;
}

}  // namespace tbdprof::viewer
