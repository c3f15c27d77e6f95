// TraceSession: staged loading on worker threads with queued signals (QSignalSpy), the numbers it
// shows equal the analyzer's, bad input fails with the analyzer's (the CLI's) sentence, cancel.
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/trace/sqlite_handle.h"
#include "trace_session.h"

using namespace tbdprof::viewer;

class SessionTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void loadsInStages();
    void badInput_data();
    void badInput();
    void cancelKeepsWhatIsLoaded();

private:
    QString generate(const QString& name, int kernels);
    QTemporaryDir dir_;
    QString trace_;
};

QString SessionTest::generate(const QString& name, int kernels) {
    const QString path = dir_.filePath(name);
    QProcess generator;
    generator.start(TBD_TRACE_GENERATOR,
                    {path, "--kernels", QString::number(kernels), "--kernels-per-iteration", "100"});
    if (!generator.waitForFinished(60000) || generator.exitCode() != 0) return {};
    return path;
}

void SessionTest::initTestCase() {
    QVERIFY(dir_.isValid());
    trace_ = generate("small.sqlite", 20000);
    QVERIFY(!trace_.isEmpty());
}

static bool waitFinished(TraceSession&, QSignalSpy& finished) {
    return finished.count() > 0 || finished.wait(60000);
}

void SessionTest::loadsInStages() {
    TraceSession session(trace_);
    QSignalSpy overview(&session, &TraceSession::overviewReady);
    QSignalSpy report(&session, &TraceSession::reportReady);
    QSignalSpy kernels(&session, &TraceSession::kernelsReady);
    QSignalSpy progress(&session, &TraceSession::progressChanged);
    QSignalSpy failed(&session, &TraceSession::failed);
    QSignalSpy finished(&session, &TraceSession::finished);
    session.start();
    QCOMPARE(overview.count(), 0);  // nothing arrives synchronously: results come by queued signals
    QVERIFY(waitFinished(session, finished));
    QCOMPARE(failed.count(), 0);
    QCOMPARE(overview.count(), 1);
    QCOMPARE(report.count(), 1);
    QCOMPARE(kernels.count(), 1);
    QVERIFY(progress.count() >= 2);
    QCOMPARE(progress.last().at(0).toInt(), 1000);
    QCOMPARE(session.state(), TraceSession::State::ready);

    // Every kernel with a device interval is in some row, in time order.
    size_t items = 0;
    for (const TimelineRow& row : session.kernels()->rows) {
        if (row.kind != RowKind::kernels) continue;
        items += row.items.size();
        QVERIFY(row.items.sorted());
        QVERIFY(!row.lod.empty());
    }
    // The figures are the analyzer's: the same report as `tbdprof report`, and the memory series'
    // peak is the report's peak.
    tbdprof::analyzer::AnalysisOptions options;
    const tbdprof::analyzer::Report expected = tbdprof::analyzer::analyze_trace(trace_.toStdString(), options);
    QCOMPARE(int64_t(items), expected.kernels.total - expected.kernels.host_timed);
    QCOMPARE(int64_t(items), int64_t(20000));
    QCOMPARE(session.overview()->kernel_estimate, int64_t(20000));
    const tbdprof::analyzer::Report& shown = session.report()->report;
    QCOMPARE(shown.gpu_utilization, expected.gpu_utilization);
    QCOMPARE(shown.memory.peak_bytes, expected.memory.peak_bytes);
    QCOMPARE(session.report()->memory.peak(), expected.memory.peak_bytes);
    QCOMPARE(shown.iterations.count, expected.iterations.count);
    QCOMPARE(int64_t(session.overview()->iterations.size()), expected.iterations.detected);
    // Details of one kernel come from the trace.
    const TimelineRow& row = session.kernels()->rows.front();
    const KernelInfo info = session.kernelInfo(row.items.id(0));
    QVERIFY(info.found);
    QCOMPARE(QString::fromStdString(info.name), QString::fromStdString(row.label_of(0)));
    QCOMPARE(info.duration_ns, row.items.duration(0));
}

void SessionTest::badInput_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("missing") << "missing";
    QTest::newRow("empty") << "empty";
    QTest::newRow("not a trace") << "text";
    QTest::newRow("truncated") << "truncated";
    QTest::newRow("newer format") << "newer";
}

void SessionTest::badInput() {
    QFETCH(QString, kind);
    const QString path = dir_.filePath("bad-" + kind + ".sqlite");
    QFile::remove(path);
    if (kind == "empty") {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
    } else if (kind == "text") {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(8192, 'x'));
    } else if (kind == "truncated") {
        QFile in(trace_);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray bytes = in.readAll();
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(bytes.left(bytes.size() / 2));
    } else if (kind == "newer") {
        QVERIFY(QFile::copy(trace_, path));
        tbdprof::trace::create_database(path.toStdString()).exec("PRAGMA user_version = 999");
    }
    std::string expected;
    try {
        tbdprof::analyzer::check_trace(path.toStdString());
    } catch (const tbdprof::analyzer::TraceError& e) {
        expected = e.what();
    }
    QVERIFY(!expected.empty());
    TraceSession session(path);
    QSignalSpy failed(&session, &TraceSession::failed);
    QSignalSpy finished(&session, &TraceSession::finished);
    session.start();
    QVERIFY(waitFinished(session, finished));
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.first().at(0).toString(), QString::fromStdString(expected));
    QCOMPARE(session.state(), TraceSession::State::failed);
}

void SessionTest::cancelKeepsWhatIsLoaded() {
    const QString big = generate("cancel.sqlite", 400000);
    QVERIFY(!big.isEmpty());
    TraceSession session(big);
    QSignalSpy finished(&session, &TraceSession::finished);
    QSignalSpy overview(&session, &TraceSession::overviewReady);
    session.start();
    QVERIFY(overview.count() > 0 || overview.wait(60000));
    session.cancel();
    QVERIFY(waitFinished(session, finished));
    QVERIFY(session.state() == TraceSession::State::cancelled || session.state() == TraceSession::State::ready);
    QVERIFY(session.kernels());
    QCOMPARE(session.kernels()->complete, session.state() == TraceSession::State::ready);
    // Loading again after a cancel reads everything.
    session.start();
    QSignalSpy again(&session, &TraceSession::finished);
    QVERIFY(again.wait(60000));
    QCOMPARE(session.state(), TraceSession::State::ready);
}

QTEST_GUILESS_MAIN(SessionTest)
#include "session_test.moc"
