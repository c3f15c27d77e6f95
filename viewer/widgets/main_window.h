// The viewer's window: traces in tabs (each with its views), File > Open / Open Recent / Reload /
// Export, drag and drop, reload when a file changes on disk, a progress bar with Cancel, and the
// layout and last view remembered with QSettings. Bad input gets a dialog with the CLI's sentence.
#pragma once

#include <QMainWindow>
#include <QStringList>

#include <memory>
#include <vector>

class QFileSystemWatcher;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace tbdprof::viewer {

class TraceSession;
class TraceView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // interactive: dialogs for errors and QSettings; off for --screenshot and --benchmark.
    explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    void openFiles(const QStringList& paths);
    // What-if options (--whatif) for the traces opened after: their Memory view draws the predicted
    // timeline of that scenario over the recorded one.
    void setWhatIf(const QString& options) { whatif_ = options; }
    std::vector<TraceSession*> sessions() const;
    TraceView* currentView() const;
    TraceView* viewAt(int index) const;
    QStringList errors() const { return errors_; }  // messages of traces that failed to open
    void setView(const QString& name);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void openDialog();
    void exportDialog();
    void reloadCurrent();
    void closeTrace(int index);
    void rememberRecent(const QString& path);
    void updateRecentMenu();
    void onProgress(TraceSession* session, int permille, const QString& stage);
    void onFailed(TraceSession* session, const QString& message);
    void updateStatus();

    bool interactive_;
    QString whatif_;
    QTabWidget* traces_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QLabel* status_ = nullptr;
    QMenu* recent_menu_ = nullptr;
    QFileSystemWatcher* watcher_ = nullptr;
    QStringList recent_;
    QStringList errors_;
    QString last_view_ = "summary";
};

}  // namespace tbdprof::viewer
