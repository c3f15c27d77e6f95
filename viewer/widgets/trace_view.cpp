#include "trace_view.h"

#include <QBuffer>
#include <QCheckBox>
#include <QDataStream>
#include <QFileInfo>
#include <QHeaderView>
#include <QIdentityProxyModel>
#include <QImage>
#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QPainter>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <cmath>
#include <string>

#include <tbdprof/trace/output_file.h>

#include "allocations_model.h"
#include "chart_widget.h"
#include "details_text.h"
#include "facts_models.h"
#include "iteration_compare.h"
#include "kernel_stats_model.h"
#include "memory_widget.h"
#include "summary_painter.h"
#include "timeline_widget.h"
#include "trace_session.h"

namespace tbdprof::viewer {

// Tints a cell whose figure differs from the first trace's by kNotableChange or more.
class ChangeHighlightProxy : public QIdentityProxyModel {
public:
    QVariant data(const QModelIndex& index, int role) const override {
        if (role != Qt::BackgroundRole) return QIdentityProxyModel::data(index, role);
        const QVariant change = QIdentityProxyModel::data(index, IterationCompareModel::ChangeRole);
        if (!change.isValid() || std::fabs(change.toDouble()) < kNotableChange) return {};
        return QBrush(change.toDouble() > 0 ? QColor(230, 80, 60, 80) : QColor(60, 170, 90, 80));
    }
};

namespace {

// Two panes side by side (or one above the other) with these stretch factors; kept in `remembered`
// in creation order, which saveLayout's stored state follows.
QSplitter* split(std::vector<QSplitter*>& remembered, Qt::Orientation orientation, QWidget* first, QWidget* second,
                 int first_stretch = 0, int second_stretch = 0) {
    auto* splitter = new QSplitter(orientation);
    splitter->addWidget(first);
    splitter->addWidget(second);
    splitter->setStretchFactor(0, first_stretch);
    splitter->setStretchFactor(1, second_stretch);
    remembered.push_back(splitter);
    return splitter;
}

}  // namespace

const QStringList& TraceView::viewNames() {
    static const QStringList names{"summary", "timeline", "memory", "kernels", "compare"};
    return names;
}

TraceView::TraceView(TraceSession* session, SessionsFn all_sessions, QWidget* parent)
    : QWidget(parent), session_(session), all_sessions_(std::move(all_sessions)) {
    summary_model_ = std::make_unique<SummaryModel>();
    kernel_model_ = std::make_unique<KernelStatsModel>();
    kernel_proxy_ = std::make_unique<QSortFilterProxyModel>();
    kernel_proxy_->setSourceModel(kernel_model_.get());
    kernel_proxy_->setSortRole(KernelStatsModel::SortRole);
    kernel_proxy_->setFilterKeyColumn(KernelStatsModel::Name);
    kernel_proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    allocations_model_ = std::make_unique<AllocationsModel>();
    compare_model_ = std::make_unique<CompareModel>();
    iteration_model_ = std::make_unique<IterationCompareModel>();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    tabs_ = new QTabWidget(this);
    tabs_->addTab(buildSummary(), tr("Summary"));
    tabs_->addTab(buildTimeline(), tr("Timeline"));
    tabs_->addTab(buildMemory(), tr("Memory"));
    tabs_->addTab(buildKernels(), tr("Kernels"));
    tabs_->addTab(buildCompare(), tr("Compare"));
    layout->addWidget(tabs_);
    connect(tabs_, &QTabWidget::currentChanged, this, [this] {
        if (viewName() == "compare") refreshCompare();
    });
    connect(session_, &TraceSession::overviewReady, this, &TraceView::onOverview);
    connect(session_, &TraceSession::reportReady, this, &TraceView::onReport);
    connect(session_, &TraceSession::kernelsReady, this, &TraceView::onKernels);
    connect(session_, &TraceSession::failed, this, [this] { summary_chart_->update(); });
}

TraceView::~TraceView() = default;

QWidget* TraceView::buildSummary() {
    summary_chart_ = new ChartWidget(
        [this](QPainter& p, const QRect& r, const ViewerColors& c) { paint_summary(p, r, *session_, c); });
    auto* table = new QTableView;
    table->setModel(summary_model_.get());
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setWordWrap(true);
    return split(splitters_, Qt::Horizontal, summary_chart_, table, 3, 2);
}

QWidget* TraceView::buildTimeline() {
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(2, 2, 2, 2);
    auto* bar = new QHBoxLayout;
    search_ = new QLineEdit;
    search_->setPlaceholderText(tr("find by name (Enter: next match)"));
    search_->setClearButtonEnabled(true);
    auto* back = new QPushButton(tr("Back"));
    auto* reset = new QPushButton(tr("Reset zoom"));
    auto* keys =
        new QLabel(tr("wheel/W/S zoom · drag/A/D pan · Shift+drag range · F fit · ./, next/previous · click selects"));
    keys->setEnabled(false);
    bar->addWidget(search_, 2);
    bar->addWidget(back);
    bar->addWidget(reset);
    bar->addWidget(keys, 3);
    layout->addLayout(bar);
    timeline_ = new TimelineWidget(session_, &axis_);
    details_ = new QTextBrowser;
    details_->setObjectName("details");
    details_->setMinimumWidth(300);  // room for a kernel's name, geometry and argument table
    details_->setPlaceholderText(tr("Select an item on the timeline to see its details."));
    layout->addWidget(split(splitters_, Qt::Horizontal, timeline_, details_, 4, 1), 1);
    connect(timeline_, &TimelineWidget::selectionChanged, this, &TraceView::showSelection);
    connect(timeline_, &TimelineWidget::axisChanged, this, &TraceView::syncAxis);
    connect(timeline_, &TimelineWidget::rangeSelected, this,
            [this](double t0, double t1) { details_->setHtml(range_details_html(*session_, t0, t1)); });
    connect(back, &QPushButton::clicked, timeline_, &TimelineWidget::back);
    connect(reset, &QPushButton::clicked, timeline_, &TimelineWidget::reset);
    connect(search_, &QLineEdit::returnPressed, this, &TraceView::findNext);
    return page;
}

QWidget* TraceView::buildMemory() {
    memory_ = new MemoryWidget(session_, &axis_);
    auto* chart_page = new QWidget;
    auto* chart_layout = new QVBoxLayout(chart_page);
    chart_layout->setContentsMargins(2, 2, 2, 0);
    auto* bar = new QHBoxLayout;
    auto* bars_toggle = new QCheckBox(tr("Lifetime bars when zoomed in"));
    bars_toggle->setObjectName("lifetime bars");
    bars_toggle->setChecked(memory_->lifetimeBars());
    bars_toggle->setToolTip(
        tr("Zoomed in until each allocation alive in view gets a bar a few pixels tall, draw "
           "one bar per allocation (or tensor of a pooled segment) from allocation to free; "
           "off: always the stacked chart"));
    auto* keys =
        new QLabel(tr("wheel/W/S zoom · drag/A/D pan · F fit · click: allocations live then, or a bar's details"));
    keys->setEnabled(false);
    bar->addWidget(bars_toggle);
    bar->addWidget(keys, 1);
    chart_layout->addLayout(bar);
    chart_layout->addWidget(memory_, 1);
    connect(bars_toggle, &QCheckBox::toggled, memory_, &MemoryWidget::setLifetimeBars);
    auto* lower = new QSplitter(Qt::Horizontal);
    allocations_table_ = new QTableView;
    allocations_table_->setObjectName("allocations");
    allocations_table_->setModel(allocations_model_.get());
    allocations_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    allocations_table_->setSelectionMode(QAbstractItemView::SingleSelection);
    allocations_table_->verticalHeader()->hide();
    allocations_table_->horizontalHeader()->setStretchLastSection(true);
    stack_ = new QTextBrowser;
    stack_->setObjectName("allocation details");
    stack_->setMinimumWidth(300);
    stack_->setPlaceholderText(
        tr("Click the chart to list the allocations live at that moment; pick one for its call stack."));
    lower->addWidget(allocations_table_);
    lower->addWidget(stack_);
    QSplitter* splitter = split(splitters_, Qt::Vertical, chart_page, lower, 3, 2);
    splitters_.push_back(lower);
    connect(memory_, &MemoryWidget::axisChanged, this, &TraceView::syncAxis);
    connect(memory_, &MemoryWidget::momentChosen, this, [this](qint64 t) {
        allocations_model_->showMoment(session_->overview(), t);
        stack_->setHtml(
            tr("<b>%1 allocations live</b> at this moment, largest first.").arg(allocations_model_->liveCount()));
    });
    connect(memory_, &MemoryWidget::barChosen, this, [this](qulonglong allocation, qulonglong subrange) {
        const Overview* overview = session_->overview();
        if (!overview || allocation >= overview->allocations.size()) return;
        const AllocationInfo& a = overview->allocations[allocation];
        const std::vector<std::string> stack = a.stack >= 0 ? session_->stack(a.stack) : std::vector<std::string>{};
        if (subrange < overview->subranges.size())
            stack_->setHtml(subrange_details_html(a, overview->subranges[subrange], stack));
        else
            stack_->setHtml(allocation_details_html(a, stack));
    });
    connect(allocations_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& index) {
                const AllocationInfo* a = allocations_model_->allocation(index.row());
                if (a)
                    stack_->setHtml(allocation_details_html(
                        *a, a->stack >= 0 ? session_->stack(a->stack) : std::vector<std::string>{}));
            });
    return splitter;
}

