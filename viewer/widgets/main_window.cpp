#include "main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

#include "trace_session.h"
#include "trace_view.h"

namespace tbdprof::viewer {

MainWindow::MainWindow(bool interactive, QWidget* parent) : QMainWindow(parent), interactive_(interactive) {
    setWindowTitle(tr("tbdprof viewer"));
    setAcceptDrops(true);
    traces_ = new QTabWidget(this);
    traces_->setTabsClosable(true);
    traces_->setDocumentMode(true);
    setCentralWidget(traces_);
    connect(traces_, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTrace);
    connect(traces_, &QTabWidget::currentChanged, this, &MainWindow::updateStatus);
    progress_ = new QProgressBar;
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(220);
    cancel_ = new QPushButton(tr("Cancel"));
    status_ = new QLabel;
    statusBar()->addWidget(status_, 1);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_);
    progress_->hide();
    cancel_->hide();
    connect(cancel_, &QPushButton::clicked, this, [this] {
        for (TraceSession* s : sessions()) s->cancel();
    });
    watcher_ = new QFileSystemWatcher(this);
    connect(watcher_, &QFileSystemWatcher::fileChanged, this, [this](const QString& path) {
        // A trace being rewritten (tbdprof tag) changes several times: reload once it settles.
        QTimer::singleShot(700, this, [this, path] {
            for (TraceSession* s : sessions()) {
                if (s->path() == path && QFileInfo::exists(path)) s->start();
            }
            if (QFileInfo::exists(path)) watcher_->addPath(path);
        });
    });
    buildMenus();
    resize(1400, 860);
    if (interactive_) {
        QSettings settings;
        restoreGeometry(settings.value("window/geometry").toByteArray());
        restoreState(settings.value("window/state").toByteArray());
        recent_ = settings.value("recent").toStringList();
        last_view_ = settings.value("window/view", "summary").toString();
        updateRecentMenu();
    }
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
    recent_menu_ = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Reload"), QKeySequence::Refresh, this, &MainWindow::reloadCurrent);
    file->addAction(tr("&Export view as PNG or SVG…"), QKeySequence(tr("Ctrl+E")), this, &MainWindow::exportDialog);
    file->addAction(tr("&Close trace"), QKeySequence::Close, this, [this] { closeTrace(traces_->currentIndex()); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    QMenu* view = menuBar()->addMenu(tr("&View"));
    const QStringList titles{tr("&Summary"), tr("&Timeline"), tr("&Memory"), tr("&Kernels"), tr("&Compare")};
    for (int i = 0; i < titles.size(); ++i) {
        const QString name = TraceView::viewNames()[i];
        view->addAction(titles[i], QKeySequence(QString("Ctrl+%1").arg(i + 1)), this, [this, name] { setView(name); });
    }
}

void MainWindow::openFiles(const QStringList& paths) {
    for (const QString& path : paths) {
        auto* session = new TraceSession(path, this);  // as given, so messages match the CLI
        session->setWhatIf(whatif_);
        auto* view = new TraceView(session, [this] {
            std::vector<const TraceSession*> all;
            for (TraceSession* s : sessions()) all.push_back(s);
            return all;
        });
        view->setView(last_view_);
        const int index = traces_->addTab(view, session->displayName());
        traces_->setTabToolTip(index, session->path());
        traces_->setCurrentIndex(index);
        connect(session, &TraceSession::progressChanged, this,
                [this, session](int permille, const QString& stage) { onProgress(session, permille, stage); });
        connect(session, &TraceSession::failed, this,
                [this, session](const QString& message) { onFailed(session, message); });
        connect(session, &TraceSession::finished, this, &MainWindow::updateStatus);
        connect(session, &TraceSession::reportReady, this, [this] {
            for (int i = 0; i < traces_->count(); ++i) viewAt(i)->refreshCompare();
        });
        if (interactive_) {
            QSettings settings;
            view->restoreLayout(settings.value("window/splitters").toByteArray());
            rememberRecent(session->path());
            if (QFileInfo::exists(session->path())) watcher_->addPath(session->path());
        }
        session->start();
    }
    updateStatus();
}

std::vector<TraceSession*> MainWindow::sessions() const {
    std::vector<TraceSession*> all;
    for (int i = 0; i < traces_->count(); ++i) all.push_back(viewAt(i)->session());
    return all;
}

TraceView* MainWindow::viewAt(int index) const {
    return qobject_cast<TraceView*>(traces_->widget(index));
}
TraceView* MainWindow::currentView() const {
    return viewAt(traces_->currentIndex());
}

void MainWindow::setView(const QString& name) {
    last_view_ = name;
    for (int i = 0; i < traces_->count(); ++i) viewAt(i)->setView(name);
}

void MainWindow::openDialog() {
    const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Open tbdprof traces"), QString(),
                                                            tr("tbdprof traces (*.sqlite);;All files (*)"));
    if (!paths.isEmpty()) openFiles(paths);
}

void MainWindow::exportDialog() {
    TraceView* view = currentView();
    if (!view) return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Export view"), view->viewName() + ".png",
                                                      tr("PNG image (*.png);;SVG drawing (*.svg)"));
    if (path.isEmpty()) return;
    // The dialog asked before replacing the name it returned; a suffix added here was not asked about.
    const bool named = path.endsWith(".png", Qt::CaseInsensitive) || path.endsWith(".svg", Qt::CaseInsensitive);
    QString error;
    if (!view->exportView(named ? path : path + ".png", view->size(), &error, named))
        QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::reloadCurrent() {
    if (TraceView* view = currentView()) view->session()->start();
}

void MainWindow::closeTrace(int index) {
    TraceView* view = viewAt(index);
    if (!view) return;
    TraceSession* session = view->session();
    watcher_->removePath(session->path());
    traces_->removeTab(index);
    delete view;
    delete session;
    updateStatus();
}

void MainWindow::rememberRecent(const QString& path) {
    recent_.removeAll(path);
    recent_.prepend(path);
    while (recent_.size() > 10) recent_.removeLast();
    QSettings().setValue("recent", recent_);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    recent_menu_->clear();
    for (const QString& path : recent_) {
        recent_menu_->addAction(path, this, [this, path] { openFiles({path}); });
    }
    recent_menu_->setEnabled(!recent_.isEmpty());
}

void MainWindow::onProgress(TraceSession* session, int permille, const QString& stage) {
    if (currentView() && currentView()->session() != session) return;
    progress_->setValue(permille);
    status_->setText(session->displayName() + ": " + stage);
    updateStatus();
}

void MainWindow::onFailed(TraceSession* session, const QString& message) {
    errors_ << message;
    if (!interactive_) return;
    // Not inside the session's own signal: the dialog runs an event loop and closing deletes it.
    QTimer::singleShot(0, this, [this, session, message] {
        QMessageBox::critical(this, tr("Cannot open trace"), message);
        for (int i = 0; i < traces_->count(); ++i) {
            if (viewAt(i)->session() == session) {
                closeTrace(i);
                break;
            }
        }
    });
}

void MainWindow::updateStatus() {
    bool busy = false;
    for (TraceSession* s : sessions()) busy |= s->busy();
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    if (!busy && currentView()) {
        TraceSession* s = currentView()->session();
        const QString state = s->state() == TraceSession::State::cancelled ? tr("kernels partly loaded (cancelled)")
                              : s->state() == TraceSession::State::ready   ? tr("loaded")
                                                                           : QString();
        status_->setText(s->path() + (state.isEmpty() ? QString() : " · " + state));
    }
    if (!currentView()) status_->setText(tr("Open a trace with File > Open, or drop one here."));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile()) paths << url.toLocalFile();
    }
    openFiles(paths);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (interactive_) {
        QSettings settings;
        settings.setValue("window/geometry", saveGeometry());
        settings.setValue("window/state", saveState());
        if (currentView()) {
            settings.setValue("window/view", currentView()->viewName());
            settings.setValue("window/splitters", currentView()->saveLayout());
        }
    }
    QMainWindow::closeEvent(event);
}

}  // namespace tbdprof::viewer
