// viewer_core unit tests for the memory view's lifetime bars (which allocations and tensors are
// alive in a span, their lanes never overlapping, hit testing), the timeline mipmap's graph-replay
// bits (a folded block knows it hides replayed kernels), and the Compare view's alignment on
// iterations (figures per trace equal to the report's, per-iteration peaks from the memory series,
// changes from the first trace), with QAbstractItemModelTester over the new model.
#include <QAbstractItemModelTester>
#include <QTest>

#include <algorithm>
#include <map>

#include "allocation_lanes.h"
#include "interval_lod.h"
#include "iteration_compare.h"

using namespace tbdprof::viewer;
namespace analyzer = tbdprof::analyzer;

namespace {

AllocationInfo allocation(int64_t id, int64_t alloc_ns, int64_t free_ns, int64_t bytes, int category) {
    AllocationInfo a;
    a.id = id;
    a.alloc_ns = alloc_ns;
    a.free_ns = free_ns;
    a.bytes = bytes;
    a.category = category;
    return a;
}

// Four allocations (one never freed, one a pooled segment with two tensors), in alloc_ns order.
Overview sample_overview() {
    Overview o;
    o.duration_ns = 1000;
    o.allocations.push_back(allocation(1, 0, 400, 100, 0));         // weights-like, [0, 400)
    o.allocations.push_back(allocation(2, 100, 200, 50, 3));        // [100, 200)
    o.allocations.push_back(allocation(3, 150, INT64_MAX, 10, 1));  // never freed: to the run's end
    AllocationInfo segment = allocation(4, 300, 900, 4096, analyzer::kUntagged);
    segment.subrange_first = 0;
    segment.subrange_count = 2;
    o.allocations.push_back(segment);
    SubRangeInfo r1;
    r1.id = 10, r1.allocation = 4, r1.offset = 0, r1.bytes = 1024, r1.begin_ns = 320, r1.end_ns = 500, r1.category = 3;
    SubRangeInfo r2;
    r2.id = 11, r2.allocation = 4, r2.offset = 1024, r2.bytes = 2048, r2.begin_ns = 600, r2.end_ns = 800,
    r2.category = 2;
    o.subranges = {r1, r2};
    return o;
}

}  // namespace

class LanesTest : public QObject {
    Q_OBJECT
private slots:
    void lifetimesInSpan_data();
    void lifetimesInSpan();
    void lanesNeverOverlap();
    void tooManyBars();
    void barHitTest();
    void lodGraphReplayBits();
    void iterationFigures();
    void iterationModel();
};

void LanesTest::lifetimesInSpan_data() {
    QTest::addColumn<qint64>("t0");
    QTest::addColumn<qint64>("t1");
    QTest::addColumn<QList<qint64>>("ids");  // allocation id per bar, by begin (sub-ranges: 100 + sub-range id)
    QTest::addColumn<int>("lanes");
    QTest::addColumn<bool>("subranges");
    QTest::newRow("whole run") << qint64(0) << qint64(1000) << QList<qint64>{1, 2, 3, 110, 111} << 3 << true;
    QTest::newRow("before the segment") << qint64(0) << qint64(300) << QList<qint64>{1, 2, 3} << 3 << false;
    QTest::newRow("only the never-freed one and a tensor")
        << qint64(850) << qint64(1000) << QList<qint64>{3} << 1 << false;
    QTest::newRow("second tensor") << qint64(650) << qint64(700) << QList<qint64>{3, 111} << 2 << true;
    QTest::newRow("gap between tensors") << qint64(520) << qint64(580) << QList<qint64>{3} << 1 << false;
    QTest::newRow("free time is exclusive") << qint64(200) << qint64(250) << QList<qint64>{1, 3} << 2 << false;
}

void LanesTest::lifetimesInSpan() {
    QFETCH(qint64, t0);
    QFETCH(qint64, t1);
    QFETCH(QList<qint64>, ids);
    QFETCH(int, lanes);
    QFETCH(bool, subranges);
    const Overview o = sample_overview();
    const LifetimeLayout layout = layout_lifetimes(o, t0, t1, o.duration_ns, 100);
    QVERIFY(!layout.too_many);
    QList<qint64> got;
    for (const LifetimeBar& bar : layout.bars) {
        const AllocationInfo& a = o.allocations[bar.allocation];
        if (bar.subrange == SIZE_MAX) {
            got << a.id;
            QCOMPARE(bar.begin_trace_ns, a.alloc_ns);
            QCOMPARE(bar.end_trace_ns, a.free_ns == INT64_MAX ? o.duration_ns : a.free_ns);
            QCOMPARE(bar.bytes, a.bytes);
            QCOMPARE(bar.category, a.category);
        } else {
            const SubRangeInfo& r = o.subranges[bar.subrange];
            got << 100 + r.id;
            QCOMPARE(r.allocation, a.id);  // a tensor stays linked to its segment
            QCOMPARE(bar.begin_trace_ns, r.begin_ns);
            QCOMPARE(bar.end_trace_ns, r.end_ns);
            QCOMPARE(bar.bytes, r.bytes);
            QCOMPARE(bar.category, r.category);
        }
    }
    QCOMPARE(got, ids);
    QCOMPARE(layout.lanes, lanes);
    QCOMPARE(layout.has_subranges, subranges);
}

