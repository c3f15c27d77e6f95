// The timeline's communication lanes: loaded by a TraceSession from a recorded two-rank dp_train run,
// one lane per rank whose exposed and overlapped stretches, clipped to the report's window, add up to
// the report's own exposed and overlapped time for that rank, and never overlap each other.
#include <QSignalSpy>
#include <QTest>

#include <algorithm>

#include "communication_rows.h"
#include "report_facts.h"
#include "tbdprof/analyzer/report.h"
#include "trace_session.h"

using namespace tbdprof::viewer;

namespace {

bool load(TraceSession& session) {
    QSignalSpy finished(&session, &TraceSession::finished);
    session.start();
    return finished.wait(120000) && session.state() == TraceSession::State::ready;
}

int64_t clipped(const TimelineRow& row, size_t i, const tbdprof::analyzer::Window& w) {
    return std::max<int64_t>(0, std::min(row.items.end(i), w.end_ns) - std::max(row.items.start(i), w.begin_ns));
}

}  // namespace

class CommunicationRowsTest : public QObject {
    Q_OBJECT
private slots:
    void lanesAddUpToTheReport();
    void noLanesWithoutCommunication();
    void eachRanksPeakInTheFacts();
};

void CommunicationRowsTest::lanesAddUpToTheReport() {
    const QString trace = qEnvironmentVariable("TBD_VIEWER_SAMPLES") + "/dp_train.sqlite";
    if (!QFile::exists(trace)) QSKIP("dp_train.sqlite not recorded (dp_train is not built)");
    TraceSession session(trace);
    QVERIFY(load(session));
    const tbdprof::analyzer::Report& report = session.report()->report;
    QCOMPARE(report.communication.ranks.size(), size_t{2});
    std::vector<const TimelineRow*> lanes;
    for (const TimelineRow* row : session.rows())
        if (row->kind == RowKind::communication) lanes.push_back(row);
    QCOMPARE(lanes.size(), size_t{2});
    for (size_t r = 0; r < lanes.size(); ++r) {
        const TimelineRow& lane = *lanes[r];
        const tbdprof::analyzer::RankCommunication& rank = report.communication.ranks[r];
        QCOMPARE(lane.device, rank.device);
        QVERIFY2(lane.title.find("rank " + std::to_string(rank.rank.value_or(-1))) == 0, lane.title.c_str());
        int64_t exposed_ns = 0, overlapped_ns = 0;
        for (size_t i = 0; i < lane.items.size(); ++i) {
            if (i > 0) QVERIFY(lane.items.start(i) >= lane.items.end(i - 1));  // one or the other, never both
            (lane.label_of(i) == kExposedCommunication ? exposed_ns : overlapped_ns) += clipped(lane, i, report.window);
        }
        QCOMPARE(exposed_ns, rank.figures.exposed_ns);
        QCOMPARE(overlapped_ns, rank.figures.overlapped_ns);
        QVERIFY(exposed_ns > 0 && overlapped_ns > 0);  // dp_train's buckets overlap backward, the last one does not
    }
}

void CommunicationRowsTest::noLanesWithoutCommunication() {
    const QString trace = qEnvironmentVariable("TBD_VIEWER_SAMPLES") + "/mlp.sqlite";
    if (!QFile::exists(trace)) QSKIP("mlp.sqlite not recorded");
    TraceSession session(trace);
    QVERIFY(load(session));
    for (const TimelineRow* row : session.rows()) QVERIFY(row->kind != RowKind::communication);
}

// The Summary's per-process peaks: one fact per rank, named by its rank, each its own peak (never above
// the trace's, every process together), as the report's processes give them.
void CommunicationRowsTest::eachRanksPeakInTheFacts() {
    const QString trace = qEnvironmentVariable("TBD_VIEWER_SAMPLES") + "/dp_train.sqlite";
    if (!QFile::exists(trace)) QSKIP("dp_train.sqlite not recorded (dp_train is not built)");
    TraceSession session(trace);
    QVERIFY(load(session));
    const tbdprof::analyzer::MemoryMetrics& memory = session.report()->report.memory;
    QCOMPARE(memory.processes.size(), size_t{2});
    const std::vector<ReportFact> facts = report_facts(session.report()->report);
    for (const tbdprof::analyzer::ProcessMemory& process : memory.processes) {
        QVERIFY(process.rank.has_value());
        QVERIFY(process.peak_bytes > 0 && process.peak_bytes <= memory.peak_bytes);
        const std::string name = "peak device memory, rank " + std::to_string(*process.rank) + " (process " +
                                 std::to_string(process.process) + ")";
        const auto fact = std::find_if(facts.begin(), facts.end(), [&](const ReportFact& f) { return f.name == name; });
        QVERIFY2(fact != facts.end(), name.c_str());
        QCOMPARE(fact->value.value_or(-1), static_cast<double>(process.peak_bytes));
        QVERIFY(fact->bytes);
    }
}

QTEST_GUILESS_MAIN(CommunicationRowsTest)
#include "communication_rows_test.moc"
