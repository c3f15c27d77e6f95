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
    const double t = axis.trace_ns_at(point.x() - kLabelWidth);
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
    const double first = std::ceil(axis.begin_trace_ns() / step) * step;
    // Deep in, absolute labels would all read alike: the first says where, the rest how far from it.
    const bool relative = first > 0 && step < first / 500;
    painter.setPen(colors.text);
    bool labelled_first = false;
    for (double t = first; t <= axis.end_trace_ns(); t += step) {
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
                         o->phases_in_device_time ? QStringLiteral("phases (GPU)") : QStringLiteral("phases"));
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

namespace {

// A run of narrow items folded into one block (sparse rows), or of mipmap buckets (dense rows).
struct FoldRun {
    double x0 = 0, x1 = -1e9;
    int count = 0;
    float busy = 0;  // dense rows: the buckets' summed busy fractions
    uint32_t label = 0;
    bool marked = false;
};

// One row of one frame: the lane, the row and what every step of drawing it needs. `ColorOf`
// gives a label's colour (the painter's cached table); `dim`: another kernel is highlighted.
template <class ColorOf>
class RowPainter {
public:
    RowPainter(QPainter& painter, const QRect& lane, const TimelineRow& row, const TimeAxis& axis,
               const ViewerColors& colors, bool dim, TimelineStats& stats, ColorOf color_of)
        : painter_(painter),
          lane_(lane),
          row_(row),
          items_(row.items),
          axis_(axis),
          colors_(colors),
          left_(lane.left()),
          width_(lane.width()),
          dim_(dim),
          stats_(stats),
          color_of_(color_of),
          fold_brush_(colors.dark ? QColor(150, 150, 160) : QColor(120, 120, 130), Qt::BDiagPattern) {}

    // Few enough to visit each: wide items drawn one by one, narrow runs folded.
    void paintItems(size_t first, size_t last) {
        FoldRun run;
        for (size_t i = first; i < last; ++i) {
            const double x0 = axis_.x_of(static_cast<double>(items_.start(i)));
            const double x1 = axis_.x_of(static_cast<double>(items_.end(i)));
            if (x1 < 0) continue;
            if (x1 - x0 >= kFoldPx) {
                flushItems(run);
                drawWideItem(i, x0, x1);
                continue;
            }
            if (run.count > 0 && x0 <= run.x1 + 1.0) {
                run.x1 = std::max(run.x1, x1);
                ++run.count;
                run.marked = run.marked || items_.marked(i);
            } else {
                flushItems(run);
                run.x0 = x0;
                run.x1 = std::max(x1, x0 + 1);
                run.count = 1;
                run.label = items_.label(i);
                run.marked = items_.marked(i);
            }
        }
        flushItems(run);
    }

    // Dense: one mipmap bucket per pixel or finer, each its busy fraction and longest item.
    void paintBuckets(int64_t t0, int64_t t1) {
        const IntervalMipmap& lod = row_.lod;
        const int level = lod.level_for(axis_.ns_per_px());
        const int64_t span = lod.span(level);
        const size_t b0 = static_cast<size_t>(std::max<int64_t>(0, t0 / span));
        const size_t b1 = std::min(lod.bucket_count(level), static_cast<size_t>(std::max<int64_t>(0, t1 / span + 1)));
        FoldRun run;
        for (size_t b = b0; b < b1; ++b) {
            const LodBucket& bucket = lod.bucket(level, b);
            ++stats_.lod_buckets;
            if (bucket.busy <= 0) {
                flushBuckets(run);
                continue;
            }
            if (run.count == 0) {
                run.x0 = axis_.x_of(static_cast<double>(b) * static_cast<double>(span));
                run.busy = 0;
                run.label = bucket.longest ? items_.label(bucket.longest - 1) : 0;
                run.marked = false;
            }
            run.marked = run.marked || lod.marked(level, b);
            run.x1 = axis_.x_of(static_cast<double>(b + 1) * static_cast<double>(span));
            run.busy += bucket.busy;
            ++run.count;
            if (bucket.longest) drawLongestOfBucket(bucket.longest - 1, run);
        }
        flushBuckets(run);
    }

    // Instances of the highlighted kernel: at most one mark per pixel, found by binary search.
    void paintHighlighted(const std::vector<uint32_t>& instances, int64_t t0, int64_t t1) {
        auto by_start = [&](uint32_t index, int64_t t) { return items_.start(index) < t; };
        auto it = std::lower_bound(instances.begin(), instances.end(), static_cast<int64_t>(t0 - items_.max_duration()),
                                   by_start);
        painter_.setPen(Qt::NoPen);
        while (it != instances.end() && items_.start(*it) <= t1) {
            const double x0 = axis_.x_of(static_cast<double>(items_.start(*it)));
            const double x1 = std::max(x0 + 2, axis_.x_of(static_cast<double>(items_.end(*it))));
            if (x1 >= 0) {
                const QRectF r(left_ + x0, lane_.top() - 1, x1 - x0, lane_.height() + 2);
                painter_.fillRect(r, colorOf(items_.label(*it)));
                painter_.setPen(QPen(colors_.highlight, 1.5));
                painter_.drawRect(r);
                painter_.setPen(Qt::NoPen);
            }
            it = std::lower_bound(it + 1, instances.end(), static_cast<int64_t>(axis_.trace_ns_at(std::floor(x1) + 1)),
                                  by_start);
        }
    }

    void paintSelection(size_t item) {
        const double x0 = axis_.x_of(static_cast<double>(items_.start(item)));
        const double x1 = std::max(x0 + 3, axis_.x_of(static_cast<double>(items_.end(item))));
        painter_.setPen(QPen(colors_.highlight, 2));
        painter_.setBrush(Qt::NoBrush);
        painter_.drawRect(QRectF(left_ + x0 - 1, lane_.top() - 1, x1 - x0 + 2, lane_.height() + 2));
    }

private:
    QColor colorOf(uint32_t label) { return color_of_(label); }

