// tbdprof-viewer [TRACE...]                    the window
// tbdprof-viewer --screenshot OUT.png|OUT.svg [--force] [--view summary|timeline|memory|kernels|compare]
//                [--size WxH] [--palette light|dark] [--iteration N] TRACE...   one view, offscreen
//                (--force: replace an existing OUT; the traces themselves are never replaced)
//                (--iteration: timeline and memory zoomed onto iteration N, counted from 0)
// --whatif "OPTIONS" (window and screenshot): the Memory view also draws the predicted timeline of the
//                `tbdprof whatif TRACE OPTIONS` scenario with every change applied (docs/viewer.md)
// tbdprof-viewer --benchmark TRACE [--size WxH]  load and pan/zoom timings, one JSON line
#include <QApplication>
#include <QPalette>
#include <QRegularExpression>
#include <QStyleFactory>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "main_window.h"
#include "offscreen_modes.h"
#include "tbdprof/analyzer/whatif.h"
#include "trace_view.h"

namespace {

int usage(const char* problem) {
    if (problem) std::fprintf(stderr, "tbdprof-viewer: %s\n", problem);
    std::fprintf(
        stderr,
        "usage: tbdprof-viewer [TRACE...]\n"
        "       tbdprof-viewer --screenshot OUT.png|OUT.svg [--force] [--view summary|timeline|memory|kernels|compare] "
        "[--size WxH] [--palette light|dark] [--iteration N] [--whatif \"OPTIONS\"] TRACE...\n"
        "       tbdprof-viewer --benchmark TRACE [--size WxH]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    QString screenshot, view = "summary", palette, whatif;
    bool benchmark = false, force = false;
    QSize size(1400, 800);
    int iteration = -1;
    QStringList traces;
    for (int i = 1; i < argc; ++i) {
        const QString arg = QString::fromLocal8Bit(argv[i]);
        auto value = [&](const char* option) -> QString {
            if (i + 1 >= argc) {
                usage((std::string(option) + " needs a value").c_str());
                std::exit(2);
            }
            return QString::fromLocal8Bit(argv[++i]);
        };
        if (arg == "--screenshot")
            screenshot = value("--screenshot");
        else if (arg == "--whatif") {
            whatif = value("--whatif");
            tbdprof::analyzer::WhatIfOptions parsed;  // checked before anything is loaded
            if (const std::string error = tbdprof::analyzer::parse_whatif_words(whatif.toStdString(), parsed);
                !error.empty())
                return usage(error.c_str());
        } else if (arg == "--view")
            view = value("--view");
        else if (arg == "--iteration") {
            bool ok = false;
            iteration = value("--iteration").toInt(&ok);
            if (!ok || iteration < 0) return usage("--iteration takes an iteration number (0, 1, ...)");
        } else if (arg == "--palette")
            palette = value("--palette");
        else if (arg == "--size") {
            const auto match = QRegularExpression("^(\\d+)x(\\d+)$").match(value("--size"));
            if (!match.hasMatch()) return usage("--size takes WxH, for example 1600x900");
            size = QSize(match.captured(1).toInt(), match.captured(2).toInt());
            if (size.width() < 400 || size.height() < 200 || size.width() > 16384 || size.height() > 16384) {
                return usage("--size must be between 400x200 and 16384x16384");
            }
        } else if (arg == "--benchmark")
            benchmark = true;
        else if (arg == "--force")
            force = true;
        else if (arg == "-h" || arg == "--help")
            return usage(nullptr), 0;
        else if (arg.startsWith("--"))
            return usage(("unknown option " + arg.toStdString()).c_str());
        else
            traces << arg;
    }
    if (!tbdprof::viewer::TraceView::viewNames().contains(view)) {
        return usage("--view is one of summary, timeline, memory, kernels, compare");
    }
    const bool offscreen = benchmark || !screenshot.isEmpty();
    // Offscreen runs (CI, scripts) have no session: Qt's note that XDG_RUNTIME_DIR is unset is noise.
    if (offscreen) {
        static QtMessageHandler previous = nullptr;
        previous =
            qInstallMessageHandler([](QtMsgType type, const QMessageLogContext& context, const QString& message) {
                if (message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR"))) return;
                if (previous) previous(type, context, message);
            });
    }
    // Without a screen: the offscreen platform unless the caller chose one.
    if (offscreen && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName("tbdprof");
    QApplication::setApplicationName("tbdprof-viewer");
    // The desktop's palette by default; --palette forces one (to check both in screenshots).
    if (palette == "dark" || palette == "light") {
        QApplication::setStyle(QStyleFactory::create("Fusion"));
        if (palette == "dark") {
            QPalette dark;
            dark.setColor(QPalette::Window, QColor(45, 45, 48));
            dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
            dark.setColor(QPalette::Base, QColor(30, 30, 32));
            dark.setColor(QPalette::AlternateBase, QColor(45, 45, 48));
            dark.setColor(QPalette::Text, QColor(230, 230, 230));
            dark.setColor(QPalette::Button, QColor(50, 50, 54));
            dark.setColor(QPalette::ButtonText, QColor(230, 230, 230));
            dark.setColor(QPalette::Highlight, QColor(80, 130, 200));
            dark.setColor(QPalette::HighlightedText, Qt::white);
            QApplication::setPalette(dark);
        }
    } else if (!palette.isEmpty()) {
        return usage("--palette is light or dark");
    }
    if (benchmark) {
        if (traces.size() != 1) return usage("--benchmark takes one trace");
        return tbdprof::viewer::run_benchmark(traces.first(), size);
    }
    if (!screenshot.isEmpty()) {
        if (traces.isEmpty()) return usage("--screenshot needs at least one trace");
        // Before anything is loaded: `--screenshot a.sqlite b.sqlite` names a trace as the output.
        if (const QString problem = tbdprof::viewer::screenshot_target_problem(screenshot, traces, force);
            !problem.isEmpty()) {
            std::fprintf(stderr, "tbdprof-viewer: %s\n", qPrintable(problem));
            return 2;
        }
        return tbdprof::viewer::run_screenshot(traces, screenshot, view, size, iteration, force, whatif);
    }
    tbdprof::viewer::MainWindow window;
    window.setWhatIf(whatif);
    window.show();
    window.openFiles(traces);
    return app.exec();
}
