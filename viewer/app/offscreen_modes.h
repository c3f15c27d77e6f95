// The viewer without a screen: --screenshot (one view of the traces into PNG or SVG) and
// --benchmark (load and pan/zoom timings on one trace, one JSON line).
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

namespace tbdprof::viewer {

// iteration >= 0: the timeline and memory views show that iteration (0-based) of the first trace.
// `force`: an existing `out` may be replaced (never one of `traces`).
// `whatif`: what-if options; the memory view draws that scenario's predicted timeline too.
int run_screenshot(const QStringList& traces, const QString& out, const QString& view, QSize size, int iteration = -1,
                   bool force = false, const QString& whatif = {});
// Empty when `out` may be written as a screenshot of `traces` (a .png or .svg name that
// trace/output_file.h's rules allow); otherwise the sentence saying why not. Checked before loading.
QString screenshot_target_problem(const QString& out, const QStringList& traces, bool force);
int run_benchmark(const QString& trace, QSize size);

}  // namespace tbdprof::viewer
