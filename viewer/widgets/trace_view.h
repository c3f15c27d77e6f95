// One open trace's views in tabs: Summary, Timeline (with the details pane), Memory (with the
// allocations live at a chosen moment and their call stacks), Kernels, Compare. Timeline and Memory
// share one time axis, so they show the same span at the same zoom.
#pragma once

#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

#include "time_axis.h"

class QLineEdit;
class QSortFilterProxyModel;
class QSplitter;
class QTabWidget;
class QTableView;
class QTextBrowser;

namespace tbdprof::viewer {

class AllocationsModel;
class ChartWidget;
class ChangeHighlightProxy;
class CompareModel;
class IterationCompareModel;
class KernelStatsModel;
class MemoryWidget;
class SummaryModel;
class TimelineWidget;
class TraceSession;
struct Selection;

class TraceView : public QWidget {
    Q_OBJECT
public:
    using SessionsFn = std::function<std::vector<const TraceSession*>()>;
    static const QStringList& viewNames();  // summary, timeline, memory, kernels, compare

    TraceView(TraceSession* session, SessionsFn all_sessions, QWidget* parent = nullptr);
    ~TraceView() override;
    TraceSession* session() const { return session_; }
    void setView(const QString& name);
    QString viewName() const;
    // The current view at `size` into a PNG or an SVG (by the suffix, .png or .svg only), with the
    // same painting code as on screen, written by trace/output_file.h's rules: an existing file is
    // replaced only with `force` (the export dialog has asked), never an open trace.
    bool exportView(const QString& path, QSize size, QString* error = nullptr, bool force = true);
    void paintView(const QString& name, QPainter& painter, const QRect& area);
    void refreshCompare();
    QByteArray saveLayout() const;
    void restoreLayout(const QByteArray& state);

    TimelineWidget* timeline() const { return timeline_; }
    MemoryWidget* memory() const { return memory_; }
    QTextBrowser* details() const { return details_; }
    QTableView* kernelTable() const { return kernel_table_; }
    QTableView* iterationTable() const { return iteration_table_; }
    TimeAxis& axis() { return axis_; }

private:
    QWidget* buildSummary();
    QWidget* buildTimeline();
    QWidget* buildMemory();
    QWidget* buildKernels();
    QWidget* buildCompare();
    void onOverview();
    void onReport();
    void onKernels();
    void showSelection(const Selection& selection);
    void findNext();
    void syncAxis();

    TraceSession* session_;
    SessionsFn all_sessions_;
    TimeAxis axis_;
    QTabWidget* tabs_ = nullptr;
    ChartWidget* summary_chart_ = nullptr;
    ChartWidget* compare_chart_ = nullptr;
    TimelineWidget* timeline_ = nullptr;
    MemoryWidget* memory_ = nullptr;
    QTextBrowser* details_ = nullptr;
    QTextBrowser* stack_ = nullptr;
    QLineEdit* search_ = nullptr;
    QLineEdit* kernel_filter_ = nullptr;
    QTableView* kernel_table_ = nullptr;
    QTableView* allocations_table_ = nullptr;
    std::vector<QSplitter*> splitters_;
    std::unique_ptr<SummaryModel> summary_model_;
    std::unique_ptr<KernelStatsModel> kernel_model_;
    std::unique_ptr<QSortFilterProxyModel> kernel_proxy_;
    std::unique_ptr<AllocationsModel> allocations_model_;
    std::unique_ptr<CompareModel> compare_model_;
    std::unique_ptr<IterationCompareModel> iteration_model_;
    std::unique_ptr<ChangeHighlightProxy> iteration_proxy_;
    QTableView* iteration_table_ = nullptr;
};

}  // namespace tbdprof::viewer
