// The typed table readers: every column of a row comes back in its field, NULL columns as absent,
// ranges and orders as asked, and an older trace's missing columns and tables as absent or empty.
#include <tbdprof/test_support/temp_dir.h>
#include <tbdprof/trace/categories.h>
#include <tbdprof/trace/schema.h>
#include <tbdprof/trace/tables.h>

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace tbdprof;

namespace {

trace::Database schema_database(const test::TempDir& dir) {
    trace::Database db = trace::create_database(dir.file("t.sqlite"));
    db.exec(trace::kTraceSchemaSql);
    return db;
}

template <class Row>
std::vector<Row> read_all(const trace::Database& db, const trace::ReadOptions& options = {}) {
    trace::RowReader<Row> reader(db, options);
    std::vector<Row> rows;
    Row row;
    while (reader.next(row)) rows.push_back(row);
    return rows;
}

}  // namespace

TEST_CASE("tables: kernels come back field by field, by id or by time, within an id range") {
    test::TempDir dir;
    trace::Database db = schema_database(dir);
    db.exec(
        "INSERT INTO kernels(id, process, thread, device, stream, function, start_ns, duration_ns, queued_ns, grid, "
        "block, shared_bytes, correlation, library_call, graph_launch) VALUES "
        "(1, 0, 3, 1, 7, 9, 500, 20, 4, 8, 256, 1024, 77, NULL, NULL),"
        "(2, 0, NULL, 0, NULL, 9, 100, NULL, NULL, NULL, NULL, NULL, NULL, 5, 6),"
        "(3, 1, 4, 0, 2, 8, 300, 10, 1, 2, 64, 0, 78, NULL, NULL)");
    const auto by_id = read_all<trace::KernelRow>(db);
    REQUIRE(by_id.size() == 3);
    const trace::KernelRow& k = by_id[0];
    CHECK(k.id == 1);
    CHECK(k.thread == 3);
    CHECK(k.device == 1);
    CHECK(k.stream == 7);
    CHECK(k.function == 9);
    CHECK(k.start_ns == 500);
    CHECK(k.duration_ns == 20);
    CHECK(k.end_ns() == 520);
    CHECK(k.queued_ns == 4);
    CHECK(k.grid == 8);
    CHECK(k.block == 256);
    CHECK(k.shared_bytes == 1024);
    CHECK(k.correlation == 77);
    CHECK_FALSE(k.library_call.has_value());
    const trace::KernelRow& host_timed = by_id[1];
    CHECK_FALSE(host_timed.thread.has_value());
    CHECK_FALSE(host_timed.duration_ns.has_value());
    CHECK(host_timed.end_ns() == 100);
    CHECK_FALSE(host_timed.grid.has_value());  // an import may not know the launch geometry
    CHECK_FALSE(host_timed.shared_bytes.has_value());
    CHECK(host_timed.library_call == 5);
    CHECK(host_timed.graph_launch == 6);

    std::vector<int64_t> order;
    for (const auto& row : read_all<trace::KernelRow>(db, {.by_time = true})) order.push_back(row.id);
    CHECK(order == std::vector<int64_t>{2, 3, 1});
    order.clear();
    for (const auto& row : read_all<trace::KernelRow>(db, {.first_id = 2, .last_id = 3})) order.push_back(row.id);
    CHECK(order == std::vector<int64_t>{2, 3});
}

