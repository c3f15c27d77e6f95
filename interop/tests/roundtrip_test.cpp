// Export to Chrome trace JSON, then import again: the same kernels, copies and sets come back, and the
// JSON has the tracks, slices, flows and counters Perfetto needs.
#include "sample_traces.h"
#include "tbdprof/interop/export.h"
#include "tbdprof/interop/import.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <map>
#include <set>
#include <tuple>

using namespace tbdprof::interop;
using namespace tbdprof::interop::test;

namespace {

const char* kKernelRows =
    "SELECT k.name || '|' || k.device || '|' || s.handle || '|' || k.start_ns || '|' || k.duration_ns || '|' || "
    "ifnull(k.launch_ns, '-') || '|' || k.grid_x || ',' || k.grid_y || ',' || k.grid_z || '|' || k.block_x || ',' || "
    "k.block_y || ',' || k.block_z || '|' || ifnull(k.shared_bytes, '-') || '|' || ifnull(k.correlation, '-') "
    "FROM kernel_view AS k LEFT JOIN streams AS s ON s.id = k.stream ORDER BY k.id";
const char* kCopyRows =
    "SELECT c.kind || '|' || c.bytes || '|' || c.device || '|' || s.handle || '|' || c.start_ns || '|' || c.duration_ns || '|' || "
    "ifnull(c.correlation, '-') FROM copies AS c LEFT JOIN streams AS s ON s.id = c.stream ORDER BY c.id";
const char* kSetRows =
    "SELECT c.bytes || '|' || c.device || '|' || s.handle || '|' || c.start_ns || '|' || c.duration_ns "
    "FROM sets AS c LEFT JOIN streams AS s ON s.id = c.stream ORDER BY c.id";

}  // namespace

TEST_CASE("round trip: import, export, re-import gives the same GPU work, launches and memory") {
    TempDir dir;
    write_text(dir.file("t.json"), current_layout_trace());
    import_trace_file(dir.file("t.json"), dir.file("a.sqlite"));
    const ExportSummary exported = export_chrome_trace(dir.file("a.sqlite"), dir.file("a.chrome.json"));
    CHECK(exported.flows == 5);  // 3 kernels, 1 copy, 1 set, all launched by a recorded call
    const ImportSummary again = import_trace_file(dir.file("a.chrome.json"), dir.file("b.sqlite"));
    CHECK(again.unknown.empty());
    const std::string a = dir.file("a.sqlite"), b = dir.file("b.sqlite");
    CHECK(query_rows(a, kKernelRows) == query_rows(b, kKernelRows));
    CHECK(query_rows(a, kCopyRows) == query_rows(b, kCopyRows));
    CHECK(query_rows(a, kSetRows) == query_rows(b, kSetRows));
    const char* ranges = "SELECT domain || '|' || name || '|' || begin_ns || '|' || ifnull(end_ns, '-') FROM ranges ORDER BY begin_ns, name";
    CHECK(query_rows(a, ranges) == query_rows(b, ranges));
    const char* calls = "SELECT kind || '|' || begin_ns || '|' || end_ns FROM api_calls ORDER BY id";
    CHECK(query_rows(a, calls) == query_rows(b, calls));
    const char* memory = "SELECT address || '|' || bytes || '|' || alloc_ns || '|' || ifnull(free_ns, '-') FROM allocations ORDER BY address";
    CHECK(query_rows(a, memory) == query_rows(b, memory));
    const char* notes = "SELECT key || '=' || value FROM run_notes WHERE key LIKE 'distributed.%' ORDER BY key";
    CHECK(query_rows(a, notes) == query_rows(b, notes));
    CHECK(query_rows(b, "SELECT name FROM devices") == "Tesla V100-SXM2-32GB\n");
}

