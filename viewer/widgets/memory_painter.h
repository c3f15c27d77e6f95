// Paints live device memory over time, stacked by category, on the timeline's time axis (same
// left margin, same zoom). Each pixel column shows the exact maximum of its time span with the
// category split at that moment, and a tick at its minimum: a peak is never smoothed away. The
// run's peak is marked; a chosen moment is drawn as a line. Zoomed in until every allocation alive in
// the span can have a bar a few pixels tall, it draws lifetime bars instead (one per allocation, or
// per tensor of a pooled segment, coloured by category, from allocation to free), unless asked for
// the stacked chart; the whole run (or half of it and more) is always the stacked chart.
#pragma once

#include <QPainter>
#include <QRect>

#include <optional>
#include <utility>

#include "allocation_lanes.h"

#include "palette.h"
#include "time_axis.h"

namespace tbdprof::viewer {

class TraceSession;

struct MemoryPaintOptions {
    std::optional<int64_t> moment;                    // a chosen moment, drawn as a line
    bool lifetime_bars = false;                       // bars when zoomed in far enough (else always the stacked chart)
    std::optional<std::pair<size_t, size_t>> chosen;  // (allocation, subrange) of the chosen bar
};

class MemoryPainter {
public:
    static constexpr int kMinBarHeight = 6;  // bars are drawn only when each gets this many pixels
    static constexpr int kMaxBarHeight = 20;
    static constexpr size_t kMaxBars = 4096;  // more alive in the span: the stacked chart

    void paint(QPainter& painter, const QRect& area, const TraceSession& session, const TimeAxis& axis,
               const ViewerColors& colors, const MemoryPaintOptions& options = {});
    static QRect plotArea(const QRect& area);
    // What the last paint drew as bars (empty when it drew the stacked chart), for hit testing.
    bool drewBars() const { return drew_bars_; }
    const LifetimeLayout& bars() const { return layout_; }
    int barHeight() const { return bar_height_; }

private:
    void paintBars(QPainter& painter, const QRect& plot, const TimeAxis& axis, const ViewerColors& colors,
                   const MemoryPaintOptions& options);
    LifetimeLayout layout_;
    bool drew_bars_ = false;
    int bar_height_ = 0;
};

}  // namespace tbdprof::viewer