void LanesTest::lanesNeverOverlap() {
    // 500 allocations of pseudo-random lifetimes: bars sharing a lane never overlap, and the lane
    // count equals the most alive at one moment (first fit by begin time is optimal for intervals).
    Overview o;
    o.duration_ns = 100000;
    uint64_t seed = 12345;
    auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    std::vector<int64_t> starts;
    for (int i = 0; i < 500; ++i) starts.push_back(static_cast<int64_t>(next() % 90000));
    std::sort(starts.begin(), starts.end());
    for (int i = 0; i < 500; ++i)
        o.allocations.push_back(allocation(i, starts[static_cast<size_t>(i)],
                                           starts[static_cast<size_t>(i)] + 1 + static_cast<int64_t>(next() % 5000), 64,
                                           0));
    const LifetimeLayout layout = layout_lifetimes(o, 0, o.duration_ns, o.duration_ns, 10000);
    QCOMPARE(layout.bars.size(), size_t(500));
    std::map<int, std::vector<const LifetimeBar*>> by_lane;
    for (const LifetimeBar& bar : layout.bars) by_lane[bar.lane].push_back(&bar);
    for (auto& [lane, bars] : by_lane) {
        for (size_t i = 1; i < bars.size(); ++i) QVERIFY(bars[i - 1]->end_trace_ns <= bars[i]->begin_trace_ns);
    }
    int most = 0;
    for (const LifetimeBar& bar : layout.bars) {
        int alive = 0;
        for (const LifetimeBar& other : layout.bars)
            alive += other.begin_trace_ns <= bar.begin_trace_ns && other.end_trace_ns > bar.begin_trace_ns;
        most = std::max(most, alive);
    }
    QCOMPARE(layout.lanes, most);
}

void LanesTest::tooManyBars() {
    const Overview o = sample_overview();
    const LifetimeLayout layout = layout_lifetimes(o, 0, 1000, o.duration_ns, 4);
    QVERIFY(layout.too_many);
    QVERIFY(layout.bars.empty());
    QCOMPARE(layout.lanes, 0);
    QVERIFY(!layout_lifetimes(o, 0, 1000, o.duration_ns, 5).too_many);
}

void LanesTest::barHitTest() {
    const Overview o = sample_overview();
    const LifetimeLayout layout = layout_lifetimes(o, 0, 1000, o.duration_ns, 100);
    for (const LifetimeBar& bar : layout.bars) {
        const LifetimeBar* hit =
            bar_at(layout, static_cast<double>(bar.begin_trace_ns + bar.end_trace_ns) / 2, bar.lane);
        QVERIFY(hit);
        QCOMPARE(hit->allocation, bar.allocation);
        QCOMPARE(hit->subrange, bar.subrange);
        QVERIFY(!bar_at(layout, static_cast<double>(bar.end_trace_ns) + 5, bar.lane) ||
                bar_at(layout, static_cast<double>(bar.end_trace_ns) + 5, bar.lane) != &bar);
    }
    QVERIFY(!bar_at(layout, 500, layout.lanes));  // below the last lane
    // Slack keeps a thin bar clickable just outside its ends.
    const LifetimeBar& first = layout.bars.front();
    QVERIFY(!bar_at(layout, static_cast<double>(first.begin_trace_ns) - 3, first.lane));
    QCOMPARE(bar_at(layout, static_cast<double>(first.begin_trace_ns) - 3, first.lane, 5), &first);
}

void LanesTest::lodGraphReplayBits() {
    // 1000 items of 10 ns every 100 ns; items 500..509 were run by a graph replay.
    ItemRow row;
    for (int i = 0; i < 1000; ++i) row.add(i * 100, i * 100 + 10, 0, i, i >= 500 && i < 510);
    IntervalMipmap lod;
    lod.build(row, 100000, 256);
    for (int level = 0; level < lod.levels(); ++level) {
        const int64_t span = lod.span(level);
        size_t marked = 0;
        for (size_t b = 0; b < lod.bucket_count(level); ++b) {
            const int64_t begin = static_cast<int64_t>(b) * span, end = begin + span;
            // Exactly the buckets in which a replayed item starts.
            const bool expected = begin < 51000 && end > 50000;
            QCOMPARE(lod.marked(level, b), expected);
            marked += lod.marked(level, b);
        }
        QVERIFY(marked >= 1);
    }
    // A row without replays keeps no bits.
    ItemRow plain;
    for (int i = 0; i < 100; ++i) plain.add(i * 100, i * 100 + 10, 0, i);
    IntervalMipmap plain_lod;
    plain_lod.build(plain, 10000, 64);
    for (size_t b = 0; b < plain_lod.bucket_count(0); ++b) QVERIFY(!plain_lod.marked(0, b));
}

