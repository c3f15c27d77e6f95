// Import of small hand-written Kineto traces whose every event is known (sample_traces.h).
#include "tbdprof/interop/import.h"
#include "sample_traces.h"
#include "tbdprof/tagger/tagger.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

using namespace tbdprof::interop;
using namespace tbdprof::interop::test;

TEST_CASE("current Kineto layout: GPU work, launches, ranges, memory, devices, distributed info") {
    TempDir dir;
    write_gzip(dir.file("t.json.gz"), current_layout_trace());
    const ImportSummary s = import_trace_file(dir.file("t.json.gz"), dir.file("t.sqlite"));
    const std::string db = dir.file("t.sqlite");
    CHECK(s.format == "kineto");
    CHECK(s.kernels == 3);
    CHECK(s.copies == 1);
    CHECK(s.sets == 1);
    CHECK(s.steps == 2);
    CHECK(s.unknown.at("ph=X cat=some_future_category") == 1);
    CHECK(s.summary_line().find("unknown event types: 1") != std::string::npos);

    // Time 0 is the earliest event (the profiler span at 1000000 us); ns fractions survive.
    CHECK(query_int(db, "SELECT start_ns FROM kernel_view WHERE name = 'volta_sgemm_128x64_nn'") == 40125);
    CHECK(query_int(db, "SELECT duration_ns FROM kernel_view WHERE name = 'volta_sgemm_128x64_nn'") == 20500);
    CHECK(query_int(db, "SELECT launch_ns FROM kernel_view WHERE name = 'volta_sgemm_128x64_nn'") == 25250);
    CHECK(query_text(db, "SELECT grid_x || 'x' || grid_y || 'x' || grid_z || '/' || block_x || '/' || shared_bytes "
                         "FROM kernel_view WHERE name = 'volta_sgemm_128x64_nn'") == "64x2x1/256/4096");
    CHECK(query_int(db, "SELECT run.duration_ns FROM run") == 1000000);
    CHECK(query_text(db, "SELECT command_line FROM run") == "python3 train.py");
    // Kernels are in time order, with the launching thread from the correlated runtime call.
    CHECK(query_rows(db, "SELECT k.name || '|' || t.tid || '|' || s.handle FROM kernel_view AS k JOIN threads AS t ON t.id = k.thread "
                         "JOIN streams AS s ON s.id = k.stream ORDER BY k.id") ==
          "volta_sgemm_128x64_nn|100|7\nadd_kernel|101|7\nncclKernel_AllReduce_RING_LL_Sum_float|100|20\n");
    CHECK(query_text(db, "SELECT kind || '|' || bytes || '|' || start_ns || '|' || duration_ns || '|' || queued_ns || '|' || async || "
                         "'|' || api || '|' || correlation FROM copies") == "htod|4096|210000|2000|10000|1|runtime|14");
    CHECK(query_text(db, "SELECT bytes || '|' || correlation FROM sets") == "256|15");
    CHECK(query_text(db, "SELECT kind || '|' || begin_ns || '|' || end_ns FROM api_calls") == "stream_sync|240000|270000");

    // Ranges: steps, operators, annotations (host and GPU), runtime calls other than synchronisations.
    CHECK(query_rows(db, "SELECT name || '|' || begin_ns || '|' || end_ns FROM ranges WHERE name LIKE 'ProfilerStep#%' ORDER BY begin_ns") ==
          "ProfilerStep#7|10000|410000\nProfilerStep#8|410000|810000\n");
    CHECK(query_int(db, "SELECT count(*) FROM ranges WHERE domain = 'cpu_op'") == 2);
    CHECK(query_int(db, "SELECT end_ns - begin_ns FROM ranges WHERE name = 'aten::add'") == 10500);
    CHECK(query_int(db, "SELECT count(*) FROM ranges WHERE domain = 'user_annotation'") == 3);
    CHECK(query_int(db, "SELECT count(*) FROM ranges WHERE domain = 'gpu_user_annotation' AND thread IS NULL") == 1);
    CHECK(query_int(db, "SELECT count(*) FROM ranges WHERE domain = 'cuda_runtime'") == 5);

    // Memory: matched by address; the free of an unknown block becomes a block live from time 0.
    CHECK(s.memory_addresses);
    CHECK(query_rows(db, "SELECT address || '|' || bytes || '|' || alloc_ns || '|' || ifnull(free_ns, 'live') FROM allocations ORDER BY address") ==
          "139800000000000|8192|0|310000\n139900000000000|1048576|21000|300000\n139900001048576|512|22000|live\n");
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'memory.peak_total_allocated.device0'") == "1057280");
    // Total Allocated is consistent with the events: nothing else was allocated before the trace.
    CHECK(query_int(db, "SELECT count(*) FROM run_notes WHERE key LIKE 'memory.allocated_before_trace.%'") == 0);
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'import.memory_addresses'") == "recorded");

    CHECK(query_text(db, "SELECT name || '|' || cc_major || '.' || cc_minor || '|' || sm_count || '|' || memory_bytes || '|' || clock_khz "
                         "FROM devices") == "Tesla V100-SXM2-32GB|7.0|80|34089730048|1530000");
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'distributed.rank'") == "3");
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'distributed.world_size'") == "8");
    CHECK(query_text(db, "SELECT name FROM threads WHERE tid = 100") == "thread 100 (python3)");
    CHECK(query_int(db, "SELECT count(*) FROM processes") == 1);
}

