#include "summary_painter.h"

#include <algorithm>

#include "tbdprof/analyzer/units.h"
#include "trace_session.h"

namespace tbdprof::viewer {
namespace {

using namespace analyzer;

QString q(const std::string& text) {
    return QString::fromStdString(text);
}

// A labelled horizontal bar of a fraction (0..1) with its value written after it.
void fraction_bar(QPainter& p, int x, int y, int width, const QString& label, double fraction, const QString& value,
                  const QColor& color, const ViewerColors& colors) {
    p.setPen(colors.text);
    p.drawText(QRect(x, y, 260, 20), Qt::AlignVCenter, label);
    const QRect bar(x + 265, y + 3, width - 265 - 130, 14);
    p.fillRect(bar, colors.alternate);
    p.fillRect(
        QRect(bar.left(), bar.top(), static_cast<int>(bar.width() * std::clamp(fraction, 0.0, 1.0)), bar.height()),
        color);
    p.setPen(colors.grid);
    p.drawRect(bar);
    p.setPen(colors.text);
    p.drawText(QRect(bar.right() + 8, y, 125, 20), Qt::AlignVCenter, value);
}

int heading(QPainter& p, int x, int y, const QString& text, const ViewerColors& colors) {
    QFont font = p.font();
    font.setBold(true);
    p.save();
    p.setFont(font);
    p.setPen(colors.text);
    p.drawText(QPoint(x, y + 15), text);
    p.restore();
    return y + 24;
}

// Stacked bar of bytes per category (at the peak), scaled to `full`.
void category_bar(QPainter& p, const QRect& bar, const CategoryBytes& bytes, double full, const ViewerColors& colors) {
    double x = bar.left();
    for (int c = 0; c < kCategoryCount; ++c) {
        const int64_t b = bytes[static_cast<size_t>(c)];
        if (b <= 0) continue;
        const double w = bar.width() * static_cast<double>(b) / full;
        p.fillRect(QRectF(x, bar.top(), w, bar.height()), colors.category(c));
        x += w;
    }
    p.setPen(colors.grid);
    p.drawRect(bar);
}

}  // namespace

void paint_summary(QPainter& p, const QRect& area, const TraceSession& session, const ViewerColors& colors) {
    p.fillRect(area, colors.background);
    const int x = area.left() + 16;
    const int width = std::min(area.width() - 32, 900);
    int y = area.top() + 10;
    const ReportData* data = session.report();
    if (!data) {
        p.setPen(colors.dim_text);
        p.drawText(
            area, Qt::AlignCenter,
            session.state() == TraceSession::State::failed ? session.error() : QStringLiteral("analysing the trace…"));
        return;
    }
    const Report& r = data->report;
    y = heading(
        p, x, y,
        QStringLiteral("%1 · %2 run, %3 window (%4)")
            .arg(session.displayName(), q(format_duration_ns(static_cast<double>(r.run.duration_ns))), q(r.window.used),
                 q(format_duration_ns(static_cast<double>(r.window.end_ns - r.window.begin_ns)))),
        colors);
    p.setPen(colors.dim_text);
    p.drawText(QRect(x, y - 6, width, 18), Qt::AlignVCenter,
               p.fontMetrics().elidedText(q(r.run.command_line), Qt::ElideMiddle, width));
    y += 16;

    y = heading(p, x, y, QStringLiteral("Where the GPU time goes"), colors);
    const QColor gpu = colors.category(0);
    fraction_bar(p, x, y, width, QStringLiteral("GPU utilization (mean)"), r.gpu_utilization,
                 q(format_percent(r.gpu_utilization)), gpu, colors);
    y += 22;
    for (const DeviceMetrics& d : r.devices) {
        fraction_bar(p, x + 12, y, width - 12, QStringLiteral("GPU %1 %2").arg(d.id).arg(q(d.name)), d.utilization,
                     q(format_percent(d.utilization)), gpu.lighter(115), colors);
        y += 22;
    }
    fraction_bar(p, x, y, width, QStringLiteral("busy with copies and sets"), r.busy_utilization,
                 q(format_percent(r.busy_utilization)), colors.category(3), colors);
    y += 22;
    fraction_bar(p, x, y, width, QStringLiteral("FP32 utilization (%1)").arg(q(format_rate(r.flops.fp32_flops_per_s))),
                 r.flops.fp32_utilization, q(format_percent(r.flops.fp32_utilization)), colors.category(1), colors);
    y += 22;
    if (r.flops.tensor_flops > 0) {
        p.setPen(colors.text);
        p.drawText(QPoint(x, y + 14),
                   QStringLiteral("tensor-core throughput %1").arg(q(format_rate(r.flops.tensor_flops_per_s))));
        y += 22;
    }
    y += 8;

    y = heading(
        p, x, y,
        QStringLiteral("Where the memory goes: peak %1 at %2")
            .arg(q(format_bytes(r.memory.peak_bytes)), q(format_duration_ns(static_cast<double>(r.memory.peak_ns)))),
        colors);
    category_bar(p, QRect(x, y, width - 130, 22), r.memory.at_peak,
                 static_cast<double>(std::max<int64_t>(1, r.memory.peak_bytes)), colors);
    y += 30;
    int lx = x;
    for (int c = 0; c < kCategoryCount; ++c) {
        const int64_t b = r.memory.at_peak[static_cast<size_t>(c)];
        if (b <= 0) continue;
        const QString label =
            QStringLiteral("%1 %2 (%3)")
                .arg(QString::fromUtf8(category_name(c)), q(format_bytes(b)),
                     q(format_percent(static_cast<double>(b) / static_cast<double>(r.memory.peak_bytes))));
        const int w = p.fontMetrics().horizontalAdvance(label) + 30;
        if (lx + w > x + width) {
            lx = x;
            y += 20;
        }
        p.fillRect(QRect(lx, y + 3, 12, 12), colors.category(c));
        p.setPen(colors.text);
        p.drawText(QPoint(lx + 16, y + 13), label);
        lx += w;
    }
    y += 30;

    y = heading(p, x, y, QStringLiteral("Iterations"), colors);
    p.setPen(colors.text);
    if (r.iterations.count > 0) {
        p.drawText(QPoint(x, y + 12),
                   QStringLiteral("%1 in the window (of %2 detected, %3): mean %4, median %5, p95 %6")
                       .arg(r.iterations.count)
                       .arg(r.iterations.detected)
                       .arg(q(r.iterations.source), q(format_duration_ns(r.iterations.mean_s * 1e9)),
                            q(format_duration_ns(r.iterations.median_s * 1e9)),
                            q(format_duration_ns(r.iterations.p95_s * 1e9))));
    } else {
        p.drawText(QPoint(x, y + 12), QStringLiteral("none detected"));
    }
    y += 22;
    if (r.cpu.available) {
        p.drawText(QPoint(x, y + 12),
                   QStringLiteral("CPU utilization: %1 cores").arg(q(format_number(r.cpu.utilization))));
        y += 22;
    }
    if (!r.notes.empty()) {
        y = heading(p, x, y + 6, QStringLiteral("Notes"), colors);
        p.setPen(colors.text);
        for (const std::string& note : r.notes) {
            const QRect box(x, y, width, 200);
            const QRect used = p.boundingRect(box, Qt::TextWordWrap, "• " + q(note));
            p.drawText(box, Qt::TextWordWrap, "• " + q(note));
            y += used.height() + 4;
        }
    }
}

void paint_compare(QPainter& p, const QRect& area, const std::vector<const TraceSession*>& sessions,
                   const ViewerColors& colors) {
    p.fillRect(area, colors.background);
    const int x = area.left() + 16;
    const int width = area.width() - 32;
    int y = area.top() + 10;
    std::vector<const TraceSession*> ready;
    for (const TraceSession* s : sessions) {
        if (s->report()) ready.push_back(s);
    }
    if (ready.size() < 2) {
        p.setPen(colors.dim_text);
        p.drawText(area, Qt::AlignCenter, QStringLiteral("open two or more traces to compare them (File > Open)"));
        return;
    }
    int64_t largest = 1;
    for (const TraceSession* s : ready) largest = std::max(largest, s->report()->report.memory.peak_bytes);
    y = heading(p, x, y, QStringLiteral("Memory at peak, by category (same scale)"), colors);
    const int label_width = 220;
    for (const TraceSession* s : ready) {
        const Report& r = s->report()->report;
        p.setPen(colors.text);
        p.drawText(QRect(x, y, label_width, 22), Qt::AlignVCenter,
                   p.fontMetrics().elidedText(s->displayName(), Qt::ElideMiddle, label_width));
        const int bar_width = static_cast<int>((width - label_width - 120) * static_cast<double>(r.memory.peak_bytes) /
                                               static_cast<double>(largest));
        category_bar(p, QRect(x + label_width, y + 2, std::max(1, bar_width), 18), r.memory.at_peak,
                     static_cast<double>(std::max<int64_t>(1, r.memory.peak_bytes)), colors);
        p.drawText(QRect(x + label_width + bar_width + 8, y, 120, 22), Qt::AlignVCenter,
                   q(format_bytes(r.memory.peak_bytes)));
        y += 26;
    }
    int lx = x + label_width;
    for (int c = 0; c < kCategoryCount; ++c) {
        p.fillRect(QRect(lx, y + 3, 12, 12), colors.category(c));
        p.setPen(colors.text);
        const QString label = QString::fromUtf8(category_name(c));
        p.drawText(QPoint(lx + 16, y + 13), label);
        lx += 30 + p.fontMetrics().horizontalAdvance(label);
    }
    y += 30;
    y = heading(p, x, y, QStringLiteral("GPU and FP32 utilization"), colors);
    for (const TraceSession* s : ready) {
        const Report& r = s->report()->report;
        fraction_bar(p, x, y, width, s->displayName() + " GPU", r.gpu_utilization, q(format_percent(r.gpu_utilization)),
                     colors.category(0), colors);
        y += 22;
        fraction_bar(p, x, y, width, s->displayName() + " FP32", r.flops.fp32_utilization,
                     q(format_percent(r.flops.fp32_utilization)), colors.category(1), colors);
        y += 26;
    }
    double slowest = 0;
    for (const TraceSession* s : ready) slowest = std::max(slowest, s->report()->report.iterations.mean_s);
    if (slowest > 0) {
        y = heading(p, x, y, QStringLiteral("Mean iteration time"), colors);
        for (const TraceSession* s : ready) {
            const Report& r = s->report()->report;
            fraction_bar(
                p, x, y, width, s->displayName(), r.iterations.mean_s / slowest,
                r.iterations.count > 0 ? q(format_duration_ns(r.iterations.mean_s * 1e9)) : QStringLiteral("none"),
                colors.category(4), colors);
            y += 22;
        }
    }
}

}  // namespace tbdprof::viewer