QWidget* TraceView::buildKernels() {
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(2, 2, 2, 2);
    kernel_filter_ = new QLineEdit;
    kernel_filter_->setPlaceholderText(
        tr("filter kernels by name; pick a row to highlight its instances on the timeline"));
    kernel_filter_->setClearButtonEnabled(true);
    kernel_table_ = new QTableView;
    kernel_table_->setModel(kernel_proxy_.get());
    kernel_table_->setSortingEnabled(true);
    kernel_table_->sortByColumn(KernelStatsModel::Total, Qt::DescendingOrder);
    kernel_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    kernel_table_->setSelectionMode(QAbstractItemView::SingleSelection);
    kernel_table_->verticalHeader()->hide();
    kernel_table_->horizontalHeader()->setSectionResizeMode(KernelStatsModel::Name, QHeaderView::Stretch);
    layout->addWidget(kernel_filter_);
    layout->addWidget(kernel_table_, 1);
    connect(kernel_filter_, &QLineEdit::textChanged, kernel_proxy_.get(), &QSortFilterProxyModel::setFilterFixedString);
    connect(kernel_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& index) {
                const QModelIndex source = kernel_proxy_->mapToSource(index);
                const analyzer::KernelStat* k = kernel_model_->kernel(source.row());
                timeline_->highlightKernel(k ? QString::fromStdString(k->name) : QString());
            });
    connect(kernel_table_, &QTableView::doubleClicked, this, [this] { setView("timeline"); });
    return page;
}