namespace {

// A report and memory series: iterations [0,100), [100,250), [250,300); memory rising to a peak in
// the second iteration.
ReportData sample_report(double scale) {
    ReportData data;
    analyzer::Report& r = data.report;
    r.iterations.count = 3;
    r.iterations.spans = {{0, 100}, {100, 250}, {250, 300}};
    r.iterations.mean_s = 100e-9 * scale;
    r.iterations.p95_s = 150e-9 * scale;
    r.iterations.kernels_per_iteration = 12.0 * scale;
    r.memory.peak_bytes = static_cast<int64_t>(1000 * scale);
    r.memory.at_peak[0] = static_cast<int64_t>(600 * scale);
    r.memory.at_peak[3] = static_cast<int64_t>(400 * scale);
    std::vector<analyzer::MemoryPoint> points(4);
    points[0].trace_ns = 0, points[0].bytes[0] = static_cast<int64_t>(600 * scale);
    points[1].trace_ns = 120, points[1].bytes[0] = static_cast<int64_t>(600 * scale),
    points[1].bytes[3] = static_cast<int64_t>(400 * scale);
    points[2].trace_ns = 200, points[2].bytes[0] = static_cast<int64_t>(600 * scale),
    points[2].bytes[3] = static_cast<int64_t>(100 * scale);
    points[3].trace_ns = 260, points[3].bytes[0] = static_cast<int64_t>(600 * scale);
    data.memory.build(points);
    return data;
}

}  // namespace

void LanesTest::iterationFigures() {
    const ReportData a = sample_report(1);
    ReportData b = sample_report(2);
    b.report.memory.tags.verdict = tbdprof::analyzer::TagVerdict::implausible;  // said beside the split
    b.report.memory.tags.warnings = {"no weights: ...", "no gradients: ..."};
    const TraceIterations ta = trace_iterations_of(a, "a"), tb = trace_iterations_of(b, "b");
    QCOMPARE(ta.seconds, (std::vector<double>{100e-9, 150e-9, 50e-9}));
    // The memory series' exact maxima, counting the value in force at each iteration's start.
    QCOMPARE(ta.peak_bytes, (std::vector<int64_t>{600, 1000, 700}));
    QCOMPARE(ta.peak_split[1][3], int64_t(400));
    QCOMPARE(tb.peak_bytes, (std::vector<int64_t>{1200, 2000, 1400}));
    const std::vector<IterationFigure> figures = iteration_figures({ta, tb});
    std::map<QString, IterationFigure> by_name;
    for (const IterationFigure& f : figures) by_name[f.name.trimmed()] = f;
    QCOMPARE(*by_name.at("iteration time, mean").values[1], b.report.iterations.mean_s);
    QCOMPARE(*by_name.at("iteration time, p95").values[0], a.report.iterations.p95_s);
    QCOMPARE(*by_name.at("kernels per iteration").values[1], 24.0);
    QCOMPARE(*by_name.at("peak memory").values[1], 2000.0);
    QCOMPARE(*by_name.at("at peak: activations").values[0], 400.0);
    QCOMPARE(*by_name.at("iteration peak memory, mean").values[0], (600.0 + 1000.0 + 700.0) / 3);
    QVERIFY(!by_name.at("tags: reasons to doubt").values[0]);  // not checked
    QCOMPARE(*by_name.at("tags: reasons to doubt").values[1], 2.0);
    QVERIFY(!by_name.count("kernel time per iteration"));  // neither trace has it
    QVERIFY(!by_name.count("at peak: gradients"));         // zero in both
    QCOMPARE(*change_from(100.0, 150.0), 0.5);
    QVERIFY(!change_from(0.0, 5.0));
    QVERIFY(!change_from(std::nullopt, 5.0));
}

void LanesTest::iterationModel() {
    const ReportData a = sample_report(1), b = sample_report(1.02), c = sample_report(0.5);
    IterationCompareModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTraces({trace_iterations_of(a, "a")});
    QCOMPARE(model.rowCount(), 0);  // one trace: nothing to compare
    model.setTraces({trace_iterations_of(a, "a"), trace_iterations_of(b, "b"), trace_iterations_of(c, "c")});
    QCOMPARE(model.columnCount(), 4);
    QCOMPARE(model.headerData(2, Qt::Horizontal).toString(), QString("b"));
    int peak_row = -1;
    for (int r = 0; r < model.rowCount(); ++r)
        if (model.index(r, 0).data().toString() == "peak memory") peak_row = r;
    QVERIFY(peak_row >= 0);
    QVERIFY(!model.index(peak_row, 1).data(IterationCompareModel::ChangeRole).isValid());  // the first trace
    QCOMPARE(model.index(peak_row, 2).data(IterationCompareModel::ChangeRole).toDouble(), 0.02);
    QCOMPARE(model.index(peak_row, 3).data(IterationCompareModel::ChangeRole).toDouble(), -0.5);
    QCOMPARE(model.index(peak_row, 3).data().toString(), QString("500 B (-50.0%)"));
    QCOMPARE(model.index(peak_row, 3).data(Qt::UserRole).toDouble(), 500.0);
}

QTEST_GUILESS_MAIN(LanesTest)
#include "lanes_test.moc"