TEST_CASE("gzip of several members (concatenated .gz files) imports as their joined text") {
    TempDir dir;
    const std::string trace = current_layout_trace();
    write_text(dir.file("plain.json"), trace);
    const size_t middle = trace.size() / 2;
    write_gzip(dir.file("a.gz"), trace.substr(0, middle));
    write_gzip(dir.file("b.gz"), trace.substr(middle, 7));
    write_gzip(dir.file("c.gz"), trace.substr(middle + 7));
    write_text(dir.file("joined.json.gz"),
               read_bytes(dir.file("a.gz")) + read_bytes(dir.file("b.gz")) + read_bytes(dir.file("c.gz")));
    const ImportSummary plain = import_trace_file(dir.file("plain.json"), dir.file("plain.sqlite"));
    const ImportSummary joined = import_trace_file(dir.file("joined.json.gz"), dir.file("joined.sqlite"));
    CHECK(joined.json_bytes == trace.size());
    CHECK(joined.summary_line() == plain.summary_line());
    const std::string ranges = "SELECT name || '|' || begin_ns || '|' || ifnull(end_ns, '') FROM ranges ORDER BY id";
    CHECK(query_rows(dir.file("joined.sqlite"), ranges) == query_rows(dir.file("plain.sqlite"), ranges));
}

TEST_CASE("2021 Kineto layout: capitalised categories, string tids, memory without addresses") {
    TempDir dir;
    write_text(dir.file("old.json"), layout_2021_trace());
    const ImportSummary s = import_trace_file(dir.file("old.json"), dir.file("old.sqlite"));
    const std::string db = dir.file("old.sqlite");
    CHECK(s.format == "kineto-2021");
    CHECK(s.kernels == 2);
    CHECK(s.copies == 1);
    CHECK(s.sets == 1);
    CHECK(s.steps == 1);
    CHECK(s.unknown.empty());
    CHECK(query_rows(db, "SELECT name || '|' || start_ns || '|' || launch_ns || '|' || (grid_x * grid_y * grid_z) || '|' || block_y "
                         "FROM kernel_view ORDER BY id") ==
          "implicit_convolve_sgemm|30000|20000|32|8\nrelu_kernel|75000|30000|16|1\n");
    CHECK(query_int(db, "SELECT count(*) FROM kernels AS k JOIN threads AS t ON t.id = k.thread WHERE t.tid = 555") == 2);
    CHECK(query_text(db, "SELECT kind || '|' || bytes FROM copies") == "htod|65536");
    CHECK(query_int(db, "SELECT count(*) FROM ranges WHERE domain = 'cpu_op'") == 2);
    // Sizes only: the free pairs with the live block of its size; addresses are synthetic (negative).
    CHECK(!s.memory_addresses);
    CHECK(query_rows(db, "SELECT bytes || '|' || alloc_ns || '|' || ifnull(free_ns, 'live') || '|' || (address < 0) FROM allocations "
                         "ORDER BY alloc_ns") == "1024|11000|300000|1\n2048|12000|live|1\n");
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'import.memory_addresses'") == "synthetic");
}

