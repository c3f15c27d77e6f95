#include <sqlite3.h>
#include "trace_test_support.h"

#include <tbdprof/trace/schema.h>
#include <tbdprof/trace/tables.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

using namespace tbdprof;
using namespace tbdprof::test;

namespace {

void set_user_version(const std::string& path, int version) {
    sqlite3* handle = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &handle) == SQLITE_OK);
    trace::Database db(handle);
    db.exec(("PRAGMA user_version = " + std::to_string(version)).c_str());
}

// SQL run on a trace file as any SQLite program would, past tbdprof's checks.
void exec_raw(const std::string& path, const char* sql) {
    sqlite3* handle = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &handle) == SQLITE_OK);
    trace::Database db(handle);
    db.exec(sql);
}

}  // namespace

TEST_CASE("reader: refuses a newer trace format with a message that says what to do") {
    TempDir dir;
    RawFileWriter(1, 0).save(dir.path());
    build(dir);
    set_user_version(dir.file("trace.sqlite"), trace::kTraceFormatVersion + 1);
    try {
        trace::open_trace(dir.file("trace.sqlite"));
        FAIL("a newer format was accepted");
    } catch (const trace::TraceOpenError& e) {
        CHECK(std::string(e.what()) == dir.file("trace.sqlite") + ": trace format " + std::to_string(trace::kTraceFormatVersion + 1) +
                                           " is newer than this tbdprof supports (" +
                                           std::to_string(trace::kTraceFormatVersion) + "); upgrade tbdprof");
    }
}

TEST_CASE("reader: refuses files that are not traces") {
    TempDir dir;
    { std::ofstream(dir.file("text.sqlite")) << "this is not SQLite, only some text that is long enough........"; }
    CHECK_THROWS_AS(trace::open_trace(dir.file("text.sqlite")), trace::TraceOpenError);
    {
        sqlite3* handle = nullptr;
        REQUIRE(sqlite3_open(dir.file("other.sqlite").c_str(), &handle) == SQLITE_OK);
        trace::Database db(handle);
        db.exec("CREATE TABLE t(x)");
    }
    CHECK_THROWS_AS(trace::open_trace(dir.file("other.sqlite")), trace::TraceOpenError);
    CHECK_THROWS_AS(trace::open_trace(dir.file("missing.sqlite")), trace::TraceOpenError);
}

TEST_CASE("reader: a trace opens read-only and defensively") {
    TempDir dir;
    RawFileWriter(1, 0).save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(trace::trace_format_version(db) == trace::kTraceFormatVersion);
    CHECK_THROWS_AS(db.exec("DELETE FROM kernels"), trace::SqliteError);
    int enabled = -1;
    sqlite3_db_config(db.get(), SQLITE_DBCONFIG_DEFENSIVE, -1, &enabled);
    CHECK(enabled == 1);
    sqlite3_db_config(db.get(), SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &enabled);
    CHECK(enabled == 0);
    sqlite3_db_config(db.get(), SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, -1, &enabled);
    CHECK(enabled == 0);
}

TEST_CASE("reader: summary counts work and finds the peak of live device memory") {
    TempDir dir;
    RawFileWriter w(1, 0);
    w.alloc(1, 10, 0x1000, 100);
    w.alloc(1, 20, 0x2000, 50);   // live: 150
    w.free(1, 30, 0x1000);        // 50
    w.alloc(1, 30, 0x3000, 90);   // same ns as the free: 140, never 240
    w.alloc(1, 40, 0x9000, 1000, raw::MemoryKind::PinnedHost);  // host memory: not counted
    const uint64_t s = w.launch(1, 50, "k");
    w.device_kernel(s, 60, 70, "k");
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    const trace::TraceSummary summary = trace::read_summary(db);
    CHECK(summary.peak_device_bytes == 150);
    CHECK(summary.kernels == 1);
    CHECK(summary.allocations == 4);
    CHECK(summary.duration_ns == 70);
    CHECK(summary.processes == 1);
}

TEST_CASE("reader: statements are stopped after the time cap, strings and blobs are capped") {
    TempDir dir;
    RawFileWriter(1, 0).save(dir.path());
    build(dir);
    setenv("TBDPROF_SQL_STATEMENT_SECONDS", "1", 1);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    unsetenv("TBDPROF_SQL_STATEMENT_SECONDS");
    // A query that never ends by itself: interrupted after about a second, not run forever.
    const auto started = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(db.query_int("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"),
                    trace::SqliteError);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));
    // The clock restarts with each statement: the next one runs normally.
    CHECK(db.query_int("SELECT count(*) FROM run") == 1);
    CHECK_THROWS_AS(db.query_int("SELECT length(zeroblob(300000000))"), trace::SqliteError);
    CHECK(sqlite3_hard_heap_limit64(-1) > 0);
}

