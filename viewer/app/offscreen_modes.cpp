#include "offscreen_modes.h"

#include <sys/resource.h>

#include <QElapsedTimer>
#include <QEventLoop>
#include <QImage>
#include <QPainter>
#include <QTimer>

#include <algorithm>
#include <cstdio>

#include <tbdprof/trace/output_file.h>

#include "main_window.h"
#include "memory_widget.h"
#include "timeline_widget.h"
#include "trace_session.h"
#include "trace_view.h"

namespace tbdprof::viewer {
namespace {

// Runs the event loop until every session has finished loading (or failed).
void wait_for(const std::vector<TraceSession*>& sessions) {
    QEventLoop loop;
    auto all_done = [&] { return std::ranges::none_of(sessions, &TraceSession::busy); };
    for (TraceSession* s : sessions)
        QObject::connect(s, &TraceSession::finished, &loop, [&] {
            if (all_done()) loop.quit();
        });
    if (!all_done()) loop.exec();
}

int64_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

}  // namespace

QString screenshot_target_problem(const QString& out, const QStringList& traces, bool force) {
    if (!out.endsWith(".png", Qt::CaseInsensitive) && !out.endsWith(".svg", Qt::CaseInsensitive))
        return QString("--screenshot %1: the view is saved as .png or .svg; name the file so").arg(out);
    trace::OutputRules rules{.force = force, .inputs = {}};
    for (const QString& t : traces) rules.inputs.push_back(t.toStdString());
    return QString::fromStdString(trace::check_output_target(out.toStdString(), rules));
}

int run_screenshot(const QStringList& traces, const QString& out, const QString& view, QSize size, int iteration,
                   bool force, const QString& whatif) {
    MainWindow window(false);
    window.resize(size);
    window.setWhatIf(whatif);
    window.openFiles(traces);
    wait_for(window.sessions());
    if (!window.errors().isEmpty()) {
        for (const QString& e : window.errors()) std::fprintf(stderr, "tbdprof-viewer: %s\n", qPrintable(e));
        return 2;
    }
    window.setView(view);
    TraceView* trace_view = window.viewAt(0);
    if (iteration >= 0) {
        const std::vector<Band>& iterations = trace_view->session()->overview()->iterations;
        if (static_cast<size_t>(iteration) >= iterations.size()) {
            std::fprintf(stderr, "tbdprof-viewer: --iteration %d: the trace has %zu iterations (0 to %zu)\n", iteration,
                         iterations.size(), iterations.size() ? iterations.size() - 1 : 0);
            return 2;
        }
        const Band& band = iterations[static_cast<size_t>(iteration)];
        trace_view->axis().set_run(trace_view->session()->durationNs(), std::max(1, size.width() - kLabelWidth));
        trace_view->axis().fit(static_cast<double>(band.begin), static_cast<double>(band.end));
    }
    QString error;
    if (!trace_view->exportView(out, size, &error, force)) {
        std::fprintf(stderr, "tbdprof-viewer: %s\n", qPrintable(error));
        return 2;
    }
    return 0;
}

int run_benchmark(const QString& trace, QSize size) {
    QElapsedTimer clock;
    clock.start();
    TraceSession session(trace);
    MainWindow window(false);
    window.resize(size);
    QImage frame(size, QImage::Format_ARGB32_Premultiplied);
    TraceView* view = nullptr;
    double first_paint = -1, full_detail = -1;
    auto render = [&] {
        QPainter painter(&frame);
        view->paintView("timeline", painter, QRect(QPoint(0, 0), size));
    };
    window.openFiles({trace});
    view = window.viewAt(0);
    TraceSession* s = view->session();
    QObject::connect(s, &TraceSession::overviewReady, [&] {
        render();
        first_paint = static_cast<double>(clock.nsecsElapsed()) * 1e-9;
    });
    QObject::connect(s, &TraceSession::kernelsReady, [&] {
        render();
        full_detail = static_cast<double>(clock.nsecsElapsed()) * 1e-9;
    });
    wait_for(window.sessions());
    if (!window.errors().isEmpty()) {
        std::fprintf(stderr, "tbdprof-viewer: %s\n", qPrintable(window.errors().first()));
        return 2;
    }
    // Scripted pan and zoom across the whole run: zoom in step by step to about 1/4000 of the run
    // at its middle, pan from the start to the end at that depth, zoom out again.
    TimeAxis& axis = view->axis();
    axis.set_run(s->durationNs(), size.width() - kLabelWidth);
    int frames = 0;
    QElapsedTimer motion;
    motion.start();
    for (int i = 0; i < 40; ++i, ++frames) {
        axis.zoom(1.23, axis.width() / 2.0);
        render();
    }
    axis.fit(0, axis.end_trace_ns() - axis.begin_trace_ns(), false);
    const double span = axis.end_trace_ns() - axis.begin_trace_ns();
    const int pans = 120;
    for (int i = 0; i < pans; ++i, ++frames) {
        axis.fit(static_cast<double>(s->durationNs()) * i / pans,
                 static_cast<double>(s->durationNs()) * i / pans + span, false);
        render();
    }
    for (int i = 0; i < 40; ++i, ++frames) {
        axis.zoom(1 / 1.23, axis.width() / 2.0);
        render();
    }
    const double fps = frames / (static_cast<double>(motion.nsecsElapsed()) * 1e-9);
    const TimelineStats stats = view->timeline()->timelinePainter().stats();
    size_t kernels = 0;
    if (s->kernels()) {
        for (const TimelineRow& row : s->kernels()->rows)
            kernels += row.kind == RowKind::kernels ? row.items.size() : 0;
    }
    std::printf(
        "{\"trace\": \"%s\", \"kernels\": %zu, \"rows\": %d, \"first_paint_s\": %.3f, \"full_detail_s\": %.3f, "
        "\"fps\": %.1f, \"frames\": %d, \"peak_rss_bytes\": %lld}\n",
        qPrintable(trace), kernels, stats.rows, first_paint, full_detail, fps, frames,
        static_cast<long long>(peak_rss_bytes()));
    return 0;
}

}  // namespace tbdprof::viewer
