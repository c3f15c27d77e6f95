// The Compare view's iteration charts: each trace's iteration times, and each trace's memory peak
// per iteration, on one common iteration axis (iteration 0 of every trace at the same x), so that a
// slower or hungrier run, or one whose iterations drift, shows at a glance.
#pragma once

#include <QPainter>
#include <QRect>

#include <vector>

#include "iteration_compare.h"
#include "palette.h"

namespace tbdprof::viewer {

// A colour per trace (its place in the list), distinct from its neighbours in light and dark.
QColor trace_color(size_t index, const ViewerColors& colors);

// The model's figures as a table, a column per trace, notable changes tinted; returns the y below it.
int paint_iteration_figures(QPainter& painter, const QRect& area, const IterationCompareModel& model,
                            const ViewerColors& colors);

void paint_iteration_charts(QPainter& painter, const QRect& area, const std::vector<TraceIterations>& traces,
                            const ViewerColors& colors);

}  // namespace tbdprof::viewer
