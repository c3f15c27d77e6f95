// viewer_core unit tests, headless: time <-> pixel mapping and level-of-detail queries
// (data-driven, with exact peaks), and QAbstractItemModelTester over every model.
#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTest>

#include "allocations_model.h"
#include "facts_models.h"
#include "interval_lod.h"
#include "kernel_stats_model.h"
#include "memory_series.h"
#include "time_axis.h"

using namespace tbdprof::viewer;
using tbdprof::analyzer::MemoryPoint;

class CoreTest : public QObject {
    Q_OBJECT
private slots:
    void axisMapping_data();
    void axisMapping();
    void axisZoomKeepsAnchor_data();
    void axisZoomKeepsAnchor();
    void axisClamps();
    void lodBusyFraction_data();
    void lodBusyFraction();
    void lodLongestAndLevels();
    void itemLookup();
    void lodNearInt64Limit();
    void smallRowsStaySmall();
    void memoryExtent_data();
    void memoryExtent();
    void memoryPeakNeverSmoothed();
    void kernelModel();
    void allocationsModelPages();
    void factModels();
};

void CoreTest::axisMapping_data() {
    QTest::addColumn<qint64>("run");
    QTest::addColumn<int>("width");
    QTest::addColumn<double>("t");
    QTest::addColumn<double>("x");
    QTest::newRow("start") << qint64(1000) << 100 << 0.0 << 0.0;
    QTest::newRow("middle") << qint64(1000) << 100 << 500.0 << 50.0;
    QTest::newRow("end") << qint64(1000) << 100 << 1000.0 << 100.0;
    QTest::newRow("1 s over 1000 px") << qint64(1'000'000'000) << 1000 << 2.5e8 << 250.0;
}

void CoreTest::axisMapping() {
    QFETCH(qint64, run);
    QFETCH(int, width);
    QFETCH(double, t);
    QFETCH(double, x);
    TimeAxis axis;
    axis.set_run(run, width);
    QCOMPARE(axis.x_of(t), x);
    QCOMPARE(axis.trace_ns_at(x), t);
}

void CoreTest::axisZoomKeepsAnchor_data() {
    QTest::addColumn<double>("factor");
    QTest::addColumn<double>("anchor");
    QTest::newRow("in at left") << 2.0 << 0.0;
    QTest::newRow("in at centre") << 4.0 << 500.0;
    QTest::newRow("in at right") << 8.0 << 999.0;
    QTest::newRow("deep") << 1e5 << 300.0;
}

void CoreTest::axisZoomKeepsAnchor() {
    QFETCH(double, factor);
    QFETCH(double, anchor);
    TimeAxis axis;
    axis.set_run(1'000'000, 1000);
    const double before = axis.trace_ns_at(anchor);
    axis.zoom(factor, anchor);
    QVERIFY(std::abs(axis.trace_ns_at(anchor) - before) < 1e-6 * 1'000'000);
    QVERIFY(std::abs(axis.ns_per_px() - 1000.0 / factor) < 1e-9 * 1000);
}

void CoreTest::axisClamps() {
    TimeAxis axis;
    axis.set_run(1000, 100);
    axis.zoom(1e9, 50);  // far beyond 1 ns per 100 px
    QCOMPARE(axis.ns_per_px(), TimeAxis::kMinNsPerPx);
    axis.fit_run();
    axis.zoom(1e-6, 50);  // zoom out: at most a tenth beyond the run
    QVERIFY(axis.ns_per_px() <= 1000 * 1.1 / 100 + 1e-9);
    axis.fit_run();
    axis.zoom(10, 0);
    axis.pan(-1e6);  // far left: half the view still inside the run
    QVERIFY(axis.end_trace_ns() >= (axis.end_trace_ns() - axis.begin_trace_ns()) / 2 - 1e-9);
    axis.pan(1e6);
    QVERIFY(axis.begin_trace_ns() <= 1000);
}

void CoreTest::lodBusyFraction_data() {
    // Items (start, end) pairs flattened; expected busy of level-0 bucket 0 with a forced 64-bucket base.
    QTest::addColumn<QList<qint64>>("items");
    QTest::addColumn<qint64>("run");
    QTest::addColumn<double>("busy_total_ns");
    QTest::newRow("one item") << QList<qint64>{0, 50} << qint64(6400) << 50.0;
    QTest::newRow("overlap counts once") << QList<qint64>{0, 50, 20, 80} << qint64(6400) << 80.0;
    QTest::newRow("nested") << QList<qint64>{0, 100, 10, 20} << qint64(6400) << 100.0;
    QTest::newRow("crossing buckets") << QList<qint64>{90, 250} << qint64(6400) << 160.0;
    QTest::newRow("many") << QList<qint64>{0, 10, 20, 30, 40, 50, 60, 70} << qint64(6400) << 40.0;
}

void CoreTest::lodBusyFraction() {
    QFETCH(QList<qint64>, items);
    QFETCH(qint64, run);
    QFETCH(double, busy_total_ns);
    ItemRow row;
    for (int i = 0; i + 1 < items.size(); i += 2) row.add(items[i], items[i + 1], 0, i / 2);
    IntervalMipmap lod;
    lod.build(row, run);
    // Covered time summed over any level is the union of the items, exactly.
    for (int level = 0; level < lod.levels(); ++level) {
        double covered = 0;
        for (size_t b = 0; b < lod.bucket_count(level); ++b)
            covered += double(lod.bucket(level, b).busy) * double(lod.span(level));
        QVERIFY2(std::abs(covered - busy_total_ns) < 1e-3 * busy_total_ns + 1e-6, qPrintable(QString::number(covered)));
    }
    QCOMPARE(lod.bucket_count(lod.levels() - 1), size_t(1));
}

void CoreTest::lodLongestAndLevels() {
    ItemRow row;
    // 1000 items of 10 ns every 100 ns, one of 70 ns at index 500.
    for (int i = 0; i < 1000; ++i) row.add(i * 100, i * 100 + (i == 500 ? 70 : 10), static_cast<uint32_t>(i % 3), i);
    IntervalMipmap lod;
    lod.build(row, 100'000);
    const int top = lod.levels() - 1;
    QCOMPARE(lod.bucket(top, 0).longest, uint32_t(501));
    // level_for: the coarsest level no wider than asked.
    for (double ns : {1.0, 100.0, 1000.0, 5000.0, 1e9}) {
        const int level = lod.level_for(ns);
        QVERIFY(level == 0 || double(lod.span(level)) <= ns);
        QVERIFY(level + 1 >= lod.levels() || double(lod.span(level + 1)) > ns);
    }
    // Busy of the top bucket is total busy / its span.
    const double busy = double(lod.bucket(top, 0).busy) * double(lod.span(top));
    QVERIFY(std::abs(busy - (999 * 10 + 70)) < 1.0);
}

// A run of ~INT64_MAX ns overflowed `span * buckets` and the span doubling never ended.
void CoreTest::lodNearInt64Limit() {
    ItemRow row;
    row.add(-1000, INT64_MAX, 0, 1);  // end - start is past INT64_MAX: saturated, never negative
    row.add(0, 1000, 0, 2);
    row.add(INT64_MAX - 2000, INT64_MAX, 0, 3);
    QCOMPARE(row.duration(0), INT64_MAX);
    QCOMPARE(row.end(2), INT64_MAX);
    QCOMPARE(saturating_end(INT64_MAX - 10, 1000), INT64_MAX);
    QCOMPARE(saturating_end(INT64_MIN + 10, -1000), INT64_MIN);
    IntervalMipmap lod;
    lod.build(row, INT64_MAX - 5);
    QVERIFY(lod.levels() > 1);
    QVERIFY(lod.span(0) > 0);
    QCOMPARE(lod.span(lod.levels() + 70), INT64_MAX);  // saturates, never wraps
    for (int level = 0; level < lod.levels(); ++level) {
        QVERIFY(lod.span(level) > 0);
        for (size_t b = 0; b < lod.bucket_count(level); ++b) {
            QVERIFY(lod.bucket(level, b).busy >= 0 && lod.bucket(level, b).busy <= 1.0f);
        }
    }
    QCOMPARE(lod.level_for(1e30), lod.levels() - 1);
}

// Each row's first chunk was a whole one (1.25 MiB zeroed), so 100 000 one-item rows took
// 23 GB. A row's storage now grows with its items, and keeps every item reachable as it grows.
void CoreTest::smallRowsStaySmall() {
    ItemRow one;
    one.add(0, 10, 0, 1);
    QVERIFY2(one.bytes() < 1024, qPrintable(QString::number(one.bytes())));
    ItemRow many;
    const int64_t n = 200'000;  // past the first chunk (64 K) and through its doublings
    for (int64_t i = 0; i < n; ++i) many.add(i * 10, i * 10 + 5, static_cast<uint32_t>(i % 7), 1000 + i);
    QCOMPARE(many.size(), size_t(n));
    for (int64_t i : {int64_t{0}, int64_t{15}, int64_t{16}, int64_t{1000}, int64_t{65535}, int64_t{65536}, n - 1}) {
        QCOMPARE(many.start(static_cast<size_t>(i)), i * 10);
        QCOMPARE(many.id(static_cast<size_t>(i)), 1000 + i);
        QCOMPARE(many.label(static_cast<size_t>(i)), static_cast<uint32_t>(i % 7));
    }
    QVERIFY(many.bytes() < size_t(n) * 40);
}

void CoreTest::itemLookup() {
    ItemRow row;
    row.add(0, 100, 0, 10);
    row.add(200, 5'000'000'000, 1, 11);  // longer than 32 bits of ns
    row.add(300, 400, 2, 12);
    QCOMPARE(row.duration(1), int64_t(5'000'000'000 - 200));
    QCOMPARE(row.max_duration(), int64_t(5'000'000'000 - 200));
    QCOMPARE(row.item_at(50, 0), size_t(0));
    QCOMPARE(row.item_at(350, 0), size_t(2));  // the later item inside the long one
    QCOMPARE(row.item_at(150, 10), SIZE_MAX);
    QCOMPARE(row.item_at(140, 60), size_t(0));              // nearer to the first
    QCOMPARE(row.first_overlapping(1'000'000), size_t(0));  // the long item still runs
    QCOMPARE(row.first_starting_at(250), size_t(2));
    QCOMPARE(row.id(1), int64_t(11));
    ItemRow marks;
    marks.add(0, 10, 7, 1, true);
    marks.add(10, 20, 7, 2, false);
    QCOMPARE(marks.label(0), uint32_t(7));
    QVERIFY(marks.marked(0));
    QVERIFY(!marks.marked(1));
    // Ids far apart (more than 32 bits) and falling still come back whole.
    ItemRow far;
    const int64_t ids[] = {5, 1LL << 40, 7, -3, (1LL << 40) + 1};
    for (int i = 0; i < 5; ++i) far.add(i, i + 1, 0, ids[i]);
    for (int i = 0; i < 5; ++i) QCOMPARE(far.id(static_cast<size_t>(i)), ids[i]);
}

void CoreTest::memoryExtent_data() {
    QTest::addColumn<qint64>("t0");
    QTest::addColumn<qint64>("t1");
    QTest::addColumn<qint64>("min");
    QTest::addColumn<qint64>("max");
    // Series: t=10: 100, t=20: 300, t=20: 250 (same moment), t=30: 50, t=40: 400
    QTest::newRow("before anything") << qint64(0) << qint64(5) << qint64(0) << qint64(0);
    QTest::newRow("spanning start") << qint64(0) << qint64(15) << qint64(0) << qint64(100);
    QTest::newRow("one step in force") << qint64(12) << qint64(18) << qint64(100) << qint64(100);
    QTest::newRow("zero-width peak at 20") << qint64(15) << qint64(25) << qint64(100) << qint64(300);
    QTest::newRow("starting at the equal times") << qint64(20) << qint64(21) << qint64(250) << qint64(300);
    QTest::newRow("dip") << qint64(25) << qint64(35) << qint64(50) << qint64(250);
    QTest::newRow("whole") << qint64(0) << qint64(100) << qint64(0) << qint64(400);
    QTest::newRow("after the last") << qint64(50) << qint64(60) << qint64(400) << qint64(400);
}

static MemoryPoint point(int64_t t, int64_t weights, int64_t activations) {
    MemoryPoint p;
    p.trace_ns = t;
    p.bytes[0] = weights;
    p.bytes[3] = activations;
    return p;
}

void CoreTest::memoryExtent() {
    QFETCH(qint64, t0);
    QFETCH(qint64, t1);
    QFETCH(qint64, min);
    QFETCH(qint64, max);
    MemorySeries series;
    series.build({point(10, 100, 0), point(20, 100, 200), point(20, 100, 150), point(30, 50, 0), point(40, 100, 300)});
    const RangeExtent e = series.extent(t0, t1);
    QCOMPARE(e.min, int64_t(min));
    QCOMPARE(e.max, int64_t(max));
    QCOMPARE(series.peak(), int64_t(400));
}

void CoreTest::memoryPeakNeverSmoothed() {
    // 100 000 steps with one narrow spike: every split of the run into pixel columns finds it exactly.
    std::vector<MemoryPoint> points;
    for (int i = 0; i < 100'000; ++i) points.push_back(point(i * 10, 1000 + (i % 7), 0));
    points[77'777] = point(777'770, 1000, 9'000'000);
    MemorySeries series;
    series.build(points);
    QCOMPARE(series.peak(), int64_t(9'001'000));
    for (int width : {1, 3, 100, 1000, 1920}) {
        int64_t seen = 0;
        const double step = 1'000'000.0 / width;
        for (int x = 0; x < width; ++x) {
            const RangeExtent e = series.extent(int64_t(x * step), int64_t((x + 1) * step));
            seen = std::max(seen, e.max);
            if (e.max == 9'001'000) QCOMPARE(e.max_point, size_t(77'777));
        }
        QCOMPARE(seen, int64_t(9'001'000));
    }
    // Exact min and max over any index range, against a plain scan.
    for (auto [first, last] :
         {std::pair<size_t, size_t>{0, 0}, {5, 17}, {77'000, 78'000}, {1, 99'998}, {99'999, 99'999}}) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = first; i <= last; ++i) {
            lo = std::min(lo, series.total(i));
            hi = std::max(hi, series.total(i));
        }
        const RangeExtent e = series.extent_of_points(first, last);
        QCOMPARE(e.min, lo);
        QCOMPARE(e.max, hi);
    }
}

static std::vector<tbdprof::analyzer::KernelStat> sampleKernels() {
    std::vector<tbdprof::analyzer::KernelStat> kernels(3);
    kernels[0] = {"sgemm", 10, 1000, 100, 2e9, 0.5, 50, 200};
    kernels[1] = {"relu", 30, 600, 20, 0, 0.3, 10, 40};
    kernels[2] = {"softmax", 5, 400, 80, 0, 0.2, 70, 90};
    return kernels;
}

void CoreTest::kernelModel() {
    KernelStatsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setKernels(sampleKernels());
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), int(KernelStatsModel::ColumnCount));
    QCOMPARE(model.data(model.index(0, KernelStatsModel::Name)).toString(), QString("sgemm"));
    QCOMPARE(model.data(model.index(1, KernelStatsModel::Min), KernelStatsModel::SortRole).toLongLong(), 10LL);
    QSortFilterProxyModel proxy;
    QAbstractItemModelTester proxy_tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    proxy.setSortRole(KernelStatsModel::SortRole);
    proxy.sort(KernelStatsModel::Count, Qt::DescendingOrder);
    QCOMPARE(proxy.data(proxy.index(0, KernelStatsModel::Name)).toString(), QString("relu"));
    proxy.setFilterKeyColumn(KernelStatsModel::Name);
    proxy.setFilterFixedString("soft");
    QCOMPARE(proxy.rowCount(), 1);
    model.setKernels({});
    QCOMPARE(proxy.rowCount(), 0);
}

void CoreTest::allocationsModelPages() {
    Overview overview;
    for (int i = 0; i < 1000; ++i) {
        AllocationInfo a;
        a.id = i;
        a.bytes = 1000 + i;
        a.alloc_ns = i;
        a.free_ns = i % 2 ? 2000 : INT64_MAX;
        a.category = i % 8;
        overview.allocations.push_back(a);
    }
    AllocationsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.showMoment(&overview, 500);
    QCOMPARE(model.liveCount(), size_t(501));
    QCOMPARE(model.rowCount(), AllocationsModel::kPage);  // paged
    QVERIFY(model.canFetchMore({}));
    while (model.canFetchMore({})) model.fetchMore({});
    QCOMPARE(model.rowCount(), 501);
    QCOMPARE(model.data(model.index(0, AllocationsModel::Id)).toLongLong(), 500LL);  // largest first
    model.showMoment(&overview, 5000);                                               // the odd ones were freed at 2000
    QCOMPARE(model.liveCount(), size_t(500));
    model.showMoment(&overview, -1);
    QCOMPARE(model.rowCount(), 0);
}

void CoreTest::factModels() {
    tbdprof::analyzer::Report a, b;
    a.gpu_utilization = 0.5;
    b.gpu_utilization = 0.75;
    a.memory.peak_bytes = 1 << 20;
    b.memory.peak_bytes = 1 << 21;
    b.memory.at_peak[0] = 1 << 21;
    a.notes.push_back("no iterations detected");
    SummaryModel summary;
    QAbstractItemModelTester summary_tester(&summary, QAbstractItemModelTester::FailureReportingMode::QtTest);
    summary.setReport(&a);
    bool has_note = false;
    for (int r = 0; r < summary.rowCount(); ++r)
        has_note |= summary.data(summary.index(r, 2)).toString() == "no iterations detected";
    QVERIFY(has_note);
    CompareModel compare;
    QAbstractItemModelTester compare_tester(&compare, QAbstractItemModelTester::FailureReportingMode::QtTest);
    compare.setReports({&a, &b}, {"a", "b"});
    QCOMPARE(compare.columnCount(), 3);
    int utilization_row = -1, weights_row = -1;
    for (int r = 0; r < compare.rowCount(); ++r) {
        const QString metric = compare.data(compare.index(r, 0)).toString();
        if (metric == "GPU: GPU utilization") utilization_row = r;
        if (metric == "memory: at peak: weights") weights_row = r;
    }
    QVERIFY(utilization_row >= 0);
    QVERIFY(compare.data(compare.index(utilization_row, 2)).toString().contains("+50.0%"));
    QVERIFY(weights_row >= 0);
    QCOMPARE(compare.data(compare.index(weights_row, 1)).toString(), QString("-"));  // absent in a

    // The tags' verdict and its reasons come with the figures they qualify.
    b.memory.tags.verdict = tbdprof::analyzer::TagVerdict::implausible;
    b.memory.tags.summary = "memory breakdown unreliable: ...";
    b.memory.tags.warnings = {"no gradients: ..."};
    b.memory.low_confidence_at_peak[0] = 1 << 19;
    summary.setReport(&b);
    QStringList texts;
    for (int r = 0; r < summary.rowCount(); ++r)
        texts << summary.data(summary.index(r, 1)).toString() + " = " + summary.data(summary.index(r, 2)).toString();
    QVERIFY2(texts.contains("memory tags = memory breakdown unreliable: ..."), qPrintable(texts.join("\n")));
    QVERIFY(texts.contains("memory tags unreliable, reason 1 = no gradients: ..."));
    QVERIFY(texts.contains("at peak: weights, low confidence = 25.00%"));
}

QTEST_GUILESS_MAIN(CoreTest)
#include "core_test.moc"