TEST_CASE("reader: the time cap counts only time without progress, so a long statement that hands over rows runs on") {
    TempDir dir;
    RawFileWriter(1, 0).save(dir.path());
    build(dir);
    setenv("TBDPROF_SQL_STATEMENT_SECONDS", "1", 1);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    unsetenv("TBDPROF_SQL_STATEMENT_SECONDS");
    // 30 rows, each computed by a sub-query of 20,000 steps that depends on the row (so it is run
    // again for each, and the progress handler, called every 10,000 instructions, looks at each
    // row), read by a caller that takes 100 ms per row: 3 s in
    // all, three times the cap, yet never a second without a row. A cap on the whole statement
    // (before: the clock ran from its start) stopped it after about 1 s.
    trace::Statement rows(
        db,
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 30) "
        "SELECT x, (WITH RECURSIVE s(y) AS (SELECT 1 UNION ALL SELECT y + 1 FROM s WHERE y < 19999 + x) "
        "SELECT sum(y) FROM s) FROM r");
    const auto started = std::chrono::steady_clock::now();
    int64_t read = 0;
    while (rows.step()) {
        const int64_t steps = 19999 + rows.column_int(0);
        CHECK(rows.column_int(1) == steps * (steps + 1) / 2);
        ++read;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(read == 30);
    CHECK(std::chrono::steady_clock::now() - started > std::chrono::seconds(2));
    // Without progress the cap still applies on the same connection: a query computing without end
    // and without a row is interrupted.
    CHECK_THROWS_AS(
        db.query_int("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"),
        trace::SqliteError);
}

TEST_CASE("reader: the update opener validates like the reader and then allows writes") {
    TempDir dir;
    RawFileWriter(1, 0).save(dir.path());
    build(dir);
    {
        auto db = trace::open_trace_for_update(dir.file("trace.sqlite"));
        db.exec("DELETE FROM run_notes WHERE key = 'nothing'");
    }
    set_user_version(dir.file("trace.sqlite"), 0);
    CHECK_THROWS_AS(trace::open_trace_for_update(dir.file("trace.sqlite")), trace::TraceOpenError);
}

TEST_CASE("reader: a trace whose table lacks columns added later before its constraints opens and upgrades") {
    // phases gained device_begin_ns and device_end_ns after its columns and before its PRIMARY KEY:
    // a trace written before must still open (read-only) and take them when tagged again.
    TempDir dir;
    RawFileWriter(1, 0).save(dir.path());
    build(dir);
    exec_raw(dir.file("trace.sqlite"),
             "DROP TABLE phases; CREATE TABLE phases (iteration INTEGER NOT NULL REFERENCES iterations(id), "
             "kind TEXT NOT NULL, begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, "
             "PRIMARY KEY (iteration, kind)) WITHOUT ROWID");
    CHECK_FALSE(trace::has_column(trace::open_trace(dir.file("trace.sqlite")), "phases", "device_end_ns"));
    {
        trace::Database db = trace::open_trace_for_update(dir.file("trace.sqlite"));
        trace::upgrade_for_update(db, {"phases"});
    }
    CHECK(trace::has_column(trace::open_trace(dir.file("trace.sqlite")), "phases", "device_end_ns"));
    // Columns put after the constraints, which SQLite never writes, are still refused.
    exec_raw(dir.file("trace.sqlite"),
             "DROP TABLE phases; CREATE TABLE phases (iteration INTEGER NOT NULL REFERENCES iterations(id), "
             "kind TEXT NOT NULL, begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, "
             "PRIMARY KEY (iteration, kind), CHECK (end_ns >= begin_ns)) WITHOUT ROWID");
    CHECK_THROWS_AS(trace::open_trace(dir.file("trace.sqlite")), trace::TraceOpenError);
}

TEST_CASE(
    "reader: upgrade_for_update adds the tables and trailing columns an older trace lacks, as the schema has them") {
    trace::Database current = trace::create_database(":memory:");
    current.exec(trace::kTraceSchemaSql);
    trace::Database older = trace::create_database(":memory:");
    older.exec(trace::kTraceSchemaSql);
    older.exec(
        "DROP TABLE phases; DROP TABLE iterations; CREATE TABLE iterations (id INTEGER PRIMARY KEY, "
        "process INTEGER NOT NULL, idx INTEGER NOT NULL, begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, "
        "source TEXT NOT NULL)");
    trace::upgrade_for_update(older, {"iterations", "phases", "run_notes"});
    auto columns = [](trace::Database& db, const char* table) {
        trace::Statement s(db,
                           "SELECT group_concat(name || ' ' || type || ' ' || \"notnull\" || ' ' || pk, ',') "
                           "FROM pragma_table_info(?1)");
        s.bind(1, table).step();
        return s.column_text(0);
    };
    CHECK(columns(older, "iterations") == columns(current, "iterations"));
    CHECK(columns(older, "phases") == columns(current, "phases"));
    CHECK(query_int(older, "SELECT count(*) FROM sqlite_schema WHERE tbl_name = 'phases'") ==
          query_int(current, "SELECT count(*) FROM sqlite_schema WHERE tbl_name = 'phases'"));  // with its index
    trace::upgrade_for_update(older, {"iterations"});  // a second time changes nothing
    CHECK(columns(older, "iterations") == columns(current, "iterations"));
    CHECK_THROWS_AS(trace::upgrade_for_update(older, {"no_such_table"}), trace::SqliteError);
}
