// The viewer without a screen: --screenshot (one view of the traces into PNG or SVG) and
// --benchmark (load and pan/zoom timings on one trace, one JSON line).
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

namespace tbdprof::viewer {

// iteration >= 0: the timeline and memory views show that iteration (0-based) of the first trace.
int run_screenshot(const QStringList& traces, const QString& out, const QString& view, QSize size, int iteration = -1);
int run_benchmark(const QString& trace, QSize size);

}  // namespace tbdprof::viewer