TEST_CASE("a bare event array (Chrome's JSON Array Format) is a trace too") {
    TempDir dir;
    write_text(dir.file("a.json"), R"([{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":2,"args":{"device":0,"stream":7}},
        {"ph":"X","cat":"cpu_op","name":"op","pid":9,"tid":9,"ts":5,"dur":10}])");
    const ImportSummary s = import_trace_file(dir.file("a.json"), dir.file("a.sqlite"));
    CHECK(s.kernels == 1);
    CHECK(s.cpu_ops == 1);
    CHECK(query_int(dir.file("a.sqlite"), "SELECT start_ns FROM kernels") == 5000);
    // No deviceProperties: the device still exists, named as unknown.
    CHECK(query_text(dir.file("a.sqlite"), "SELECT name FROM devices") == "unknown device");
    // What the source does not say is NULL (a recording writes '' for an unknown host or executable).
    CHECK(query_int(dir.file("a.sqlite"), "SELECT count(*) FROM run WHERE host IS NULL") == 1);
    CHECK(query_int(dir.file("a.sqlite"),
                    "SELECT count(*) FROM processes WHERE command_line IS NULL AND executable IS NULL") == 1);
}

TEST_CASE("ranges are numbered by begin time, ranges that begin together in the order the file gives them") {
    // 5,000 ranges over 97 begin times, in an order that is no order: ties by the dozen, long cycles
    // of the permutation that sorts them (import_model.cpp moves each range once along its cycle).
    constexpr int kRanges = 5000;
    std::string text = "[";
    std::vector<std::pair<int, int>> expected;  // (begin time in us, place in the file)
    for (int i = 0; i < kRanges; ++i) {
        const int begin_us = (i * 7919) % 97;
        text += (i ? ",\n" : "") + std::string(R"({"ph":"X","cat":"cpu_op","name":"op)") + std::to_string(i) +
                R"(","pid":1,"tid":1,"ts":)" + std::to_string(begin_us) + R"(,"dur":1})";
        expected.emplace_back(begin_us, i);
    }
    TempDir dir;
    write_text(dir.file("r.json"), text + "]");
    import_trace_file(dir.file("r.json"), dir.file("r.sqlite"));
    std::sort(expected.begin(), expected.end());
    std::string names;
    for (const auto& [begin_us, place] : expected) names += "op" + std::to_string(place) + "\n";
    CHECK(query_rows(dir.file("r.sqlite"), "SELECT name FROM ranges ORDER BY id") == names);
    CHECK(query_int(dir.file("r.sqlite"),
                    "SELECT count(*) FROM ranges AS a JOIN ranges AS b ON b.id = a.id + 1 "
                    "WHERE b.begin_ns < a.begin_ns") == 0);
}

TEST_CASE("memory timeline raw export: categories kept, creates paired with destroys by size") {
    TempDir dir;
    // preexisting weights (ts -1), an activation created and destroyed (destroy bytes negative, as
    // torch writes them), a gradient created; a version increment in between.
    write_gzip(dir.file("m.raw.gz"), "[[-1, 1, 4096, 0], [1000000, 2, 8192, 4], [1000500, 3, 8192, 4], "
                                     "[1002000, 4, -8192, 4], [1003000, 2, 512, 5]]");
    const ImportSummary s = import_trace_file(dir.file("m.raw.gz"), dir.file("m.sqlite"));
    CHECK(s.format == "memory-timeline");
    CHECK(s.allocations == 3);
    CHECK(query_rows(dir.file("m.sqlite"), "SELECT category || '|' || bytes || '|' || alloc_ns || '|' || ifnull(free_ns, 'live') "
                                           "FROM memory_allocations ORDER BY alloc_ns, bytes") ==
          "weights|4096|0|live\nactivations|8192|0|2000\ngradients|512|3000|live\n");
    // PyTorch is named as the source of all three, over the tagger's guesses.
    CHECK(query_int(dir.file("m.sqlite"),
                    "SELECT count(*) FROM allocation_categories WHERE confidence = 0.9 AND "
                    "rule = 'pytorch-memory-timeline' AND reason LIKE 'PyTorch categorized%'") == 3);
}