    // A band along the top of a drawn item or block: it ran (or hides work that ran) in a CUDA graph replay.
    void markTop(const QRectF& r) { painter_.fillRect(QRectF(r.left(), r.top(), r.width(), 3), colors_.text); }

    // A folded block: what it hides is drawn as a hatch over the run's colour; when it hides
    // kernels a graph replay ran, it carries their band along its top, as they do.
    void drawFold(double x0, double x1, QColor color, float busy, bool marked) {
        const QRectF r(left_ + x0, lane_.top(), std::max(1.0, x1 - x0), lane_.height());
        color.setAlphaF(std::clamp(0.35f + 0.65f * busy, 0.35f, 1.0f) * (dim_ ? 0.35f : 1.0f));
        painter_.fillRect(r, color);
        if (r.width() >= 4) painter_.fillRect(r, fold_brush_);
        if (marked) {
            markTop(r);
            ++stats_.marked_folds;
        }
        ++stats_.folded;
    }

    // An item wide enough to show as itself, with its label when there is room.
    void drawWideItem(size_t i, double x0, double x1) {
        const QRectF r(left_ + std::max(-2.0, x0), lane_.top(), std::min(width_ + 2, x1) - std::max(-2.0, x0),
                       lane_.height());
        QColor c = colorOf(items_.label(i));
        if (dim_) c.setAlphaF(0.35f);
        painter_.fillRect(r, c);
        ++stats_.items;
        // A darker left edge, so back-to-back items of one colour (NVTX steps) stay apart.
        painter_.fillRect(QRectF(r.left(), r.top(), 1, r.height()), c.darker(150));
        if (items_.marked(i)) {
            markTop(r);
            ++stats_.marked;
        }
        if (r.width() > 30) {
            painter_.setPen(colors_.dark ? QColor(20, 20, 20) : QColor(255, 255, 255));
            const QString text = QString::fromStdString(row_.label_of(i));
            painter_.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                              painter_.fontMetrics().elidedText(text, Qt::ElideRight, static_cast<int>(r.width()) - 5));
        }
    }

    // A run of one narrow item is drawn as that item; of more, as a fold.
    void flushItems(FoldRun& run) {
        if (run.count == 1) {
            QColor c = colorOf(run.label);
            if (dim_) c.setAlphaF(0.35f);
            const QRectF r(left_ + run.x0, lane_.top(), std::max(1.0, run.x1 - run.x0), lane_.height());
            painter_.fillRect(r, c);
            if (run.marked) {
                markTop(r);
                ++stats_.marked;
            }
            ++stats_.items;
        } else if (run.count > 1) {
            drawFold(run.x0, run.x1, colorOf(run.label), 1.0f, run.marked);
        }
        run.count = 0;
    }

    void flushBuckets(FoldRun& run) {
        if (run.count > 0)
            drawFold(run.x0, run.x1, colorOf(run.label), run.busy / static_cast<float>(run.count), run.marked);
        run.count = 0;
    }

    // A bucket's longest item, drawn as itself when wide enough (ending the run before it).
    void drawLongestOfBucket(size_t i, FoldRun& run) {
        const double ix0 = axis_.x_of(static_cast<double>(items_.start(i)));
        const double ix1 = axis_.x_of(static_cast<double>(items_.end(i)));
        if (ix1 - ix0 < kFoldPx) return;
        flushBuckets(run);
        painter_.fillRect(QRectF(left_ + ix0, lane_.top(), ix1 - ix0, lane_.height()), colorOf(items_.label(i)));
        if (items_.marked(i)) {
            painter_.fillRect(QRectF(left_ + ix0, lane_.top(), ix1 - ix0, 3), colors_.text);
            ++stats_.marked;
        }
        ++stats_.items;
    }

    QPainter& painter_;
    const QRect& lane_;
    const TimelineRow& row_;
    const ItemRow& items_;
    const TimeAxis& axis_;
    const ViewerColors& colors_;
    const double left_, width_;
    const bool dim_;
    TimelineStats& stats_;
    ColorOf color_of_;
    const QBrush fold_brush_;
};

}  // namespace

void TimelinePainter::paintRow(QPainter& painter, const QRect& lane, const TimelineRow& row, const TimeAxis& axis,
                               const ViewerColors& colors, int row_index, const Selection& selection) {
    const ItemRow& items = row.items;
    if (items.empty()) return;
    const int64_t t0 = static_cast<int64_t>(std::floor(axis.begin_trace_ns()));
    const int64_t t1 = static_cast<int64_t>(std::ceil(axis.end_trace_ns()));
    const size_t first = items.first_overlapping(t0), last = items.first_starting_at(t1 + 1);
    const bool dim = !highlight_.isEmpty() && row.kind == RowKind::kernels;
    RowPainter row_painter(painter, lane, row, axis, colors, dim, stats_,
                           [&](uint32_t label) { return colorOf(row, label, colors); });
    if (last - first <= static_cast<size_t>(8 * static_cast<double>(lane.width())) || row.lod.empty())
        row_painter.paintItems(first, last);
    else
        row_painter.paintBuckets(t0, t1);
    if (const auto highlighted = highlighted_.find(&row);
        highlighted != highlighted_.end() && !highlighted->second.empty())
        row_painter.paintHighlighted(highlighted->second, t0, t1);
    if (selection.row == row_index && selection.item < items.size()) row_painter.paintSelection(selection.item);
}

}  // namespace tbdprof::viewer
