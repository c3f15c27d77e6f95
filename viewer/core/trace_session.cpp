#include "trace_session.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QPointer>

#include <cstdio>
#include <cstdlib>

#include "tbdprof/trace/trace_reader.h"
#include "trace_loader.h"

namespace tbdprof::viewer {

TraceSession::TraceSession(const QString& path, QObject* parent) : QObject(parent), path_(path) {}

TraceSession::~TraceSession() {
    stopWorkers();
}

QString TraceSession::displayName() const {
    return QFileInfo(path_).fileName();
}

std::vector<const TimelineRow*> TraceSession::rows() const {
    // GPU rows first (kernels, each rank's communication, then copies and sets), then host calls, then
    // NVTX ranges.
    std::vector<const TimelineRow*> rows;
    for (RowKind kind :
         {RowKind::kernels, RowKind::communication, RowKind::transfers, RowKind::host_calls, RowKind::nvtx}) {
        for (const auto* stage : {kernels_ ? &kernels_->rows : nullptr, overview_ ? &overview_->rows : nullptr}) {
            if (!stage) continue;
            for (const TimelineRow& row : *stage) {
                if (row.kind == kind) rows.push_back(&row);
            }
        }
    }
    return rows;
}

void TraceSession::stopWorkers() {
    if (cancel_) cancel_->store(true);
    // The report stage cannot stop part-way (the analyzer runs to the end); waiting here is bounded
    // by its run time, and nothing it sends arrives after this object is gone.
    for (auto& worker : workers_) worker->wait();
    workers_.clear();
}

void TraceSession::start() {
    stopWorkers();
    ++generation_;
    state_ = State::loading;
    error_.clear();
    overview_.reset();
    report_.reset();
    kernels_.reset();
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    pending_ = 1;
    const int generation = generation_;
    const std::string path = path_.toStdString();
    const std::string whatif = whatif_.toStdString();
    auto cancel = cancel_;
    QPointer<TraceSession> self(this);
    // Results come back to the GUI thread by queued invocation; a stale generation is dropped.
    auto post = [self](auto function) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, function] {
                if (TraceSession* session = self.data()) function(*session);
            },
            Qt::QueuedConnection);
    };
    emit progressChanged(0, tr("checking the trace"));
    workers_.emplace_back(QThread::create([=] {
        // TBDPROF_VIEWER_TIMING=1: each stage's wall time on stderr (for the benchmark notes).
        const bool timing = std::getenv("TBDPROF_VIEWER_TIMING") != nullptr;
        QElapsedTimer clock;
        clock.start();
        auto lap = [&](const char* stage) {
            if (timing)
                std::fprintf(stderr, "tbdprof-viewer: %-10s %.3f s\n", stage,
                             static_cast<double>(clock.restart()) / 1000);
        };
        try {
            check_trace(path);
            lap("check");
            std::shared_ptr<Overview> overview = load_overview(path);
            lap("overview");
            post([=](TraceSession& s) { s.deliverOverview(generation, overview); });
            const int64_t run_duration_ns = overview->duration_ns;
            // The report first (every figure the Summary shows), then the kernels (the timeline's
            // detail): one after the other, so their memory peaks do not add up.
            std::shared_ptr<ReportData> report = load_report(path, whatif);
            lap("report");
            post([=](TraceSession& s) { s.deliverReport(generation, report); });
            std::shared_ptr<KernelDetail> kernels = load_kernels(path, run_duration_ns, *cancel, [&](double fraction) {
                const int permille = 100 + static_cast<int>(fraction * 900);
                post([=](TraceSession& s) {
                    if (s.generation_ == generation) s.reportProgress(permille, tr("reading kernels and host calls"));
                });
            });
            lap("kernels");
            post([=](TraceSession& s) { s.deliverKernels(generation, kernels); });
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            post([=](TraceSession& s) { s.deliverFailure(generation, message); });
        }
    }));
    workers_.back()->start();
}

void TraceSession::cancel() {
    if (cancel_) cancel_->store(true);
}

void TraceSession::deliverOverview(int generation, std::shared_ptr<Overview> overview) {
    if (generation != generation_ || state_ == State::failed) return;
    overview_ = std::move(overview);
    pending_ = 2;  // report and kernels
    emit progressChanged(50, tr("analysing (the report)"));
    emit overviewReady();
}

void TraceSession::deliverReport(int generation, std::shared_ptr<ReportData> report) {
    if (generation != generation_ || state_ == State::failed) return;
    report_ = std::move(report);
    emit reportReady();
    --pending_;
    finishIfDone();
}

void TraceSession::deliverKernels(int generation, std::shared_ptr<KernelDetail> kernels) {
    if (generation != generation_ || state_ == State::failed) return;
    kernels_ = std::move(kernels);
    emit kernelsReady();
    --pending_;
    finishIfDone();
}

void TraceSession::deliverFailure(int generation, const QString& message) {
    if (generation != generation_ || state_ == State::failed) return;
    state_ = State::failed;
    error_ = message;
    if (cancel_) cancel_->store(true);
    emit failed(message);
    emit finished();
}

void TraceSession::finishIfDone() {
    if (pending_ > 0 || state_ != State::loading) return;
    state_ = kernels_ && !kernels_->complete ? State::cancelled : State::ready;
    emit progressChanged(1000, state_ == State::ready ? tr("loaded") : tr("cancelled: kernels partly loaded"));
    emit finished();
}

KernelInfo TraceSession::kernelInfo(int64_t kernel_id) const {
    try {
        trace::Database db = trace::open_trace(path_.toStdString());
        return read_kernel_info(db, kernel_id);
    } catch (const std::exception&) {
        return {};  // the file changed or vanished since it was loaded: no details
    }
}

std::vector<std::string> TraceSession::stack(int64_t stack_id) const {
    try {
        trace::Database db = trace::open_trace(path_.toStdString());
        return read_stack(db, stack_id);
    } catch (const std::exception&) {
        return {};
    }
}

}  // namespace tbdprof::viewer
