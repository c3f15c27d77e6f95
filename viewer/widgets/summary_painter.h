// Paints the Summary view: the report's headline figures as bars (GPU utilization per device, FP32
// throughput and utilization, peak memory split by category, iterations) and its notes.
#pragma once

#include <QPainter>
#include <QRect>

#include <vector>

#include "palette.h"

namespace tbdprof::viewer {

class TraceSession;

void paint_summary(QPainter& painter, const QRect& area, const TraceSession& session, const ViewerColors& colors);
// Several traces: memory at peak by category (one scale), GPU and FP32 utilization, iteration time.
void paint_compare(QPainter& painter, const QRect& area, const std::vector<const TraceSession*>& sessions,
                   const ViewerColors& colors);

}  // namespace tbdprof::viewer
