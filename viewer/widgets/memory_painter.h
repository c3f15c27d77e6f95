// Paints live device memory over time, stacked by category, on the timeline's time axis (same
// left margin, same zoom). Each pixel column shows the exact maximum of its time span with the
// category split at that moment, and a tick at its minimum: a peak is never smoothed away. The
// run's peak is marked; a chosen moment is drawn as a line.
#pragma once

#include <QPainter>
#include <QRect>

#include <optional>

#include "palette.h"
#include "time_axis.h"

namespace tbdprof::viewer {

class TraceSession;

class MemoryPainter {
public:
    void paint(QPainter& painter, const QRect& area, const TraceSession& session, const TimeAxis& axis,
               const ViewerColors& colors, std::optional<int64_t> moment) const;
    static QRect plotArea(const QRect& area);
};

}  // namespace tbdprof::viewer
