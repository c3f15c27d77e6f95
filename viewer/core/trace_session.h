// One open trace: loads it in stages on a worker thread (overview, then the analyzer's report, then
// the kernels and host calls), reports progress, can be cancelled, and hands each stage back to the
// GUI thread by queued signals. Widget-free (QtCore only), so it is tested headless.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <memory>
#include <vector>

#include "item_details.h"
#include "trace_data.h"

namespace tbdprof::viewer {

class TraceSession : public QObject {
    Q_OBJECT
public:
    enum class State { idle, loading, ready, failed, cancelled };

    explicit TraceSession(const QString& path, QObject* parent = nullptr);
    ~TraceSession() override;

    QString path() const { return path_; }
    // What-if options (as `tbdprof whatif` takes them): the report stage also predicts that scenario's
    // memory (ReportData::predicted). Takes effect at the next start().
    void setWhatIf(const QString& options) { whatif_ = options; }
    QString displayName() const;
    State state() const { return state_; }
    QString error() const { return error_; }
    bool busy() const { return state_ == State::loading; }

    // Stages as they arrive; nullptr until then.
    const Overview* overview() const { return overview_.get(); }
    const ReportData* report() const { return report_.get(); }
    const KernelDetail* kernels() const { return kernels_.get(); }
    // Kernel rows (when loaded) then the overview's rows: the timeline's rows, top to bottom.
    std::vector<const TimelineRow*> rows() const;
    int64_t durationNs() const { return overview_ ? overview_->duration_ns : 1; }

    // Details read on demand from the trace (one row each, milliseconds).
    KernelInfo kernelInfo(int64_t kernel_id) const;
    std::vector<std::string> stack(int64_t stack_id) const;

public slots:
    void start();   // (re)loads from the start; a load in progress is cancelled first
    void cancel();  // stops reading kernels; what is loaded stays shown

signals:
    void progressChanged(int permille, const QString& stage);
    void overviewReady();
    void reportReady();
    void kernelsReady();
    void failed(const QString& message);
    void finished();  // the load ended: ready, failed or cancelled

private:
    void stopWorkers();
    void reportProgress(int permille, const QString& stage) { emit progressChanged(permille, stage); }
    void deliverOverview(int generation, std::shared_ptr<Overview> overview);
    void deliverReport(int generation, std::shared_ptr<ReportData> report);
    void deliverKernels(int generation, std::shared_ptr<KernelDetail> kernels);
    void deliverFailure(int generation, const QString& message);
    void finishIfDone();

    QString path_;
    QString whatif_;
    State state_ = State::idle;
    QString error_;
    int generation_ = 0;
    int pending_ = 0;  // stages still running
    std::shared_ptr<std::atomic<bool>> cancel_;
    std::vector<std::unique_ptr<QThread>> workers_;
    std::shared_ptr<const Overview> overview_;
    std::shared_ptr<const ReportData> report_;
    std::shared_ptr<const KernelDetail> kernels_;
};

}  // namespace tbdprof::viewer