QWidget* TraceView::buildCompare() {
    compare_chart_ = new ChartWidget(
        [this](QPainter& p, const QRect& r, const ViewerColors& c) { paint_compare(p, r, all_sessions_(), c); });
    auto* table = new QTableView;
    table->setModel(compare_model_.get());
    table->verticalHeader()->hide();
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    iteration_table_ = new QTableView;
    iteration_table_->setObjectName("iteration compare");
    iteration_proxy_ = std::make_unique<ChangeHighlightProxy>();
    iteration_proxy_->setSourceModel(iteration_model_.get());
    iteration_table_->setModel(iteration_proxy_.get());
    iteration_table_->verticalHeader()->hide();
    iteration_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    auto* tables = new QTabWidget;
    tables->addTab(iteration_table_, tr("Aligned on iterations"));
    tables->addTab(table, tr("Every report figure"));
    return split(splitters_, Qt::Vertical, compare_chart_, tables);
}

void TraceView::refreshCompare() {
    std::vector<const analyzer::Report*> reports;
    QStringList labels;
    for (const TraceSession* s : all_sessions_()) {
        if (!s->report()) continue;
        reports.push_back(&s->report()->report);
        labels << s->displayName();
    }
    compare_model_->setReports(reports.size() >= 2 ? reports : std::vector<const analyzer::Report*>{}, labels);
    std::vector<TraceIterations> traces;
    for (const TraceSession* s : all_sessions_())
        if (s->report()) traces.push_back(trace_iterations_of(*s->report(), s->displayName()));
    iteration_model_->setTraces(std::move(traces));
    compare_chart_->update();
}

void TraceView::onOverview() {
    axis_.set_run(session_->durationNs(), std::max(1, timeline_->width() - kLabelWidth));
    timeline_->update();
}

void TraceView::onReport() {
    const analyzer::Report& report = session_->report()->report;
    summary_model_->setReport(&report);
    kernel_model_->setKernels(report.kernels.top);
    summary_chart_->update();
    memory_->update();
    refreshCompare();
}

void TraceView::onKernels() {
    if (!timeline_->timelinePainter().highlight().isEmpty())
        timeline_->highlightKernel(timeline_->timelinePainter().highlight());
    timeline_->update();
}

void TraceView::syncAxis() {
    timeline_->update();
    memory_->update();
}

void TraceView::showSelection(const Selection& selection) {
    if (!selection.valid()) {
        details_->clear();
        return;
    }
    const TimelineRow& row = *session_->rows()[static_cast<size_t>(selection.row)];
    details_->setHtml(item_details_html(*session_, row, selection.item));
}

