#include "summary_painter.h"

#include <QPolygonF>
#include <QStringList>

#include <algorithm>
#include <iterator>

#include "iteration_chart_painter.h"
#include "iteration_compare.h"
#include "tbdprof/analyzer/category_colors.h"
#include "tbdprof/analyzer/tag_plausibility.h"
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

// "ns::(anonymous namespace)::relu_kernel(float*, int)" -> "relu_kernel", and
// "void at::native::elementwise_kernel<4, at::Array<char*, 3> >(int, ...)" -> "elementwise_kernel<4, ...>":
// the name a person knows, found outside template brackets.
QString short_kernel_name(QString name) {
    name.remove(QStringLiteral("(anonymous namespace)::"));
    int depth = 0;
    qsizetype scope_end = 0, end = name.size();
    for (qsizetype i = 0; i < name.size(); ++i) {
        const QChar c = name[i];
        if (c == '<')
            ++depth;
        else if (c == '>' && depth > 0)
            --depth;
        else if (depth == 0 && c == '(') {
            end = i;
            break;
        } else if (depth == 0 && c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
            scope_end = i + 2;
        } else if (depth == 0 && c == ' ') {
            scope_end = i + 1;  // after a return type ("void ")
        }
    }
    const QString shortened = name.mid(scope_end, end - scope_end).trimmed();
    return shortened.isEmpty() ? name : shortened;
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

// Wrapped text from `y` in `width`; returns the y below it.
int wrapped(QPainter& p, int x, int y, int width, const QString& text) {
    const QRect box(x, y, width, 400);
    const QRect used = p.boundingRect(box, Qt::TextWordWrap, text);
    p.drawText(box, Qt::TextWordWrap, text);
    return y + used.height();
}

// What the analyzer says of the memory tags (tag_plausibility.h), above the breakdown: a red box
// with every reason when the tags contradict a training run, else one dim line. Returns the y below.
int paint_tag_check(QPainter& p, int x, int y, int width, const MemoryMetrics& m, const ViewerColors& colors) {
    const TagPlausibility& tags = m.tags;
    if (tags.verdict != TagVerdict::implausible) {
        p.setPen(colors.dim_text);
        QString text = q(tags.summary);
        for (const std::string& remark : tags.remarks) text += QStringLiteral(" · ") + q(remark);
        return wrapped(p, x, y, width, text) + 6;
    }
    const QColor &edge = colors.warning_edge, &fill = colors.warning_fill, &ink = colors.warning_text;
    QFont bold = p.font();
    bold.setBold(true);
    // Measure first (the box is drawn under the text).
    int height = 8;
    p.save();
    p.setFont(bold);
    height += p.boundingRect(QRect(0, 0, width - 20, 400), Qt::TextWordWrap, q(tags.summary)).height() + 4;
    p.restore();
    for (const std::string& w : tags.warnings)
        height += p.boundingRect(QRect(0, 0, width - 30, 400), Qt::TextWordWrap, q(w)).height() + 3;
    height += 5;
    p.fillRect(QRect(x, y, width, height), fill);
    p.fillRect(QRect(x, y, 4, height), edge);
    int ty = y + 6;
    p.save();
    p.setFont(bold);
    p.setPen(ink);
    ty = wrapped(p, x + 12, ty, width - 20, q(tags.summary)) + 4;
    p.restore();
    p.setPen(ink);
    for (const std::string& w : tags.warnings) {
        p.drawText(QPoint(x + 12, ty + p.fontMetrics().ascent()), QStringLiteral("•"));
        ty = wrapped(p, x + 24, ty, width - 30, q(w)) + 3;
    }
    y += height + 6;
    if (tags.remarks.empty()) return y + 2;
    // What the check could not look at (no data flow, no iterations), as for plausible tags.
    p.setPen(colors.dim_text);
    QStringList remarks;
    for (const std::string& remark : tags.remarks) remarks << q(remark);
    return wrapped(p, x, y, width, remarks.join(QStringLiteral(" · "))) + 6;
}

// The run's name, length and window, and its command line. Returns the y below.
int paint_title(QPainter& p, int x, int y, int width, const TraceSession& session, const Report& r,
                const ViewerColors& colors) {
    y = heading(
        p, x, y,
        QStringLiteral("%1 · %2 run, %3 window (%4)")
            .arg(session.displayName(), q(format_duration_ns(static_cast<double>(r.run.duration_ns))), q(r.window.used),
                 q(format_duration_ns(static_cast<double>(r.window.end_ns - r.window.begin_ns)))),
        colors);
    p.setPen(colors.dim_text);
    p.drawText(QRect(x, y - 6, width, 18), Qt::AlignVCenter,
               p.fontMetrics().elidedText(q(r.run.command_line), Qt::ElideMiddle, width));
    return y + 16;
}

// Utilization bars: the mean, each GPU, copies and sets, FP32; tensor-core throughput when any.
int paint_gpu_time(QPainter& p, int x, int y, int width, const Report& r, const ViewerColors& colors) {
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
    fraction_bar(p, x, y, width, QStringLiteral("busy, copies and sets included"), r.busy_utilization,
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
    return y + 8;
}

// A trace of several processes (the ranks of one recording): the bar above is every process
// together, so each process's own peak gets a bar too, on the same scale, as the report lists them.
int paint_process_peaks(QPainter& p, int x, int y, int width, const MemoryMetrics& m, const ViewerColors& colors) {
    if (m.processes.empty()) return y;
    p.setPen(colors.dim_text);
    p.drawText(QPoint(x, y + 4),
               QStringLiteral("The bar above is all %1 processes together; each alone at its own peak:")
                   .arg(m.processes.size()));
    y += 14;
    const double scale = static_cast<double>(std::max<int64_t>(1, m.peak_bytes));
    for (const ProcessMemory& process : m.processes) {
        // The same scale as the bar above (width - 130 for the whole peak), its label after it.
        const int bar_width =
            std::max(1, static_cast<int>((width - 130) * static_cast<double>(process.peak_bytes) / scale));
        category_bar(p, QRect(x, y + 2, bar_width, 14), process.at_peak,
                     static_cast<double>(std::max<int64_t>(1, process.peak_bytes)), colors);
        p.setPen(colors.text);
        p.drawText(QPoint(x + bar_width + 8, y + 13),
                   QStringLiteral("%1: %2 at %3")
                       .arg(q(process_memory_label(process)), q(format_bytes(process.peak_bytes)),
                            q(format_duration_ns(static_cast<double>(process.peak_trace_ns)))));
        y += 20;
    }
    return y + 10;
}

// The peak's bytes by category: the tag check, a stacked bar, and a legend with each share.
int paint_memory(QPainter& p, int x, int y, int width, const Report& r, const ViewerColors& colors) {
    y = heading(p, x, y,
                r.memory.peak_bytes <= 0 ? QStringLiteral("Where the memory goes")
                                         : QStringLiteral("Where the memory goes: peak %1 at %2")
                                               .arg(q(format_bytes(r.memory.peak_bytes)),
                                                    q(format_duration_ns(static_cast<double>(r.memory.peak_trace_ns)))),
                colors);
    if (r.memory.tagged) y = paint_tag_check(p, x, y, width, r.memory, colors);
    if (r.memory.peak_bytes <= 0) {  // nothing to split: say so rather than draw an empty bar
        p.setPen(colors.dim_text);
        p.drawText(QPoint(x, y + 14), QStringLiteral("no device allocations recorded in this trace"));
        y += 10;
    } else {
        category_bar(p, QRect(x, y, width - 130, 22), r.memory.at_peak,
                     static_cast<double>(std::max<int64_t>(1, r.memory.peak_bytes)), colors);
    }
    y += 30;
    int lx = x;
    for (int c = 0; c < kCategoryCount; ++c) {
        const int64_t b = r.memory.at_peak[static_cast<size_t>(c)];
        if (b <= 0) continue;
        // The share tagged with low confidence, where there is one (tag_plausibility.h).
        const std::optional<double> unsure = low_confidence_share(r.memory, c);
        const QString label =
            QStringLiteral("%1 %2 (%3%4)")
                .arg(QString::fromUtf8(category_name(c)), q(format_bytes(b)),
                     q(format_percent(static_cast<double>(b) / static_cast<double>(r.memory.peak_bytes))),
                     unsure && *unsure > 0 ? QStringLiteral(", %1 low confidence").arg(q(format_percent(*unsure)))
                                           : QString());
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
    return paint_process_peaks(p, x, y + 30, width, r.memory, colors);
}

// Communication over the window, when the run has NCCL kernels: per rank, its exposed time and a bar
// of the share of its communication that computation hid; then the imbalance.
int paint_communication(QPainter& p, int x, int y, int width, const Report& r, const ViewerColors& colors) {
    const CommunicationMetrics& c = r.communication;
    if (!c.present) return y;
    y = heading(p, x, y,
                QStringLiteral("Communication: %1 overlapped with computation, %2 exposed")
                    .arg(q(format_percent(c.total.overlap_fraction())),
                         q(format_duration_ns(static_cast<double>(c.total.exposed_ns)))),
                colors);
    for (const RankCommunication& rank : c.ranks) {
        const QString who =
            rank.rank ? QStringLiteral("rank %1").arg(*rank.rank) : QStringLiteral("process %1").arg(rank.process);
        const QString label = QStringLiteral("%1 · GPU %2 · %3 exposed")
                                  .arg(who)
                                  .arg(rank.device)
                                  .arg(q(format_duration_ns(static_cast<double>(rank.figures.exposed_ns))));
        fraction_bar(p, x, y, width, label, rank.figures.overlap_fraction(),
                     q(format_percent(rank.figures.overlap_fraction())) + " overlapped",
                     colors.label(QStringLiteral("overlapped communication")), colors);
        y += 22;
    }
    if (c.imbalance) {
        p.setPen(colors.text);
        p.drawText(QPoint(x, y + 12),
                   QStringLiteral("rank imbalance (max / median computation): %1").arg(q(format_number(*c.imbalance))));
        y += 22;
    }
    return y + 8;
}

int paint_iterations_and_cpu(QPainter& p, int x, int y, const Report& r, const ViewerColors& colors) {
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
        const QString bounds =
            r.cpu.coarse ? QStringLiteral(" (coarse: the samples allow %1 to %2 cores)")
                               .arg(q(format_number(r.cpu.utilization_low)), q(format_number(r.cpu.utilization_high)))
                         : QString();
        p.drawText(QPoint(x, y + 12),
                   QStringLiteral("CPU utilization: %1 cores%2").arg(q(format_number(r.cpu.utilization)), bounds));
        y += 22;
    }
    return y;
}

// GPU utilization over the run (the report's chart series), with the analysis window shaded.
int paint_utilization_chart(QPainter& p, int x, int y, int width, const Report& r, const ViewerColors& colors) {
    if (r.utilization_series.devices.empty() || r.utilization_series.bucket_ns <= 0) return y;
    y = heading(p, x, y + 6, QStringLiteral("GPU utilization over the run (shaded: the analysis window)"), colors);
    const QRect chart(x + 40, y, width - 40, 70);
    p.fillRect(chart, colors.alternate);
    const double run = static_cast<double>(std::max<int64_t>(1, r.run.duration_ns));
    const double wx0 = chart.left() + chart.width() * static_cast<double>(r.window.begin_ns) / run;
    const double wx1 = chart.left() + chart.width() * static_cast<double>(r.window.end_ns) / run;
    p.fillRect(QRectF(wx0, chart.top(), wx1 - wx0, chart.height()), colors.iteration_b);
    size_t device_index = 0;
    for (const auto& [device, fractions] : r.utilization_series.devices) {
        QColor color(QString::fromLatin1(kDeviceColors[device_index++ % std::size(kDeviceColors)]));
        p.setPen(QPen(color, 1.5));
        QPolygonF line;
        for (size_t i = 0; i < fractions.size(); ++i) {
            const double t = (static_cast<double>(i) + 0.5) * static_cast<double>(r.utilization_series.bucket_ns);
            line << QPointF(chart.left() + chart.width() * std::min(1.0, t / run),
                            chart.bottom() - chart.height() * std::clamp(fractions[i], 0.0, 1.0));
        }
        p.drawPolyline(line);
    }
    p.setPen(colors.dim_text);
    p.drawText(QRect(x, chart.top() - 2, 36, 14), Qt::AlignRight, QStringLiteral("100%"));
    p.drawText(QRect(x, chart.bottom() - 12, 36, 14), Qt::AlignRight, QStringLiteral("0%"));
    p.setPen(colors.grid);
    p.drawRect(chart);
    return chart.bottom() + 12;
}

// The kernels that take the most GPU time.
int paint_top_kernels(QPainter& p, int x, int y, int width, const Report& r, const ViewerColors& colors) {
    if (r.kernels.top.empty()) return y;
    y = heading(p, x, y + 4, QStringLiteral("Kernels taking the most GPU time (all of them in the Kernels view)"),
                colors);
    for (size_t i = 0; i < std::min<size_t>(5, r.kernels.top.size()); ++i) {
        const KernelStat& k = r.kernels.top[i];
        const QString label = p.fontMetrics().elidedText(short_kernel_name(q(k.name)), Qt::ElideRight, 255);
        fraction_bar(p, x, y, width, label, k.share,
                     q(format_percent(k.share)) + " · " + QString::number(k.count) + "×", colors.label(q(k.name)),
                     colors);
        y += 22;
    }
    return y;
}

void paint_notes(QPainter& p, int x, int y, int width, const Report& r, const ViewerColors& colors) {
    if (r.notes.empty()) return;
    y = heading(p, x, y + 6, QStringLiteral("Notes"), colors);
    p.setPen(colors.text);
    for (const std::string& note : r.notes) {
        const QRect box(x, y, width, 200);
        const QRect used = p.boundingRect(box, Qt::TextWordWrap, "• " + q(note));
        p.drawText(box, Qt::TextWordWrap, "• " + q(note));
        y += used.height() + 4;
    }
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
    y = paint_title(p, x, y, width, session, r, colors);
    y = paint_gpu_time(p, x, y, width, r, colors);
    y = paint_memory(p, x, y, width, r, colors);
    y = paint_communication(p, x, y, width, r, colors);
    y = paint_iterations_and_cpu(p, x, y, r, colors);
    y = paint_utilization_chart(p, x, y, width, r, colors);
    y = paint_top_kernels(p, x, y, width, r, colors);
    paint_notes(p, x, y, width, r, colors);
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
    bool any_unreliable = false;
    for (const TraceSession* s : ready) {
        largest = std::max(largest, s->report()->report.memory.peak_bytes);
        any_unreliable |= s->report()->report.memory.tags.verdict == TagVerdict::implausible;
    }
    const int text_room = any_unreliable ? 300 : 170;  // after each bar: its peak, and the warning
    y = heading(p, x, y, QStringLiteral("Memory at peak, by category (same scale)"), colors);
    const int label_width = 220;
    for (const TraceSession* s : ready) {
        const Report& r = s->report()->report;
        p.setPen(colors.text);
        p.drawText(QRect(x, y, label_width, 22), Qt::AlignVCenter,
                   p.fontMetrics().elidedText(s->displayName(), Qt::ElideMiddle, label_width));
        const int bar_width = static_cast<int>((width - label_width - text_room) * static_cast<double>(r.memory.peak_bytes) /
                                               static_cast<double>(largest));
        category_bar(p, QRect(x + label_width, y + 2, std::max(1, bar_width), 18), r.memory.at_peak,
                     static_cast<double>(std::max<int64_t>(1, r.memory.peak_bytes)), colors);
        // The peak, and how far it is from the first trace's (as `tbdprof compare` says it).
        const int64_t base = ready.front()->report()->report.memory.peak_bytes;
        QString text = q(format_bytes(r.memory.peak_bytes));
        if (s != ready.front() && base > 0) {
            const double change = static_cast<double>(r.memory.peak_bytes - base) / static_cast<double>(base);
            text += QString(" (%1%2%)").arg(change >= 0 ? "+" : "").arg(change * 100, 0, 'f', 1);
        }
        // A breakdown the analyzer calls unreliable is never shown bare (tag_plausibility.h).
        const bool unreliable = r.memory.tags.verdict == TagVerdict::implausible;
        if (unreliable) text += QStringLiteral(" · tags unreliable");
        p.setPen(unreliable ? colors.highlight : colors.text);
        p.drawText(QRect(x + label_width + bar_width + 8, y, text_room, 22), Qt::AlignVCenter, text);
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
    // Aligned on iterations: the per-iteration figures side by side (left), each trace's iteration
    // times and memory peaks on one iteration axis (right).
    std::vector<TraceIterations> traces;
    for (const TraceSession* s : ready) traces.push_back(trace_iterations_of(*s->report(), s->displayName()));
    IterationCompareModel figures;
    figures.setTraces(traces);
    y = heading(p, x, y, QStringLiteral("Aligned on iterations"), colors);
    const int left_width = std::min(width * 11 / 20, 200 + 170 * static_cast<int>(traces.size()));
    paint_iteration_figures(p, QRect(x, y, left_width, area.bottom() - y - 6), figures, colors);
    paint_iteration_charts(p, QRect(x + left_width + 24, y, width - left_width - 24, area.bottom() - y - 6), traces,
                           colors);
}

}  // namespace tbdprof::viewer
