// Imports every file of the validation data and checks what its SOURCES.md says the file holds:
// event counts by kind, steps, memory events, rank. Then export + re-import gives the same GPU work.
#include "tbdprof/interop/export.h"
#include "tbdprof/interop/import.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>

extern std::string g_validation_data;

using namespace tbdprof::interop;
using namespace tbdprof::interop::test;

namespace {

std::string data(const std::string& relative) { return g_validation_data + "/" + relative; }

struct Imported {
    ImportSummary summary;
    std::string db;
};

Imported import_into(const TempDir& dir, const std::string& relative) {
    const std::string out = dir.file(std::filesystem::path(relative).filename().string() + ".sqlite");
    return {import_trace_file(data(relative), out), out};
}

std::string step_names(const std::string& db) {
    return query_rows(db, "SELECT name FROM ranges WHERE name LIKE 'ProfilerStep#%' ORDER BY begin_ns");
}

int64_t runtime_calls(const std::string& db) {
    return query_int(db, "SELECT count(*) FROM ranges WHERE domain = 'cuda_runtime'") + query_int(db, "SELECT count(*) FROM api_calls");
}

const char* kGpuWork =
    "SELECT 'k|' || k.name || '|' || k.device || '|' || s.handle || '|' || k.start_ns || '|' || k.duration_ns || '|' || "
    "ifnull(k.launch_ns, '-') || '|' || k.grid || '|' || k.block || '|' || ifnull(k.correlation, '-') "
    "FROM (SELECT *, grid_x || ',' || grid_y || ',' || grid_z AS grid, block_x || ',' || block_y || ',' || block_z AS block "
    "      FROM kernel_view) AS k LEFT JOIN streams AS s ON s.id = k.stream "
    "UNION ALL SELECT 'c|' || c.kind || '|' || c.bytes || '|' || s.handle || '|' || c.start_ns || '|' || c.duration_ns || '|' || "
    "ifnull(c.start_ns - c.queued_ns, '-') FROM copies AS c LEFT JOIN streams AS s ON s.id = c.stream "
    "UNION ALL SELECT 's|' || bytes || '|' || start_ns || '|' || duration_ns FROM sets";

// The most bytes live at once, frees before allocations at equal times.
const char* kPeakLiveBytes =
    "SELECT max(live) FROM (SELECT sum(delta) OVER (ORDER BY t, delta ROWS UNBOUNDED PRECEDING) AS live FROM "
    "(SELECT alloc_ns AS t, bytes AS delta FROM allocations UNION ALL "
    " SELECT free_ns, -bytes FROM allocations WHERE free_ns IS NOT NULL))";

void check_round_trip(const TempDir& dir, const Imported& first) {
    const std::string json = first.db + ".chrome.json", again = first.db + ".again.sqlite";
    const ExportSummary exported = export_chrome_trace(first.db, json);
    CHECK(exported.slices >= first.summary.kernels + first.summary.copies + first.summary.sets);
    const ImportSummary reimported = import_trace_file(json, again);
    CHECK(reimported.kernels == first.summary.kernels);
    CHECK(reimported.copies == first.summary.copies);
    CHECK(reimported.unknown.empty());
    CHECK(query_rows(first.db, kGpuWork) == query_rows(again, kGpuWork));
    (void)dir;
}

}  // namespace

TEST_CASE("hta/df_index_resolver.json.gz: DDP rank 1 of 2, V100, memory with addresses") {
    TempDir dir;
    const Imported r = import_into(dir, "hta/df_index_resolver.json.gz");
    const std::string& db = r.db;
    CHECK(r.summary.format == "kineto");
    CHECK(r.summary.events == 216092);
    CHECK(r.summary.kernels == 19370);
    CHECK(query_int(db, "SELECT count(*) FROM kernel_view WHERE name LIKE 'ncclKernel_AllReduce%'") == 2020);
    CHECK(r.summary.copies == 2040);
    CHECK(r.summary.sets == 880);
    CHECK(query_int(db, "SELECT count(*) FROM ranges WHERE domain = 'cpu_op'") == 56680);
    CHECK(runtime_calls(db) == 42373);
    CHECK(step_names(db) == "ProfilerStep#2\nProfilerStep#3\nProfilerStep#4\nProfilerStep#5\nProfilerStep#6\n");
    CHECK(r.summary.memory_events == 28010);
    CHECK(r.summary.gpu_memory_events == 26770);
    CHECK(r.summary.memory_events - r.summary.gpu_memory_events == 1240);
    CHECK(r.summary.memory_addresses);
    CHECK(query_int(db, "SELECT count(DISTINCT device) FROM allocations") == 1);
    CHECK(query_int(db, "SELECT device FROM allocations LIMIT 1") == 1);
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'memory.peak_total_allocated.device1'") == "6629508096");
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'memory.peak_total_reserved.device1'") == "12782141440");
    // Every GPU memory event became one end of an allocation, plus one block for what was allocated
    // before the trace and never freed; with it, peak live memory equals Kineto's own peak.
    CHECK(query_int(db, "SELECT count(*) + count(free_ns) FROM allocations") == 26770 + 1);
    CHECK(query_int(db, kPeakLiveBytes) == 6629508096);
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'distributed.rank'") == "1");
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'distributed.world_size'") == "2");
    CHECK(query_text(db, "SELECT name FROM devices WHERE id = 1") == "Tesla V100-SXM2-32GB");
    CHECK(query_int(db, "SELECT count(*) FROM kernels WHERE device = 1") == 19370);
    check_round_trip(dir, r);
}