TEST_CASE("tables: allocations carry their kind and tag; the device-memory rule is one") {
    test::TempDir dir;
    trace::Database db = schema_database(dir);
    db.exec(
        "INSERT INTO allocations(id, process, device, address, bytes, alloc_ns, free_ns, kind, stack) VALUES "
        "(1, 0, 0, 4096, 512, 10, 90, 'device', 3), (2, 0, 0, 8192, 64, 20, NULL, 'pinned_host', NULL),"
        "(3, 0, 1, 65536, 128, 30, 40, 'managed', NULL), (4, 0, 0, 1024, 8, 5, NULL, 'something_new', NULL);"
        "INSERT INTO allocation_categories(allocation, category, confidence, rule, reason) VALUES "
        "(1, 'weights', 0.9, 'read-then-updated', 'read first, updated later')");
    const auto rows = read_all<trace::AllocationRow>(db);
    REQUIRE(rows.size() == 4);
    CHECK(rows[0].kind == trace::MemoryKind::device);
    CHECK(rows[0].address == 4096);
    CHECK(rows[0].free_ns == 90);
    CHECK(rows[0].stack == 3);
    CHECK(rows[1].kind == trace::MemoryKind::pinned_host);
    CHECK_FALSE(rows[1].free_ns.has_value());
    CHECK(rows[2].kind == trace::MemoryKind::managed);
    CHECK(rows[3].kind == trace::MemoryKind::unknown);
    CHECK(trace::is_device_memory(rows[0].kind));
    CHECK_FALSE(trace::is_device_memory(rows[1].kind));
    CHECK(trace::is_device_memory(rows[2].kind));
    CHECK_FALSE(trace::is_device_memory(rows[3].kind));
    // Only the first is tagged; the view copies are gone after next(), so compare as we read.
    trace::RowReader<trace::AllocationRow> reader(db);
    trace::AllocationRow row;
    REQUIRE(reader.next(row));
    CHECK(row.category == "weights");
    CHECK(trace::category_from_text(row.category) == trace::Category::weights);
    CHECK(row.confidence == doctest::Approx(0.9));
    CHECK(row.rule == "read-then-updated");
    REQUIRE(reader.next(row));
    CHECK(row.category.empty());
    CHECK(trace::category_from_text(row.category) == trace::Category::untagged);
    CHECK_FALSE(row.confidence.has_value());
    const auto by_time = read_all<trace::AllocationRow>(db, {.by_time = true});
    CHECK(by_time.front().id == 4);

    // Without tags (ReadOptions::tags): the same rows and columns, the tag left empty, its table unread.
    trace::RowReader<trace::AllocationRow> untagged(db, {.tag_texts = false, .tags = false});
    REQUIRE(untagged.next(row));
    CHECK(row.id == 1);
    CHECK(row.address == 4096);
    CHECK(row.stack == 3);
    CHECK(row.kind == trace::MemoryKind::device);
    CHECK(row.category.empty());
    CHECK_FALSE(row.confidence.has_value());
    CHECK(row.rule.empty());
    size_t rows_read = 1;
    while (untagged.next(row)) ++rows_read;
    CHECK(rows_read == 4);
}

TEST_CASE("tables: a tag's reason and evidence read the same inline or as strings ids") {
    test::TempDir dir;
    trace::Database db = schema_database(dir);
    db.exec(
        "INSERT INTO allocations(id, process, device, address, bytes, alloc_ns, kind) VALUES "
        "(1, 0, 0, 4096, 512, 10, 'device'), (2, 0, 0, 8192, 512, 20, 'device'), (3, 0, 0, 16384, 64, 30, 'device');"
        "INSERT INTO strings(id, text) VALUES (70, 'shared reason'), (71, 'flow of 2'), (72, 'flow of 3');"
        "INSERT INTO allocation_categories(allocation, category, rule, reason, evidence) VALUES "
        "(1, 'weights', 'r', 'inline reason', 'inline flow');"
        "INSERT INTO allocation_categories(allocation, category, rule, reason_string, evidence_string) VALUES "
        "(2, 'weights', 'r', 70, 71), (3, 'activations', 'r', 70, 72);"
        "INSERT INTO allocation_subranges(id, allocation, offset, bytes, begin_ns, end_ns, category, reason, "
        "reason_string, evidence_string) VALUES (1, 2, 0, 64, 20, 30, 'weights', NULL, 70, NULL), "
        "(2, 2, 64, 64, 20, 30, 'weights', 'own text wins', 70, 72)");
    std::vector<std::pair<std::string, std::string>> tags;
    trace::RowReader<trace::AllocationRow> allocations(db);
    for (trace::AllocationRow row; allocations.next(row);) tags.emplace_back(row.reason, row.evidence);
    CHECK(tags == std::vector<std::pair<std::string, std::string>>{
                      {"inline reason", "inline flow"}, {"shared reason", "flow of 2"}, {"shared reason", "flow of 3"}});
    tags.clear();
    trace::RowReader<trace::SubrangeRow> subranges(db);
    for (trace::SubrangeRow row; subranges.next(row);) tags.emplace_back(row.reason, row.evidence);
    CHECK(tags == std::vector<std::pair<std::string, std::string>>{{"shared reason", ""}, {"own text wins", "flow of 3"}});

    // Without tag texts (the report's readers): the same rows and tags, reason and evidence left empty.
    std::vector<std::string> rows;
    trace::RowReader<trace::AllocationRow> plain(db, {.tag_texts = false});
    for (trace::AllocationRow row; plain.next(row);)
        rows.push_back(std::to_string(row.id) + "|" + std::string(row.category) + "|" + std::string(row.rule) + "|" +
                       std::string(row.reason) + "|" + std::string(row.evidence));
    CHECK(rows == std::vector<std::string>{"1|weights|r||", "2|weights|r||", "3|activations|r||"});
    rows.clear();
    trace::RowReader<trace::SubrangeRow> plain_subranges(db, {.tag_texts = false});
    for (trace::SubrangeRow row; plain_subranges.next(row);)
        rows.push_back(std::to_string(row.offset) + "|" + std::string(row.category) + "|" + std::string(row.reason) +
                       "|" + std::string(row.evidence));
    CHECK(rows == std::vector<std::string>{"0|weights||", "64|weights||"});
}

