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
#include <optional>
#include <string>

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

// The command line as parsed.
struct ViewerOptions {
    QString screenshot, view = "summary", palette, whatif;
    bool benchmark = false, force = false;
    QSize size{1400, 800};
    int iteration = -1;
    QStringList traces;
};

// --size's WxH, within the sizes a screenshot can be drawn at; the problem, empty when none.
std::string parse_size(const QString& text, QSize& size) {
    const auto match = QRegularExpression("^(\\d+)x(\\d+)$").match(text);
    if (!match.hasMatch()) return "--size takes WxH, for example 1600x900";
    size = QSize(match.captured(1).toInt(), match.captured(2).toInt());
    if (size.width() < 400 || size.height() < 200 || size.width() > 16384 || size.height() > 16384)
        return "--size must be between 400x200 and 16384x16384";
    return {};
}

// Fills options from argv; an exit status when the program should stop here (help, bad usage).
std::optional<int> parse_arguments(int argc, char** argv, ViewerOptions& options) {
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
            options.screenshot = value("--screenshot");
        else if (arg == "--whatif") {
            options.whatif = value("--whatif");
            tbdprof::analyzer::WhatIfOptions parsed;  // checked before anything is loaded
            if (const std::string error = tbdprof::analyzer::parse_whatif_words(options.whatif.toStdString(), parsed);
                !error.empty())
                return usage(error.c_str());
        } else if (arg == "--view")
            options.view = value("--view");
        else if (arg == "--iteration") {
            bool ok = false;
            options.iteration = value("--iteration").toInt(&ok);
            if (!ok || options.iteration < 0) return usage("--iteration takes an iteration number (0, 1, ...)");
        } else if (arg == "--palette")
            options.palette = value("--palette");
        else if (arg == "--size") {
            if (const std::string error = parse_size(value("--size"), options.size); !error.empty())
                return usage(error.c_str());
        } else if (arg == "--benchmark")
            options.benchmark = true;
        else if (arg == "--force")
            options.force = true;
        else if (arg == "-h" || arg == "--help")
            return usage(nullptr), 0;
        else if (arg.startsWith("--"))
            return usage(("unknown option " + arg.toStdString()).c_str());
        else
            options.traces << arg;
    }
    if (!tbdprof::viewer::TraceView::viewNames().contains(options.view))
        return usage("--view is one of summary, timeline, memory, kernels, compare");
    return std::nullopt;
}

// Offscreen runs (CI, scripts) have no session: Qt's note that XDG_RUNTIME_DIR is unset is noise.
void silence_missing_session_note() {
    static QtMessageHandler previous = nullptr;
    previous = qInstallMessageHandler([](QtMsgType type, const QMessageLogContext& context, const QString& message) {
        if (message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR"))) return;
        if (previous) previous(type, context, message);
    });
}

// The desktop's palette by default; --palette forces one (to check both in screenshots). False for
// a palette name it does not know.
bool apply_palette(const QString& palette) {
    if (palette.isEmpty()) return true;
    if (palette != "dark" && palette != "light") return false;
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    if (palette == "light") return true;
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
    return true;
}

// --screenshot: one view of the traces drawn offscreen into a file.
int screenshot(const ViewerOptions& options) {
    if (options.traces.isEmpty()) return usage("--screenshot needs at least one trace");
    // Before anything is loaded: `--screenshot a.sqlite b.sqlite` names a trace as the output.
    if (const QString problem =
            tbdprof::viewer::screenshot_target_problem(options.screenshot, options.traces, options.force);
        !problem.isEmpty()) {
        std::fprintf(stderr, "tbdprof-viewer: %s\n", qPrintable(problem));
        return 2;
    }
    return tbdprof::viewer::run_screenshot(options.traces, options.screenshot, options.view, options.size,
                                           options.iteration, options.force, options.whatif);
}

}  // namespace

int main(int argc, char** argv) {
    ViewerOptions options;
    if (const std::optional<int> status = parse_arguments(argc, argv, options)) return *status;
    const bool offscreen = options.benchmark || !options.screenshot.isEmpty();
    if (offscreen) silence_missing_session_note();
    // Without a screen: the offscreen platform unless the caller chose one.
    if (offscreen && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName("tbdprof");
    QApplication::setApplicationName("tbdprof-viewer");
    if (!apply_palette(options.palette)) return usage("--palette is light or dark");
    if (options.benchmark) {
        if (options.traces.size() != 1) return usage("--benchmark takes one trace");
        return tbdprof::viewer::run_benchmark(options.traces.first(), options.size);
    }
    if (!options.screenshot.isEmpty()) return screenshot(options);
    tbdprof::viewer::MainWindow window;
    window.setWhatIf(options.whatif);
    window.show();
    window.openFiles(options.traces);
    return app.exec();
}