// The import hands the ranges it wrote to the tagger instead of letting it read them back
// (import.cpp): the tags must be those of tagging the written file again, which reads them.
TEST_CASE("an import's tags, iterations and phases are what tagging its file again gives") {
    TempDir dir;
    ImportOptions replace;
    replace.force = true;
    const auto tags = [](const std::string& db) {
        return query_rows(db,
                          "SELECT id || '|' || process || '|' || idx || '|' || begin_ns || '|' || end_ns || '|' || "
                          "kind FROM iterations ORDER BY id") +
               query_rows(db,
                          "SELECT iteration || '|' || kind || '|' || begin_ns || '|' || end_ns FROM phases "
                          "ORDER BY iteration, begin_ns, kind") +
               query_rows(db,
                          "SELECT c.allocation || '|' || c.category || '|' || c.rule || '|' || c.confidence || "
                          "'|' || ifnull(s.text, '') FROM allocation_categories AS c LEFT JOIN strings AS s "
                          "ON s.id = c.reason_string ORDER BY c.allocation");
    };
    for (const std::string& text : {current_layout_trace(), layout_2021_trace()}) {
        INFO(text.substr(0, 60));
        write_text(dir.file("t.json"), text);
        const ImportSummary s = import_trace_file(dir.file("t.json"), dir.file("t.sqlite"), replace);
        REQUIRE(s.tagged);
        const std::string imported = tags(dir.file("t.sqlite"));
        CHECK(query_int(dir.file("t.sqlite"), "SELECT count(*) FROM allocation_categories") > 0);
        tbdprof::tagger::tag_trace_file(dir.file("t.sqlite"), {});
        CHECK(tags(dir.file("t.sqlite")) == imported);
    }
}

TEST_CASE("every allocation gets one category row, whole insert batches of 64 and the rows past them") {
    // The tagger writes categories 64 rows to a statement (tagger/store.cpp); counts below, at and
    // past a batch, each row bound to its own allocation.
    for (const int allocations : {1, 63, 64, 65, 130}) {
        std::string text = "[";
        for (int i = 0; i < allocations; ++i) {
            const std::string address = std::to_string(139900000000000LL + int64_t{i} * 1048576);
            text +=
                (i ? ",\n" : "") +
                std::string(R"({"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":)") +
                std::to_string(1000 + i) + R"(,"args":{"Device Type":1,"Device Id":0,"Addr":)" + address +
                R"(,"Bytes":)" + std::to_string(4096 * (i + 1)) + "}}";
            if (i % 3 == 0)  // some freed, so that not every tag is the same
                text += R"(,{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":)" +
                        std::to_string(5000 + i) + R"(,"args":{"Device Type":1,"Device Id":0,"Addr":)" + address +
                        R"(,"Bytes":-)" + std::to_string(4096 * (i + 1)) + "}}";
        }
        TempDir dir;
        write_text(dir.file("m.json"), text + "]");
        const ImportSummary s = import_trace_file(dir.file("m.json"), dir.file("m.sqlite"));
        REQUIRE(s.tagged);
        CHECK(s.allocations == static_cast<uint64_t>(allocations));
        const std::string db = dir.file("m.sqlite");
        CHECK(query_int(db, "SELECT count(*) FROM allocation_categories") == allocations);
        // Each row is its allocation's: the category's id is an allocation's, and a freed allocation
        // has a tag that names it (its rule and reason bound with the same row as its id).
        CHECK(query_int(db,
                        "SELECT count(DISTINCT c.allocation) FROM allocation_categories AS c "
                        "JOIN allocations AS a ON a.id = c.allocation") == allocations);
        CHECK(query_int(db,
                        "SELECT count(*) FROM allocation_categories WHERE category IS NULL OR rule IS NULL "
                        "OR confidence IS NULL OR reason_string IS NULL") == 0);
        CHECK(query_rows(db,
                         "SELECT a.id || '|' || c.category || '|' || c.rule FROM allocations AS a "
                         "JOIN allocation_categories AS c ON c.allocation = a.id ORDER BY a.id") ==
              query_rows(db,
                         "SELECT c.allocation || '|' || c.category || '|' || c.rule FROM allocation_categories "
                         "AS c ORDER BY c.allocation"));
    }
}