TEST_CASE("hta/rank-0...pt.trace.json.gz: CNN, rank 0 of 1, GPU annotations, no memory events") {
    TempDir dir;
    const Imported r = import_into(dir, "hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    const std::string& db = r.db;
    CHECK(r.summary.kernels == 4350);
    CHECK(r.summary.copies == 1600);
    CHECK(r.summary.sets == 145);
    CHECK(r.summary.skipped.at("flow events (fwdbwd)") == 1810);
    CHECK(query_int(db, "SELECT count(*) FROM kernel_view WHERE name LIKE '%wgrad%'") > 0);
    CHECK(query_rows(db, "SELECT DISTINCT name FROM ranges WHERE domain = 'gpu_user_annotation' ORDER BY name") ==
          "## backward ##\nDistributedDataParallel.forward\nOptimizer.step#SGD.step\n");
    CHECK(step_names(db) == "ProfilerStep#101\nProfilerStep#102\nProfilerStep#103\nProfilerStep#104\nProfilerStep#105\n");
    CHECK(r.summary.memory_events == 0);
    CHECK(query_int(db, "SELECT count(*) FROM allocations") == 0);
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'distributed.rank'") == "0");
    CHECK(query_text(db, "SELECT value FROM run_notes WHERE key = 'distributed.world_size'") == "1");
    CHECK(query_text(db, "SELECT name FROM devices WHERE id = 0") == "Tesla V100-SXM2-32GB");
    // Fractional microsecond timestamps keep their nanoseconds.
    CHECK(query_int(db, "SELECT count(*) FROM kernels WHERE start_ns % 1000 != 0") > 0);
    check_round_trip(dir, r);
}

TEST_CASE("kineto/worker0 traces: 2021 layout, ResNet-50 on V100-DGXS, memory sizes without addresses") {
    struct Expected {
        const char* file;
        uint64_t kernels;
        uint64_t memory_events;
    };
    for (const Expected& e : {Expected{"kineto/worker0.1623143089861.pt.trace.json.gz", 8772, 12838},
                              Expected{"kineto/worker0.1623212756351.pt.trace.json.gz", 8868, 10980}}) {
        CAPTURE(e.file);
        TempDir dir;
        const Imported r = import_into(dir, e.file);
        const std::string& db = r.db;
        CHECK(r.summary.format == "kineto-2021");
        CHECK(r.summary.kernels == e.kernels);
        CHECK(r.summary.memory_events == e.memory_events);
        CHECK(!r.summary.memory_addresses);
        CHECK(query_int(db, "SELECT count(*) + count(free_ns) FROM allocations") == static_cast<int64_t>(r.summary.gpu_memory_events));
        CHECK(step_names(db) == "ProfilerStep#5\nProfilerStep#6\nProfilerStep#7\nProfilerStep#8\nProfilerStep#9\nProfilerStep#10\n");
        CHECK(query_text(db, "SELECT name FROM devices WHERE id = 0") == "Tesla V100-DGXS-32GB");
        CHECK(query_int(db, "SELECT count(*) FROM ranges WHERE domain = 'cpu_op' AND name = 'aten::conv2d'") > 0);
        CHECK(query_int(db, "SELECT count(*) FROM kernels WHERE thread IS NULL") == 0);  // every launch found
        check_round_trip(dir, r);
    }
}

TEST_CASE("hta/memory_timeline.raw.gz: torch memory-timeline rows with categories") {
    TempDir dir;
    const Imported r = import_into(dir, "hta/memory_timeline.raw.gz");
    const std::string& db = r.db;
    CHECK(r.summary.format == "memory-timeline");
    CHECK(r.summary.events == 16845);
    // Allocations come from the preexisting and create rows; every destroy row frees one.
    const int64_t rows_alive = query_int(db, "SELECT count(*) FROM allocations");
    const int64_t freed = query_int(db, "SELECT count(free_ns) FROM allocations");
    CHECK(rows_alive + freed + static_cast<int64_t>(r.summary.skipped.at("memory timeline version increments")) == 16845);
    CHECK(r.summary.warnings.count("frees of blocks allocated before the trace (live from its start)") == 0);
    CHECK(query_rows(db, "SELECT DISTINCT category FROM allocation_categories ORDER BY category") ==
          "activations\ngradients\ninput\noptimizer_state\nother\nweights\nworkspace\n");
    // torch's "unknown" blocks are tagged by the tagger; the others keep PyTorch's category.
    CHECK(query_int(db, "SELECT count(*) FROM memory_allocations WHERE category IS NULL") == 0);
    CHECK(query_int(db, "SELECT count(*) FROM allocation_categories WHERE rule = 'pytorch-memory-timeline'") > 0);
    CHECK(query_int(db, "SELECT count(*) FROM allocation_categories WHERE rule <> 'pytorch-memory-timeline'") > 0);
}

TEST_CASE("every file in the validation data imports") {
    TempDir dir;
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(g_validation_data)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".gz") continue;
        CAPTURE(entry.path().string());
        ++files;
        const std::string relative = std::filesystem::relative(entry.path(), g_validation_data).string();
        const Imported r = import_into(dir, relative);
        CHECK(r.summary.unknown.empty());
        CHECK(std::filesystem::file_size(r.db) > 0);
    }
    CHECK(files >= 5);
}
