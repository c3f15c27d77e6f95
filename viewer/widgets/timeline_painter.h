// Paints the timeline (ruler, iteration and phase bands, one row per device stream, host thread and
// NVTX depth) with QPainter only, on screen and into PNG/SVG alike. The cost of a frame depends on
// rows x pixels: rows with more items in view than pixels are drawn from their mipmap, and runs of
// items narrower than a few pixels are folded into one hatched block.
#pragma once

#include <QPainter>
#include <QRect>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "palette.h"
#include "time_axis.h"
#include "trace_data.h"

namespace tbdprof::viewer {

class TraceSession;

inline constexpr int kLabelWidth = 230;  // row titles; the memory chart keeps the same margin
inline constexpr int kRulerHeight = 22;
inline constexpr int kBandHeight = 16;  // iterations; phases below them
inline constexpr int kRowHeight = 20;
inline constexpr double kFoldPx = 3.0;  // items narrower than this fold into a block

struct Selection {
    int row = -1;
    size_t item = SIZE_MAX;
    bool valid() const { return row >= 0 && item != SIZE_MAX; }
};

struct TimelineStats {  // what the last frame drew, for tests and the benchmark
    int rows = 0, items = 0, folded = 0, lod_buckets = 0, marked = 0;  // marked: graph-replay kernels drawn
    int marked_folds = 0;  // folded blocks that hide graph-replay kernels (and say so)
};

class TimelinePainter {
public:
    // The kernel name to highlight (from the Kernels view); empty: none.
    void setHighlight(const TraceSession* session, const QString& name);
    const QString& highlight() const { return highlight_; }

    void paint(QPainter& painter, const QRect& area, const TraceSession& session, const TimeAxis& axis,
               const ViewerColors& colors, const Selection& selection, int first_row = 0);
    TimelineStats stats() const { return stats_; }

    // Layout: the y of a row's top edge, the row under y (-1: none) and the item under a point.
    static int rowsTop(const TraceSession& session);
    static int rowTop(const TraceSession& session, int row, int first_row = 0);
    static int rowAt(const TraceSession& session, int y, int first_row = 0);
    static Selection hit(const TraceSession& session, const TimeAxis& axis, QPoint point, int first_row = 0);
    static void paintRuler(QPainter& painter, const QRect& area, const TimeAxis& axis, const ViewerColors& colors);

private:
    void paintRow(QPainter& painter, const QRect& lane, const TimelineRow& row, const TimeAxis& axis,
                  const ViewerColors& colors, int row_index, const Selection& selection);
    void paintBands(QPainter& painter, const QRect& area, const TraceSession& session, const TimeAxis& axis,
                    const ViewerColors& colors);
    QColor colorOf(const TimelineRow& row, uint32_t label, const ViewerColors& colors);

    QString highlight_;
    std::unordered_map<const TimelineRow*, std::vector<uint32_t>> highlighted_;  // item indices per row
    std::unordered_map<const void*, std::vector<QColor>> label_colors_;          // per label table
    bool colors_dark_ = false;
    TimelineStats stats_;
};

}  // namespace tbdprof::viewer