TEST_CASE("tables: an older trace's missing columns read as absent and its missing tables as empty") {
    test::TempDir dir;
    trace::Database db = trace::create_database(dir.file("old.sqlite"));
    db.exec(
        "CREATE TABLE library_calls (id INTEGER PRIMARY KEY, process INTEGER NOT NULL, thread INTEGER, "
        "name TEXT NOT NULL, op TEXT NOT NULL, begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, stream INTEGER, "
        "m INTEGER, n INTEGER, k INTEGER, batch INTEGER, a_type INTEGER, b_type INTEGER, c_type INTEGER, "
        "compute_type INTEGER, transa INTEGER, transb INTEGER, flops REAL, a INTEGER, b INTEGER, c INTEGER, "
        "workspace INTEGER, workspace_bytes INTEGER);"
        "INSERT INTO library_calls(id, process, name, op, begin_ns, end_ns, m, n, k, flops, a, b, c) VALUES "
        "(4, 0, 'cublasSgemm_v2', 'gemm', 10, 20, 2, 3, 4, 48.0, 100, 200, 300);"
        "CREATE TABLE iterations (id INTEGER PRIMARY KEY, process INTEGER NOT NULL, idx INTEGER NOT NULL, "
        "begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, source TEXT NOT NULL);"
        "INSERT INTO iterations VALUES (1, 0, 0, 5, 50, 'nvtx')");
    trace::RowReader<trace::LibraryCallRow> calls(db);
    trace::LibraryCallRow call;
    REQUIRE(calls.next(call));
    CHECK(call.name == "cublasSgemm_v2");
    CHECK(call.op == "gemm");
    CHECK(call.m == 2);
    CHECK(call.k == 4);
    CHECK(call.flops == doctest::Approx(48.0));
    CHECK(call.c == 300);
    CHECK_FALSE(call.batch.has_value());
    CHECK_FALSE(call.math_mode.has_value());
    CHECK(call.precision.empty());
    CHECK_FALSE(call.c_bytes.has_value());
    CHECK_FALSE(calls.next(call));

    const auto iterations = read_all<trace::IterationRow>(db);
    REQUIRE(iterations.size() == 1);
    CHECK(iterations[0].training());  // no kind column: every stored iteration is a training step
    CHECK_FALSE(iterations[0].device_end_ns.has_value());
    CHECK(read_all<trace::KernelMetricRow>(db).empty());
    CHECK(read_all<trace::SubrangeRow>(db).empty());
    CHECK(trace::has_column(db, "library_calls", "flops"));
    CHECK_FALSE(trace::has_column(db, "library_calls", "c_bytes"));
    CHECK_FALSE(trace::has_table(db, "kernels"));
}

