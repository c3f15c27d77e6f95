// The Memory view's predicted timeline (--whatif): the model the view draws, loaded by a
// TraceSession from a recorded sample, holds what `tbdprof whatif ... --format json` says for the
// same scenario (its name, peak, the moment of the peak and the split by category there), and bad
// what-if options fail the load with the analyzer's sentence.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include "tbdprof/analyzer/report.h"
#include "trace_session.h"

using namespace tbdprof::viewer;

namespace {

QString sample(const char* name) {
    return qEnvironmentVariable("TBD_VIEWER_SAMPLES") + "/" + name;
}

// The last scenario (every change applied) of `tbdprof whatif TRACE OPTIONS --format json`.
QJsonObject analyzer_scenario(const QString& trace, const QString& options) {
    QProcess tbdprof;
    QStringList args{"whatif", trace, "--format", "json"};
    args << options.split(' ', Qt::SkipEmptyParts);
    tbdprof.start(TBDPROF_BIN, args);
    if (!tbdprof.waitForFinished(120000) || tbdprof.exitCode() != 0) return {};
    const QJsonArray scenarios =
        QJsonDocument::fromJson(tbdprof.readAllStandardOutput()).object()["scenarios"].toArray();
    return scenarios.isEmpty() ? QJsonObject{} : scenarios.last().toObject();
}

bool load(TraceSession& session) {
    QSignalSpy finished(&session, &TraceSession::finished);
    session.start();
    return finished.wait(120000) && session.state() == TraceSession::State::ready;
}

}  // namespace

class WhatIfTest : public QObject {
    Q_OBJECT
private slots:
    void predictedSeriesIsTheAnalyzers_data();
    void predictedSeriesIsTheAnalyzers();
    void badOptionsFailTheLoad();
};

void WhatIfTest::predictedSeriesIsTheAnalyzers_data() {
    QTest::addColumn<QString>("trace");
    QTest::addColumn<QString>("options");
    QTest::newRow("mlp batch x2") << sample("mlp.sqlite") << "--batch-scale 2";
    QTest::newRow("mlp batch x0.5, bf16") << sample("mlp.sqlite") << "--batch-scale 0.5 --precision bf16";
    QTest::newRow("gpt_arena batch x2") << sample("gpt_arena.sqlite") << "--batch-scale 2";
}

void WhatIfTest::predictedSeriesIsTheAnalyzers() {
    QFETCH(QString, trace);
    QFETCH(QString, options);
    if (!QFile::exists(trace)) QSKIP("sample not recorded (its program is not built)");
    const QJsonObject expected = analyzer_scenario(trace, options);
    QVERIFY2(!expected.isEmpty(), "tbdprof whatif gave no scenario");

    TraceSession session(trace);
    session.setWhatIf(options);
    QVERIFY(load(session));
    const ReportData* data = session.report();
    QVERIFY(data && data->predicted);
    const PredictedMemory& predicted = *data->predicted;
    QVERIFY2(predicted.cannot_predict.empty(), predicted.cannot_predict.c_str());
    QCOMPARE(QString::fromStdString(predicted.scenario), expected["name"].toString());
    const auto peak_bytes = static_cast<int64_t>(expected["peak_bytes"].toDouble());
    QCOMPARE(predicted.peak_bytes, peak_bytes);
    QCOMPARE(predicted.series.peak(), peak_bytes);
    // At the analyzer's peak moment the series holds the peak, split by category as the JSON says (the
    // same total may come back later: the first moment is the peak, as the report counts it).
    const size_t last_at_peak = predicted.series.point_at(static_cast<int64_t>(expected["peak_ns"].toDouble()));
    QVERIFY(last_at_peak != SIZE_MAX);
    size_t at = last_at_peak;
    while (at > 0 && predicted.series.total(at) != peak_bytes &&
           predicted.series.point(at - 1).trace_ns == predicted.series.point(last_at_peak).trace_ns)
        --at;
    QCOMPARE(predicted.series.point(at).trace_ns, static_cast<int64_t>(expected["peak_ns"].toDouble()));
    QCOMPARE(predicted.series.total(at), peak_bytes);
    const tbdprof::analyzer::MemoryPoint& top = predicted.series.point(at);
    const QJsonObject by_category = expected["by_category"].toObject();
    for (int c = 0; c < tbdprof::analyzer::kCategoryCount; ++c) {
        const QString name = QString::fromUtf8(tbdprof::analyzer::category_name(c));
        QCOMPARE(top.bytes[static_cast<size_t>(c)], static_cast<int64_t>(by_category[name].toDouble()));
    }
    // Nothing before the peak moment reaches it.
    QVERIFY(at == 0 || predicted.series.extent_of_points(0, at - 1).max < peak_bytes);
    // A scenario that changes sizes draws another line than the recorded one, on its time axis.
    QVERIFY(predicted.series.peak() != data->memory.peak());
    QVERIFY(predicted.series.point(0).trace_ns >= 0);
    QVERIFY(predicted.series.point(predicted.series.size() - 1).trace_ns <= session.durationNs());
}

void WhatIfTest::badOptionsFailTheLoad() {
    const QString trace = sample("mlp.sqlite");
    if (!QFile::exists(trace)) QSKIP("sample not recorded");
    TraceSession session(trace);
    session.setWhatIf("--batch-scale");
    QSignalSpy finished(&session, &TraceSession::finished);
    session.start();
    QVERIFY(finished.wait(120000));
    QCOMPARE(session.state(), TraceSession::State::failed);
    QVERIFY2(session.error().startsWith("--whatif"), qPrintable(session.error()));
}

QTEST_GUILESS_MAIN(WhatIfTest)
#include "whatif_test.moc"
