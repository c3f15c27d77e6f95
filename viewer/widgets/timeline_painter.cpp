#include "timeline_painter.h"

#include <QFontMetrics>

#include <algorithm>
#include <cmath>

#include "memory_painter.h"
#include "tbdprof/analyzer/units.h"
#include "trace_session.h"

namespace tbdprof::viewer {
namespace {

QString duration_text(double ns) {
    return QString::fromStdString(analyzer::format_duration_ns(ns));
}

// 1, 2 or 5 times a power of ten, at least `raw`.
double nice_step(double raw) {
    const double power = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-3))));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * power >= raw) return m * power;
    }
    return 10 * power;
}

}  // namespace

void TimelinePainter::setHighlight(const TraceSession* session, const QString& name) {
    highlight_ = name;
    highlighted_.clear();
    if (!session || name.isEmpty() || !session->kernels()) return;
    const auto& names = *session->kernels()->names;
    const std::string wanted = name.toStdString();
    std::vector<uint32_t> labels;
    for (uint32_t i = 0; i < names.size(); ++i) {
        if (names[i] == wanted) labels.push_back(i);
    }
    if (labels.empty()) return;
    // One pass over the kernels when the pick changes; frames then look instances up by position.
    for (const TimelineRow& row : session->kernels()->rows) {
        std::vector<uint32_t>& instances = highlighted_[&row];
        for (size_t i = 0; i < row.items.size(); ++i) {
            if (std::find(labels.begin(), labels.end(), row.items.label(i)) != labels.end()) {
                instances.push_back(static_cast<uint32_t>(i));
            }
        }
    }
}

int TimelinePainter::rowsTop(const TraceSession& session) {
    const Overview* o = session.overview();
    const bool phases = o && !o->phases.empty();
    return kRulerHeight + kBandHeight + (phases ? kBandHeight : 0) + 2;
}

int TimelinePainter::rowTop(const TraceSession& session, int row, int first_row) {
    return rowsTop(session) + (row - first_row) * kRowHeight;
}

int TimelinePainter::rowAt(const TraceSession& session, int y, int first_row) {
    const int top = rowsTop(session);
    if (y < top) return -1;
    const int row = first_row + (y - top) / kRowHeight;
    return row < static_cast<int>(session.rows().size()) ? row : -1;
}

Selection TimelinePainter::hit(const TraceSession& session, const TimeAxis& axis, QPoint point, int first_row) {
    Selection selection;
    const int row = rowAt(session, point.y(), first_row);
    if (row < 0 || point.x() < kLabelWidth) return selection;
    const TimelineRow& r = *session.rows()[static_cast<size_t>(row)];
    const double t = axis.t_of(point.x() - kLabelWidth);
    const size_t item =
        r.items.item_at(static_cast<int64_t>(t), static_cast<int64_t>(std::ceil(axis.ns_per_px() * kFoldPx)));
    if (item != SIZE_MAX) selection = {row, item};
    return selection;
}

QColor TimelinePainter::colorOf(const TimelineRow& row, uint32_t label, const ViewerColors& colors) {
    if (colors.dark != colors_dark_) {
        label_colors_.clear();
        colors_dark_ = colors.dark;
    }
    std::vector<QColor>& cache = label_colors_[row.labels.get()];
    if (cache.empty()) {
        cache.reserve(row.labels->size());
        for (const std::string& text : *row.labels) cache.push_back(colors.label(QString::fromStdString(text)));
    }
    return label < cache.size() ? cache[label] : colors.grid;
}

void TimelinePainter::paintRuler(QPainter& painter, const QRect& area, const TimeAxis& axis,
                                 const ViewerColors& colors) {
    const QRect ruler(area.left() + kLabelWidth, area.top(), area.width() - kLabelWidth, kRulerHeight);
    painter.fillRect(QRect(area.left(), area.top(), area.width(), kRulerHeight), colors.alternate);
    const double step = nice_step(axis.ns_per_px() * 110);
    const double first = std::ceil(axis.begin_ns() / step) * step;
    // Deep in, absolute labels would all read alike: the first says where, the rest how far from it.
    const bool relative = first > 0 && step < first / 500;
    painter.setPen(colors.text);
    bool labelled_first = false;
    for (double t = first; t <= axis.end_ns(); t += step) {
        const double x = ruler.left() + axis.x_of(t);
        painter.setPen(colors.grid);
        painter.drawLine(QPointF(x, ruler.bottom() - 5), QPointF(x, ruler.bottom()));
        painter.setPen(colors.text);
        QString text = !relative || !labelled_first ? duration_text(t) : "+" + duration_text(t - first);
        labelled_first = true;
        painter.drawText(QPointF(x + 3, ruler.top() + 14), text);
    }
}