TEST_CASE("tables: small tables, notes, names and stacks") {
    test::TempDir dir;
    trace::Database db = schema_database(dir);
    db.exec(
        "INSERT INTO run(id, command_line, start_unix_ns, start_monotonic_ns, duration_ns, tool_version, "
        "simulated_device, clock_source, host_timed_kernels, truncated_files, exit_status) VALUES "
        "(1, './train --epochs 1', 0, 0, 12345, '0.3', 1, 'cupti', 2, 0, 0);"
        "INSERT INTO run_notes VALUES ('distributed.rank', '1'), ('distributed_x', 'no'), ('other', 'x');"
        "INSERT INTO strings VALUES (1, 'gemm_kernel'), (2, '_Z11gemm_kernelv'), (3, 'main'), (4, '/bin/train'),"
        " (5, 'sm__inst_executed');"
        "INSERT INTO functions VALUES (7, 1, 2);"
        "INSERT INTO frames VALUES (1, 0, 4660, 3, 4, 52), (2, 0, 22136, NULL, NULL, NULL);"
        "INSERT INTO stack_frames VALUES (9, 1, 2), (9, 0, 1);"
        "INSERT INTO dropped_events VALUES (0, 'ring_full', 3), (0, 'cupti_buffers', 4);"
        "INSERT INTO kernel_metrics VALUES (11, 5, 2.5), (11, 5, NULL);"
        "INSERT INTO devices VALUES (0, 'Simulated H100', 9, 0, 132, 85899345920, 1980000, 128, 6.7e13, 1)");
    const trace::RunRow run = trace::read_run(db);
    CHECK(run.command_line == "./train --epochs 1");
    CHECK(run.duration_ns == 12345);
    CHECK(run.simulated_device);
    CHECK(run.host_timed_kernels == 2);
    CHECK(run.exit_status == 0);
    CHECK_FALSE(run.crash_signal.has_value());
    CHECK(trace::read_note(db, "other") == "x");
    CHECK_FALSE(trace::read_note(db, "missing").has_value());
    const auto notes = trace::read_notes_with_prefix(db, "distributed.");
    REQUIRE(notes.size() == 1);  // '_' and '%' are not wildcards
    CHECK(notes[0].second == "1");
    CHECK(trace::dropped_event_count(db) == 7);
    CHECK(trace::read_function_names(db).at(7) == "gemm_kernel");
    CHECK(trace::read_function_names(db, true).at(7) == "_Z11gemm_kernelv");
    const auto frames = trace::read_stack(db, 9);
    REQUIRE(frames.size() == 2);
    CHECK(frames[0].symbol == "main");
    CHECK(frames[0].module == "/bin/train");
    CHECK(frames[0].offset == 52);
    CHECK(frames[1].symbol.empty());
    CHECK(frames[1].ip == 22136);
    CHECK(frames[0].text() == "main (train)");
    CHECK(frames[1].text() == "0x5678");
    const auto metrics = read_all<trace::KernelMetricRow>(db);
    REQUIRE(metrics.size() == 2);
    const auto devices = read_all<trace::DeviceRow>(db);
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].sm_count == 132);
    CHECK(devices[0].fp32_peak_flops == doctest::Approx(6.7e13));
}

TEST_CASE("tables: the one list of copy and memory kind names, both ways") {
    for (auto kind : {trace::CopyKind::htod, trace::CopyKind::dtoh, trace::CopyKind::dtod, trace::CopyKind::htoh,
                      trace::CopyKind::default_direction})
        CHECK(trace::copy_kind_from_text(trace::copy_kind_name(kind)) == kind);
    CHECK(std::string(trace::copy_kind_name(trace::CopyKind::default_direction)) == "default");
    CHECK(trace::copy_kind_from_text("sideways") == trace::CopyKind::unknown);
    for (auto kind : {trace::MemoryKind::device, trace::MemoryKind::device_async, trace::MemoryKind::pinned_host,
                      trace::MemoryKind::managed, trace::MemoryKind::device_mapped})
        CHECK(trace::memory_kind_from_text(trace::memory_kind_name(kind)) == kind);
    CHECK(trace::memory_kind_from_text("unknown") == trace::MemoryKind::unknown);
    CHECK(trace::is_device_memory(trace::MemoryKind::device_mapped));
}

TEST_CASE("tables: the one category table") {
    CHECK(trace::kCategoryNames.size() == trace::kCategoryColors.size());
    CHECK(trace::category_from_text("optimizer_state") == trace::Category::optimizer_state);
    CHECK(trace::category_from_text("untagged") == trace::Category::other);  // never stored: unknown text
    CHECK(trace::category_from_text("a_future_category") == trace::Category::other);
    CHECK(std::string(trace::category_name(trace::Category::input)) == "input");
}