void TraceView::findNext() {
    const QString text = search_->text();
    if (text.isEmpty()) return;
    const std::vector<const TimelineRow*> rows = session_->rows();
    const Selection current = timeline_->selection();
    const int64_t after =
        current.valid() ? rows[static_cast<size_t>(current.row)]->items.start(current.item) : INT64_MIN;
    // The earliest match starting after the selection, over all rows.
    Selection best;
    int64_t best_start = INT64_MAX;
    for (size_t r = 0; r < rows.size(); ++r) {
        const ItemRow& items = rows[r]->items;
        std::vector<bool> matches(rows[r]->labels->size());
        for (size_t l = 0; l < matches.size(); ++l)
            matches[l] = QString::fromStdString((*rows[r]->labels)[l]).contains(text, Qt::CaseInsensitive);
        for (size_t i = items.first_starting_at(after == INT64_MIN ? INT64_MIN : after + 1); i < items.size(); ++i) {
            if (items.start(i) >= best_start) break;
            if (matches[items.label(i)]) {
                best = {static_cast<int>(r), i};
                best_start = items.start(i);
                break;
            }
        }
    }
    if (!best.valid()) return;
    const ItemRow& items = rows[static_cast<size_t>(best.row)]->items;
    const double x = axis_.x_of(static_cast<double>(items.start(best.item)));
    if (x < 0 || x > axis_.width()) axis_.pan(x - axis_.width() / 2.0);
    timeline_->select(best);
    syncAxis();
}

void TraceView::setView(const QString& name) {
    const int index = static_cast<int>(viewNames().indexOf(name));
    if (index >= 0) tabs_->setCurrentIndex(index);
}

QString TraceView::viewName() const {
    return viewNames().value(tabs_->currentIndex());
}

void TraceView::paintView(const QString& name, QPainter& painter, const QRect& area) {
    if (name == "summary") return summary_chart_->paintTo(painter, area);
    if (name == "compare") {
        refreshCompare();
        return compare_chart_->paintTo(painter, area);
    }
    if (name == "timeline" || name == "memory") {
        axis_.set_width(std::max(1, area.width() - kLabelWidth));
        if (name == "timeline")
            timeline_->paintTo(painter, area);
        else
            memory_->paintTo(painter, area);
        axis_.set_width(std::max(1, timeline_->width() - kLabelWidth));
        return;
    }
    // Kernels: the table itself, laid out at the export size.
    QWidget* page = tabs_->widget(static_cast<int>(viewNames().indexOf("kernels")));
    const QSize old = page->size();
    page->resize(area.size());
    if (page->layout()) page->layout()->activate();  // an unshown window lays out on demand
    page->render(&painter, area.topLeft());
    page->resize(old);
}

bool TraceView::exportView(const QString& path, QSize size, QString* error, bool force) {
    const QString name = viewName();
    const bool svg_wanted = path.endsWith(".svg", Qt::CaseInsensitive);
    if (!svg_wanted && !path.endsWith(".png", Qt::CaseInsensitive)) {
        // Never guess a format from another suffix (a trace named as the screenshot, `--screenshot a.sqlite`).
        if (error) *error = tr("%1: the view is saved as .png or .svg; name the file so").arg(path);
        return false;
    }
    // Drawn into memory first, then written through the one output-file helper (trace/output_file.h):
    // a temporary renamed into place, an existing file replaced only with `force`, never one of the
    // open traces, never through a symbolic link onto one.
    QBuffer drawn;
    drawn.open(QIODevice::WriteOnly);
    if (svg_wanted) {
        QSvgGenerator svg;
        svg.setOutputDevice(&drawn);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(QStringLiteral("tbdprof %1: %2").arg(name, session_->displayName()));
        QPainter painter;
        if (!painter.begin(&svg)) {
            if (error) *error = tr("cannot draw %1").arg(path);
            return false;
        }
        paintView(name, painter, QRect(QPoint(0, 0), size));
        painter.end();
    } else {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(palette().color(QPalette::Base));
        {
            QPainter painter(&image);
            painter.setRenderHint(QPainter::Antialiasing, false);
            painter.setRenderHint(QPainter::TextAntialiasing, true);
            paintView(name, painter, QRect(QPoint(0, 0), size));
        }
        if (!image.save(&drawn, "PNG")) {
            if (error) *error = tr("cannot encode %1 as PNG").arg(path);
            return false;
        }
    }
    trace::OutputRules rules{.force = force, .inputs = {}};
    rules.inputs.push_back(session_->path().toStdString());
    if (all_sessions_)
        for (const TraceSession* s : all_sessions_()) rules.inputs.push_back(s->path().toStdString());
    const QByteArray& bytes = drawn.data();
    const std::string problem = trace::write_output_file(
        path.toStdString(), std::string(bytes.constData(), static_cast<size_t>(bytes.size())), rules);
    if (!problem.empty()) {
        if (error) *error = QString::fromStdString(problem);
        return false;
    }
    return true;
}

QByteArray TraceView::saveLayout() const {
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    for (QSplitter* s : splitters_) out << s->saveState();
    return state;
}

void TraceView::restoreLayout(const QByteArray& state) {
    QDataStream in(state);
    for (QSplitter* s : splitters_) {
        QByteArray one;
        in >> one;
        if (in.status() != QDataStream::Ok) return;
        s->restoreState(one);
    }
}

}  // namespace tbdprof::viewer