void TimelinePainter::paintBands(QPainter& painter, const QRect& area, const TraceSession& session,
                                 const TimeAxis& axis, const ViewerColors& colors) {
    const Overview* o = session.overview();
    const int top = area.top() + kRulerHeight;
    painter.setPen(colors.dim_text);
    painter.drawText(QRect(area.left() + 6, top, kLabelWidth - 8, kBandHeight), Qt::AlignVCenter,
                     QStringLiteral("iterations"));
    if (!o) return;
    auto draw = [&](const std::vector<Band>& bands, int y, bool by_phase) {
        int index = 0;
        for (const Band& band : bands) {
            const double x0 = std::max(-1.0, axis.x_of(static_cast<double>(band.begin)));
            const double x1 = std::min(static_cast<double>(axis.width()) + 1, axis.x_of(static_cast<double>(band.end)));
            ++index;
            if (x1 < 0 || x0 > axis.width()) continue;
            const QRectF r(area.left() + kLabelWidth + x0, y, std::max(1.0, x1 - x0), kBandHeight - 1);
            const QString label = QString::fromStdString(band.label);
            painter.fillRect(r, by_phase ? colors.phase(label) : (index % 2 ? colors.iteration_a : colors.iteration_b));
            if (r.width() > 60) {
                painter.setPen(by_phase ? QColor(Qt::white) : colors.text);
                painter.drawText(r.adjusted(3, 0, 0, 0), Qt::AlignVCenter, label);
            }
        }
    };
    painter.save();
    painter.setClipRect(QRect(area.left() + kLabelWidth, top, area.width() - kLabelWidth, 2 * kBandHeight));
    draw(o->iterations, top, false);
    if (!o->phases.empty()) draw(o->phases, top + kBandHeight, true);
    painter.restore();
    if (!o->phases.empty()) {
        painter.setPen(colors.dim_text);
        painter.drawText(QRect(area.left() + 6, top + kBandHeight, kLabelWidth - 8, kBandHeight), Qt::AlignVCenter,
                         QStringLiteral("phases"));
    }
}

void TimelinePainter::paint(QPainter& painter, const QRect& area, const TraceSession& session, const TimeAxis& axis,
                            const ViewerColors& colors, const Selection& selection, int first_row) {
    stats_ = {};
    painter.fillRect(area, colors.background);
    paintRuler(painter, area, axis, colors);
    paintBands(painter, area, session, axis, colors);
    const std::vector<const TimelineRow*> rows = session.rows();
    const int top = area.top() + rowsTop(session);
    // Iteration boundaries as faint lines through every row, so a step's work lines up by eye.
    if (const Overview* o = session.overview()) {
        painter.setPen(QPen(colors.grid, 1, Qt::DotLine));
        for (const Band& band : o->iterations) {
            const double x = axis.x_of(static_cast<double>(band.begin));
            if (x >= 0 && x <= axis.width()) {
                painter.drawLine(QPointF(area.left() + kLabelWidth + x, top),
                                 QPointF(area.left() + kLabelWidth + x, area.bottom()));
            }
        }
    }
    for (size_t i = static_cast<size_t>(std::max(0, first_row)); i < rows.size(); ++i) {
        const int y = top + (static_cast<int>(i) - first_row) * kRowHeight;
        if (y > area.bottom()) break;
        const TimelineRow& row = *rows[i];
        if (i % 2) painter.fillRect(QRect(area.left(), y, area.width(), kRowHeight), colors.alternate);
        painter.setPen(colors.text);
        const QString title = QString::fromStdString(row.title);
        painter.drawText(QRect(area.left() + 6, y, kLabelWidth - 10, kRowHeight), Qt::AlignVCenter,
                         painter.fontMetrics().elidedText(title, Qt::ElideMiddle, kLabelWidth - 10));
        const QRect lane(area.left() + kLabelWidth, y + 2, area.width() - kLabelWidth, kRowHeight - 4);
        painter.save();
        painter.setClipRect(lane.adjusted(0, -2, 0, 2));
        paintRow(painter, lane, row, axis, colors, static_cast<int>(i), selection);
        painter.restore();
        ++stats_.rows;
    }
    // Room left below the rows: live memory on the same axis, so a peak lines up with its work.
    const int rows_bottom = top + (static_cast<int>(rows.size()) - std::max(0, first_row)) * kRowHeight;
    if (area.bottom() - rows_bottom >= 180 && session.report() && !session.report()->memory.empty()) {
        MemoryPainter().paint(painter,
                              QRect(area.left(), rows_bottom + 12, area.width(), area.bottom() - rows_bottom - 12),
                              session, axis, colors);
    }
    if (session.overview() && !session.kernels()) {
        painter.setPen(colors.dim_text);
        painter.drawText(
            QRect(area.left() + kLabelWidth, top + static_cast<int>(rows.size()) * kRowHeight + 6,
                  area.width() - kLabelWidth, kRowHeight),
            Qt::AlignLeft | Qt::AlignVCenter,
            QStringLiteral("reading about %1 kernels and the host calls…").arg(session.overview()->kernel_estimate));
    }
    painter.setPen(colors.grid);
    painter.drawLine(area.left() + kLabelWidth - 1, area.top(), area.left() + kLabelWidth - 1, area.bottom());
}