TEST_CASE("round trip of the 2021 layout") {
    TempDir dir;
    write_text(dir.file("old.json"), layout_2021_trace());
    import_trace_file(dir.file("old.json"), dir.file("a.sqlite"));
    export_chrome_trace(dir.file("a.sqlite"), dir.file("a.json"));
    import_trace_file(dir.file("a.json"), dir.file("b.sqlite"));
    CHECK(query_rows(dir.file("a.sqlite"), kKernelRows) == query_rows(dir.file("b.sqlite"), kKernelRows));
    CHECK(query_rows(dir.file("a.sqlite"), kCopyRows) == query_rows(dir.file("b.sqlite"), kCopyRows));
    const char* memory = "SELECT bytes || '|' || alloc_ns || '|' || ifnull(free_ns, '-') FROM allocations ORDER BY alloc_ns";
    CHECK(query_rows(dir.file("a.sqlite"), memory) == query_rows(dir.file("b.sqlite"), memory));
}

TEST_CASE("exported JSON: valid, tracks named, flows paired and bound, counters per category") {
    TempDir dir;
    write_text(dir.file("t.json"), current_layout_trace());
    import_trace_file(dir.file("t.json"), dir.file("a.sqlite"));
    export_chrome_trace(dir.file("a.sqlite"), dir.file("a.json"));
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.load(dir.file("a.json"));
    std::set<std::string> process_names, thread_names;
    std::map<int64_t, int> flow_phases;  // id -> bit 1: start, bit 2: finish
    std::map<std::string, int64_t> slices_by_cat;
    std::set<std::string> counter_series;
    // Perfetto binds a flow's finish (bp "e") to the slice that encloses it on the same track: each
    // finish must sit at the start of a GPU slice on its (pid, tid).
    std::set<std::tuple<int64_t, int64_t, double>> gpu_slice_starts, flow_finishes;
    for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
        const std::string_view ph = e["ph"].get_string();
        if (ph == "M") {
            const std::string_view name = e["name"].get_string();
            if (name == "process_name") process_names.emplace(std::string_view(e["args"]["name"].get_string()));
            if (name == "thread_name") thread_names.emplace(std::string_view(e["args"]["name"].get_string()));
        } else if (ph == "X") {
            const std::string cat(std::string_view(e["cat"].get_string()));
            ++slices_by_cat[cat];
            if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
                gpu_slice_starts.emplace(int64_t(e["pid"]), int64_t(e["tid"]), double(e["ts"]));
            }
        } else if (ph == "s" || ph == "f") {
            flow_phases[int64_t(e["id"])] |= ph == "s" ? 1 : 2;
            if (ph == "f") {
                CHECK(std::string_view(e["bp"].get_string()) == "e");
                flow_finishes.emplace(int64_t(e["pid"]), int64_t(e["tid"]), double(e["ts"]));
            }
        } else if (ph == "C") {
            for (auto field : e["args"].get_object()) counter_series.emplace(field.key);
        }
    }
    CHECK(process_names.count("python3 train.py") == 1);
    CHECK(process_names.count("GPU 0: Tesla V100-SXM2-32GB") == 1);
    CHECK(thread_names.count("stream 7") == 1);
    CHECK(thread_names.count("stream 20") == 1);
    CHECK(thread_names.count("thread 100 (python3)") == 1);
    CHECK(thread_names.count("GPU annotations") == 1);
    CHECK(slices_by_cat["kernel"] == 3);
    CHECK(slices_by_cat["gpu_memcpy"] == 1);
    CHECK(slices_by_cat["gpu_memset"] == 1);
    CHECK(slices_by_cat["cuda_runtime"] == 6);
    CHECK(slices_by_cat["cpu_op"] == 2);
    CHECK(slices_by_cat["user_annotation"] == 3);
    CHECK(slices_by_cat["gpu_user_annotation"] == 1);
    CHECK(flow_phases.size() == 5);
    for (auto [id, phases] : flow_phases) CHECK(phases == 3);
    CHECK(flow_finishes.size() == 5);
    for (const auto& finish : flow_finishes) CHECK(gpu_slice_starts.count(finish) == 1);
    // Imports are tagged (by lifetimes here): the counters are per category, none "untagged".
    CHECK(!counter_series.empty());
    CHECK(counter_series.count("untagged") == 0);
}
