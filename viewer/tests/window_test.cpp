// The real window, driven like a person would under Xvfb: open a trace, zoom the timeline with the
// keyboard, click a kernel, read its details in the side pane.
#include <QApplication>
#include <QCheckBox>
#include <QCursor>
#include <QEventLoop>
#include <QFile>
#include <QMouseEvent>
#include <QStandardPaths>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>

#include <QTableView>

#include "main_window.h"
#include "memory_widget.h"
#include "timeline_widget.h"
#include "trace_session.h"
#include "trace_view.h"

using namespace tbdprof::viewer;

class WindowTest : public QObject {
    Q_OBJECT
private slots:
    void openZoomSelect();
};

void WindowTest::openZoomSelect() {
    const QString trace = qEnvironmentVariable("TBD_VIEWER_SAMPLES") + "/mlp.sqlite";
    if (!QFile::exists(trace)) QSKIP("no recorded sample trace (TBD_VIEWER_SAMPLES)");
    if (QGuiApplication::platformName() == "offscreen") QSKIP("needs a display (run under xvfb-run)");
    QStandardPaths::setTestModeEnabled(true);  // QSettings away from the user's own
    MainWindow window;
    window.resize(1300, 760);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.openFiles({trace});
    TraceView* view = window.currentView();
    QVERIFY(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->session()->state() == TraceSession::State::ready, 60000);
    window.setView("timeline");
    TimelineWidget* timeline = view->timeline();
    QTRY_VERIFY(timeline->isVisible());
    timeline->setFocus();
    // The view over the kernels, the pointer off the widget: W then zooms around the kernels' middle,
    // not around wherever the display's pointer is or into the run's tail after the last kernel (a
    // loaded machine stretches the recorded program's exit, and the run with it).
    const std::vector<const TimelineRow*> rows = view->session()->rows();
    QVERIFY(!rows.empty() && rows[0]->kind == RowKind::kernels && rows[0]->items.size() > 0);
    const ItemRow& items = rows[0]->items;
    QCursor::setPos(window.mapToGlobal(QPoint(-50, -50)));
    view->axis().fit(static_cast<double>(items.start(0)), static_cast<double>(items.end(items.size() - 1)));

    // W zooms in around the middle, S out again, A/D pan.
    const double full = view->axis().ns_per_px();
    for (int i = 0; i < 3; ++i) QTest::keyClick(timeline, Qt::Key_W);
    QVERIFY(view->axis().ns_per_px() < full / 3);
    const double begin = view->axis().begin_trace_ns();
    QTest::keyClick(timeline, Qt::Key_D);
    QVERIFY(view->axis().begin_trace_ns() > begin);
    QTest::keyClick(timeline, Qt::Key_A);
    QVERIFY(std::abs(view->axis().begin_trace_ns() - begin) < 1e-6 * full * 1000 + 1);

    // A kernel in view, clicked in its middle.
    size_t pick = items.first_starting_at(static_cast<int64_t>(view->axis().begin_trace_ns()));
    QVERIFY(pick < items.size());
    const double mid = (static_cast<double>(items.start(pick)) + static_cast<double>(items.end(pick))) / 2;
    if (view->axis().x_of(mid) > view->axis().width())
        view->axis().fit(static_cast<double>(items.start(pick)), static_cast<double>(items.end(pick)));
    const QPoint at(kLabelWidth + static_cast<int>(view->axis().x_of(mid)),
                    TimelinePainter::rowTop(*view->session(), 0) + kRowHeight / 2);
    QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
    QVERIFY(timeline->selection().valid());
    QCOMPARE(timeline->selection().row, 0);
    const QString details = view->details()->toPlainText();
    const QString name = QString::fromStdString(rows[0]->label_of(timeline->selection().item));
    QVERIFY2(details.contains(name), qPrintable(details));
    QVERIFY(details.contains("grid"));
    QVERIFY(details.contains("duration"));
    // '.' steps to the next kernel of the row.
    const size_t first = timeline->selection().item;
    QTest::keyClick(timeline, Qt::Key_Period);
    QCOMPARE(timeline->selection().item, first + 1);
    // F fits the selection: zoomed in to about its length.
    QTest::keyClick(timeline, Qt::Key_F);
    QVERIFY(view->axis().end_trace_ns() - view->axis().begin_trace_ns() <
            2.0 * static_cast<double>(items.duration(first + 1)) + 1000);

    // Shift+drag over the run: statistics of what lies in it, with the kernel rows' counts.
    view->axis().fit_run();
    const int y_row = TimelinePainter::rowTop(*view->session(), 0) + kRowHeight / 2;
    QTest::mousePress(timeline, Qt::LeftButton, Qt::ShiftModifier, QPoint(kLabelWidth + 1, y_row));
    QMouseEvent move(QEvent::MouseMove, QPointF(timeline->width() - 2, y_row),
                     timeline->mapToGlobal(QPointF(timeline->width() - 2, y_row)), Qt::LeftButton, Qt::LeftButton,
                     Qt::ShiftModifier);
    QApplication::sendEvent(timeline, &move);
    QTest::mouseRelease(timeline, Qt::LeftButton, Qt::ShiftModifier, QPoint(timeline->width() - 2, y_row));
    const QString range = view->details()->toPlainText();
    QVERIFY2(range.contains("Range"), qPrintable(range));
    QVERIFY(range.contains(QString::fromStdString(rows[0]->title)));
    QVERIFY(range.contains(QString::number(items.size())));  // every kernel of the row lies in the run

    // Memory: a click at the peak lists the allocations live then; picking one shows its stack.
    window.setView("memory");
    MemoryWidget* memory = view->memory();
    QTRY_VERIFY(memory->isVisible());
    view->axis().fit_run();
    const auto& report = view->session()->report()->report;
    const int peak_x =
        kLabelWidth + static_cast<int>(view->axis().x_of(static_cast<double>(report.memory.peak_trace_ns)));
    QTest::mouseClick(memory, Qt::LeftButton, {}, QPoint(peak_x, memory->height() / 2));
    QTableView* table = view->findChild<QTableView*>("allocations");
    QVERIFY(table);
    QVERIFY(table->model()->rowCount() > 0);
    table->selectRow(0);
    QTextBrowser* stack = view->findChild<QTextBrowser*>("allocation details");
    QVERIFY(stack);
    QTRY_VERIFY(stack->toPlainText().contains("Call stack"));
    QVERIFY(stack->toPlainText().contains("category"));

    // Zoomed onto one iteration, the chart draws lifetime bars; clicking one shows that allocation.
    const std::vector<Band>& iterations = view->session()->overview()->iterations;
    QVERIFY(iterations.size() >= 3);
    view->axis().fit(static_cast<double>(iterations[2].begin), static_cast<double>(iterations[2].end));
    memory->repaint();
    QVERIFY(memory->memoryPainter().drewBars());
    const LifetimeBar& bar = memory->memoryPainter().bars().bars.front();
    const QRect plot = MemoryPainter::plotArea(memory->rect());
    const double bar_x0 = std::max(0.0, view->axis().x_of(static_cast<double>(bar.begin_trace_ns)));
    const double bar_x1 =
        std::min<double>(view->axis().width(), view->axis().x_of(static_cast<double>(bar.end_trace_ns)));
    const QPoint on_bar(kLabelWidth + static_cast<int>((bar_x0 + bar_x1) / 2),
                        plot.top() + bar.lane * memory->memoryPainter().barHeight() + 2);
    QTest::mouseClick(memory, Qt::LeftButton, {}, on_bar);
    const AllocationInfo& chosen = view->session()->overview()->allocations[bar.allocation];
    const QString bar_details = stack->toPlainText();
    QVERIFY2(bar_details.contains(QString("#%1").arg(chosen.id)), qPrintable(bar_details));
    QVERIFY(bar_details.contains(QString::fromUtf8(tbdprof::analyzer::category_name(bar.category))));
    QVERIFY(bar_details.contains("lifetime"));
    QVERIFY(bar_details.contains("Call stack"));
    // The toggle brings the stacked chart back at the same zoom.
    QCheckBox* toggle = view->findChild<QCheckBox*>("lifetime bars");
    QVERIFY(toggle && toggle->isChecked());
    toggle->click();
    memory->repaint();
    QVERIFY(!memory->memoryPainter().drewBars());
    toggle->click();
    // TBD_VIEWER_GRAB=DIR keeps pictures of the window for a person to look at.
    if (const QString grab = qEnvironmentVariable("TBD_VIEWER_GRAB"); !grab.isEmpty()) {
        window.grab().save(grab + "/window-memory.png");
        window.setView("timeline");
        QTest::qWait(50);
        window.grab().save(grab + "/window-timeline.png");
    }
}

QTEST_MAIN(WindowTest)
#include "window_test.moc"