void TimelinePainter::paintRow(QPainter& painter, const QRect& lane, const TimelineRow& row, const TimeAxis& axis,
                               const ViewerColors& colors, int row_index, const Selection& selection) {
    const ItemRow& items = row.items;
    if (items.empty()) return;
    const double left = lane.left(), width = lane.width();
    const int64_t t0 = static_cast<int64_t>(std::floor(axis.begin_ns()));
    const int64_t t1 = static_cast<int64_t>(std::ceil(axis.end_ns()));
    const size_t first = items.first_overlapping(t0), last = items.first_starting_at(t1 + 1);
    const auto highlighted = highlighted_.find(&row);
    const bool dim = !highlight_.isEmpty() && row.kind == RowKind::kernels;
    QBrush fold_brush(colors.dark ? QColor(150, 150, 160) : QColor(120, 120, 130), Qt::BDiagPattern);

    auto draw_fold = [&](double x0, double x1, QColor color, float busy, bool marked) {
        // A folded block: what it hides is drawn as a hatch over the run's colour; when it hides
        // kernels a graph replay ran, it carries their band along its top, as they do.
        const QRectF r(left + x0, lane.top(), std::max(1.0, x1 - x0), lane.height());
        color.setAlphaF(std::clamp(0.35f + 0.65f * busy, 0.35f, 1.0f) * (dim ? 0.35f : 1.0f));
        painter.fillRect(r, color);
        if (r.width() >= 4) painter.fillRect(r, fold_brush);
        if (marked) {
            painter.fillRect(QRectF(r.left(), r.top(), r.width(), 3), colors.text);
            ++stats_.marked_folds;
        }
        ++stats_.folded;
    };

    if (last - first <= static_cast<size_t>(8 * width) || row.lod.empty()) {
        // Few enough to visit each: wide items drawn one by one, narrow runs folded.
        double fold_x0 = 0, fold_x1 = -1e9;
        int fold_count = 0;
        uint32_t fold_label = 0;
        bool fold_marked = false;
        auto flush = [&] {
            if (fold_count == 1) {
                QColor c = colorOf(row, fold_label, colors);
                if (dim) c.setAlphaF(0.35f);
                const QRectF r(left + fold_x0, lane.top(), std::max(1.0, fold_x1 - fold_x0), lane.height());
                painter.fillRect(r, c);
                if (fold_marked) {
                    painter.fillRect(QRectF(r.left(), r.top(), r.width(), 3), colors.text);
                    ++stats_.marked;
                }
                ++stats_.items;
            } else if (fold_count > 1) {
                draw_fold(fold_x0, fold_x1, colorOf(row, fold_label, colors), 1.0f, fold_marked);
            }
            fold_count = 0;
        };
        for (size_t i = first; i < last; ++i) {
            const double x0 = axis.x_of(static_cast<double>(items.start(i)));
            const double x1 = axis.x_of(static_cast<double>(items.end(i)));
            if (x1 < 0) continue;
            if (x1 - x0 >= kFoldPx) {
                flush();
                const QRectF r(left + std::max(-2.0, x0), lane.top(), std::min(width + 2, x1) - std::max(-2.0, x0),
                               lane.height());
                QColor c = colorOf(row, items.label(i), colors);
                if (dim) c.setAlphaF(0.35f);
                painter.fillRect(r, c);
                ++stats_.items;
                // A darker left edge, so back-to-back items of one colour (NVTX steps) stay apart.
                painter.fillRect(QRectF(r.left(), r.top(), 1, r.height()), c.darker(150));
                if (items.marked(i)) {  // run by a CUDA graph replay: a band along the top
                    painter.fillRect(QRectF(r.left(), r.top(), r.width(), 3), colors.text);
                    ++stats_.marked;
                }
                if (r.width() > 30) {
                    painter.setPen(colors.dark ? QColor(20, 20, 20) : QColor(255, 255, 255));
                    const QString text = QString::fromStdString(row.label_of(i));
                    painter.drawText(
                        r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                        painter.fontMetrics().elidedText(text, Qt::ElideRight, static_cast<int>(r.width()) - 5));
                }
                continue;
            }
            if (fold_count > 0 && x0 <= fold_x1 + 1.0) {
                fold_x1 = std::max(fold_x1, x1);
                ++fold_count;
                fold_marked = fold_marked || items.marked(i);
            } else {
                flush();
                fold_x0 = x0;
                fold_x1 = std::max(x1, x0 + 1);
                fold_count = 1;
                fold_label = items.label(i);
                fold_marked = items.marked(i);
            }
        }
        flush();
    } else {
        // Dense: one mipmap bucket per pixel or finer, each its busy fraction and longest item.
        const int level = row.lod.level_for(axis.ns_per_px());
        const int64_t span = row.lod.span(level);
        const size_t b0 = static_cast<size_t>(std::max<int64_t>(0, t0 / span));
        const size_t b1 =
            std::min(row.lod.bucket_count(level), static_cast<size_t>(std::max<int64_t>(0, t1 / span + 1)));
        double run_x0 = 0, run_x1 = -1e9;
        float run_busy = 0;
        int run_buckets = 0;
        uint32_t run_label = 0;
        bool run_marked = false;
        auto flush = [&] {
            if (run_buckets > 0)
                draw_fold(run_x0, run_x1, colorOf(row, run_label, colors), run_busy / static_cast<float>(run_buckets),
                          run_marked);
            run_buckets = 0;
        };
        for (size_t b = b0; b < b1; ++b) {
            const LodBucket& bucket = row.lod.bucket(level, b);
            ++stats_.lod_buckets;
            if (bucket.busy <= 0) {
                flush();
                continue;
            }
            const double x0 = axis.x_of(static_cast<double>(b) * static_cast<double>(span));
            const double x1 = axis.x_of(static_cast<double>(b + 1) * static_cast<double>(span));
            if (run_buckets == 0) {
                run_x0 = x0;
                run_busy = 0;
                run_label = bucket.longest ? items.label(bucket.longest - 1) : 0;
                run_marked = false;
            }
            run_marked = run_marked || row.lod.marked(level, b);
            run_x1 = x1;
            run_busy += bucket.busy;
            ++run_buckets;
            if (bucket.longest) {
                const size_t i = bucket.longest - 1;
                const double ix0 = axis.x_of(static_cast<double>(items.start(i)));
                const double ix1 = axis.x_of(static_cast<double>(items.end(i)));
                if (ix1 - ix0 >= kFoldPx) {  // the longest item is wide enough to show as itself
                    flush();
                    painter.fillRect(QRectF(left + ix0, lane.top(), ix1 - ix0, lane.height()),
                                     colorOf(row, items.label(i), colors));
                    if (items.marked(i)) {
                        painter.fillRect(QRectF(left + ix0, lane.top(), ix1 - ix0, 3), colors.text);
                        ++stats_.marked;
                    }
                    ++stats_.items;
                }
            }
        }
        flush();
    }

    // Instances of the highlighted kernel: at most one mark per pixel, found by binary search.
    if (highlighted != highlighted_.end() && !highlighted->second.empty()) {
        const std::vector<uint32_t>& instances = highlighted->second;
        auto by_start = [&](uint32_t index, int64_t t) { return items.start(index) < t; };
        auto it = std::lower_bound(instances.begin(), instances.end(), static_cast<int64_t>(t0 - items.max_duration()),
                                   by_start);
        painter.setPen(Qt::NoPen);
        while (it != instances.end() && items.start(*it) <= t1) {
            const double x0 = axis.x_of(static_cast<double>(items.start(*it)));
            const double x1 = std::max(x0 + 2, axis.x_of(static_cast<double>(items.end(*it))));
            if (x1 >= 0) {
                const QRectF r(left + x0, lane.top() - 1, x1 - x0, lane.height() + 2);
                painter.fillRect(r, colorOf(row, items.label(*it), colors));
                painter.setPen(QPen(colors.highlight, 1.5));
                painter.drawRect(r);
                painter.setPen(Qt::NoPen);
            }
            it = std::lower_bound(it + 1, instances.end(), static_cast<int64_t>(axis.t_of(std::floor(x1) + 1)),
                                  by_start);
        }
    }

    if (selection.row == row_index && selection.item < items.size()) {
        const double x0 = axis.x_of(static_cast<double>(items.start(selection.item)));
        const double x1 = std::max(x0 + 3, axis.x_of(static_cast<double>(items.end(selection.item))));
        painter.setPen(QPen(colors.highlight, 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(left + x0 - 1, lane.top() - 1, x1 - x0 + 2, lane.height() + 2));
    }
}

}  // namespace tbdprof::viewer
