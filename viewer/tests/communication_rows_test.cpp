// The timeline's communication lanes: loaded by a TraceSession from a recorded two-rank dp_train run,
// one lane per rank whose exposed and overlapped stretches, clipped to the report's window, add up to
// the report's own exposed and overlapped time for that rank, and never overlap each other.
#include <QSignalSpy>
#include <QTest>

#include <algorithm>

#include "communication_rows.h"
#include "report_facts.h"
#include "tbdprof/analyzer/report.h"
#include "tbdprof/trace/sqlite_handle.h"
#include "tbdprof/trace/trace_reader.h"
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
    void phasesOfOneRankInDeviceTime();
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

// The phase band of a two-rank run: the phases of the drawn rank only (both ranks' would overlap),
// each in device time, covering every kernel its rank launched in the phase's host span.
void CommunicationRowsTest::phasesOfOneRankInDeviceTime() {
    const QString trace = qEnvironmentVariable("TBD_VIEWER_SAMPLES") + "/dp_train.sqlite";
    if (!QFile::exists(trace)) QSKIP("dp_train.sqlite not recorded (dp_train is not built)");
    TraceSession session(trace);
    QVERIFY(load(session));
    const Overview& overview = *session.overview();
    QVERIFY(overview.phases_in_device_time);
    tbdprof::trace::Database db = tbdprof::trace::open_trace(trace.toStdString());
    QCOMPARE(db.query_int("SELECT count(DISTINCT process) FROM iterations"), int64_t{2});
    // The drawn rank: as many steps as the band shows; its phases, with the kernels launched in each.
    tbdprof::trace::Statement phases(
        db,
        "SELECT p.device_begin_ns, p.device_end_ns, "
        "  (SELECT min(k.start_ns) FROM kernel_view k WHERE k.process = i.process "
        "     AND k.launch_ns >= p.begin_ns AND k.launch_ns < p.end_ns), "
        "  (SELECT max(k.end_ns) FROM kernel_view k WHERE k.process = i.process "
        "     AND k.launch_ns >= p.begin_ns AND k.launch_ns < p.end_ns) "
        "FROM phases p JOIN iterations i ON i.id = p.iteration "
        "WHERE i.process = (SELECT process FROM iterations WHERE kind IS NOT 'non_training' "
        "                   GROUP BY process ORDER BY count(*) DESC, process LIMIT 1) "
        "ORDER BY p.device_begin_ns");
    std::vector<Band> bands = overview.phases;
    std::sort(bands.begin(), bands.end(), [](const Band& a, const Band& b) { return a.begin < b.begin; });
    size_t index = 0;
    for (; phases.step(); ++index) {
        QVERIFY(index < bands.size());
        QCOMPARE(bands[index].begin, phases.column_int(0));
        QCOMPARE(bands[index].end, phases.column_int(1));
        if (phases.is_null(2)) continue;  // a phase that launched only copies or sets
        QVERIFY(bands[index].begin <= phases.column_int(2));
        QVERIFY(bands[index].end >= phases.column_int(3));
    }
    QCOMPARE(index, bands.size());
    QCOMPARE(bands.size(), 3 * overview.iterations.size());
}

QTEST_GUILESS_MAIN(CommunicationRowsTest)
#include "communication_rows_test.moc"
