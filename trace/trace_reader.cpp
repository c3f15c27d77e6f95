#include "tbdprof/trace/trace_reader.h"

#include <sqlite3.h>

#include "tbdprof/trace/memory_kinds.h"
#include "tbdprof/trace/safe_text.h"
#include "tbdprof/trace/schema.h"
#include "tbdprof/trace/tables.h"
#include "trace_validation.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tbdprof::trace {
namespace {

using Clock = std::chrono::steady_clock;

// Per-connection budget of time without progress. A limit meant to catch a statement that never
// ends must not stop one that is merely long: reading 25 M library calls of a 100 M-kernel trace
// took over 300 s on a loaded machine while handing over rows all along. So the clock restarts
// whenever the statement shows progress: a row handed to the caller (SQLITE_TRACE_ROW; the
// caller's own time between rows is then never counted) or a page read from the file (the cache's
// miss count: an aggregate or a sort scanning a large table returns no row until the end). A
// statement that computes without either, such as a recursive query without end, is interrupted
// by the progress handler once `limit` has passed since its last progress. SQLITE_TRACE_STMT
// marks each statement's start, SQLITE_TRACE_CLOSE frees the state with the connection.
struct StatementClock {
    sqlite3* db = nullptr;
    Clock::time_point last_progress = Clock::now();
    Clock::duration limit{};
    uint64_t rows = 0;       // rows handed over on this connection
    uint64_t rows_seen = 0;  // ... when the progress handler last looked
    int pages_seen = 0;      // the cache's miss count then
};

int pages_read(sqlite3* db) {
    int current = 0, highest = 0;
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_MISS, &current, &highest, 0);
    return current;
}

int on_trace_event(unsigned event, void* context, void*, void*) {
    auto* clock = static_cast<StatementClock*>(context);
    if (event == SQLITE_TRACE_ROW) ++clock->rows;
    if (event == SQLITE_TRACE_STMT) clock->last_progress = Clock::now();
    if (event == SQLITE_TRACE_CLOSE) delete clock;
    return 0;
}

int on_progress(void* context) {
    auto* clock = static_cast<StatementClock*>(context);
    const Clock::time_point now = Clock::now();
    const int pages = pages_read(clock->db);
    if (clock->rows != clock->rows_seen || pages != clock->pages_seen) {
        clock->rows_seen = clock->rows;
        clock->pages_seen = pages;
        clock->last_progress = now;
        return 0;
    }
    return now - clock->last_progress > clock->limit ? 1 : 0;
}

int64_t positive_env(const char* name, int64_t fallback) {
    const char* text = std::getenv(name);
    if (!text || !*text) return fallback;
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    return end && *end == '\0' && value > 0 ? value : fallback;
}

// SQLite reads missing pages of a truncated file as zeros; the header says how long the file should
// be (when its "valid for" counter matches the change counter).
std::string header_problem(const std::string& path, int64_t file_size) {
    unsigned char header[100];
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) return std::string("cannot open it: ") + std::strerror(errno);
    const size_t got = std::fread(header, 1, sizeof header, file);
    std::fclose(file);
    if (got < sizeof header || std::memcmp(header, "SQLite format 3", 16) != 0) return "it is not a SQLite database";
    auto be32 = [&](int at) {
        return (uint32_t{header[at]} << 24) | (uint32_t{header[at + 1]} << 16) | (uint32_t{header[at + 2]} << 8) |
               uint32_t{header[at + 3]};
    };
    uint32_t page_size = (uint32_t{header[16]} << 8) | header[17];
    if (page_size == 1) page_size = 65536;
    const uint32_t pages = be32(28);
    if (pages != 0 && be32(24) == be32(92) && static_cast<int64_t>(pages) * page_size > file_size)
        return "it is truncated (" + std::to_string(file_size) + " bytes of " +
               std::to_string(static_cast<int64_t>(pages) * page_size) + ")";
    return {};
}

TraceOpenError locked_error(const std::string& path) {
    return TraceOpenError(path + " is locked by another program that is writing it (database is locked); " +
                              "try again when it has finished",
                          true);
}

}  // namespace

sqlite3* open_trace_handle(const std::string& path, TraceAccess access) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        throw TraceOpenError("cannot open trace " + path + ": " + std::strerror(errno));
    if (!S_ISREG(info.st_mode))
        throw TraceOpenError(
            path + " is not a regular file (" +
            (S_ISDIR(info.st_mode) ? std::string("a directory") : std::string("a device, FIFO or socket")) +
            "), so not a tbdprof trace");
    if (info.st_size == 0) throw TraceOpenError(path + " is empty, not a tbdprof trace");
    if (std::string problem = header_problem(path, info.st_size); !problem.empty())
        throw TraceOpenError(path + " is not a tbdprof trace: " + problem);

    // One cap on SQLite's heap for the whole process (it is global): a hostile file must fail with
    // "out of memory", not take the machine's. Set once, never lowered under another user's value.
    if (sqlite3_hard_heap_limit64(-1) == 0)
        sqlite3_hard_heap_limit64(positive_env("TBDPROF_SQLITE_HEAP_LIMIT_MB", 4096) * 1024 * 1024);

    // NOMUTEX: a connection is used by one thread at a time (the analyzer's parallel scan opens one
    // per thread), so SQLite's per-call mutex would only cost time on every column read.
    const int flags = (access == TraceAccess::update ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) |
                      SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX;
    sqlite3* handle = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
    Database db(handle);
    if (rc != SQLITE_OK) throw TraceOpenError("cannot open trace " + path + ": " + sqlite3_errstr(rc));
    int enabled = 0;
    // No writes to the schema or shadow tables through SQL, no unsafe functions reachable from the
    // file's own schema, no extensions, no triggers; views stay on for tbdprof's own (validated below).
    sqlite3_db_config(handle, SQLITE_DBCONFIG_DEFENSIVE, 1, &enabled);
    sqlite3_db_config(handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &enabled);
    sqlite3_db_config(handle, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, &enabled);
    sqlite3_db_config(handle, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &enabled);
    sqlite3_db_config(handle, SQLITE_DBCONFIG_ENABLE_VIEW, 1, &enabled);
    sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, 256 * 1024 * 1024);  // no string or blob above 256 MiB
    auto* clock = new StatementClock;
    clock->db = handle;
    clock->limit = std::chrono::seconds(positive_env("TBDPROF_SQL_STATEMENT_SECONDS", 300));
    sqlite3_trace_v2(handle, SQLITE_TRACE_STMT | SQLITE_TRACE_ROW | SQLITE_TRACE_CLOSE, on_trace_event, clock);
    sqlite3_progress_handler(handle, 10000, on_progress, clock);
    sqlite3_busy_timeout(handle, 2000);
    int version = 0;
    try {
        db.exec("PRAGMA cell_size_check = ON");  // corrupt b-trees fail instead of reading garbage
        // A file that is not SQLite fails here; an SQLite file without our tables fails below.
        version = trace_format_version(db);
    } catch (const SqliteError& e) {
        // A lock held past the busy timeout says nothing about the file: it is being written.
        if (e.cause() == SqliteError::Cause::busy) throw locked_error(path);
        throw TraceOpenError(path + " is not a tbdprof trace (" + e.what() + ")");
    }
    if (version > kTraceFormatVersion) {
        throw TraceOpenError(path + ": trace format " + std::to_string(version) +
                             " is newer than this tbdprof supports (" + std::to_string(kTraceFormatVersion) +
                             "); upgrade tbdprof");
    }
    if (version < 1) throw TraceOpenError(path + " is not a tbdprof trace (no format version)");
    if (std::string problem = detail::schema_problem(handle); !problem.empty())
        throw TraceOpenError(path + " is not a tbdprof trace as written by tbdprof: " + printable(problem));
    try {
        if (db.query_int("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'run'") == 0)
            throw TraceOpenError(path + " is not a complete tbdprof trace: table 'run' is missing");
        if (db.query_int("SELECT count(*) FROM run") < 1)
            throw TraceOpenError(path + " is not a complete tbdprof trace: its run table has no row");
    } catch (const SqliteError& e) {
        if (e.cause() == SqliteError::Cause::busy) throw locked_error(path);
        throw TraceOpenError(path + " is damaged (" + e.what() + ")");
    }
    return db.release();
}

Database open_trace(const std::string& path) {
    return Database(open_trace_handle(path, TraceAccess::read_only));
}

Database open_trace_for_update(const std::string& path) {
    return Database(open_trace_handle(path, TraceAccess::update));
}

void upgrade_for_update(Database& db, std::initializer_list<std::string_view> tables) {
    Database ours = create_database(":memory:");
    ours.exec(kTraceSchemaSql);
    for (const std::string_view table : tables) {
        if (!has_table(db, table)) {  // the table, then its indexes
            Statement create(ours,
                             "SELECT sql FROM sqlite_schema WHERE tbl_name = ?1 AND sql IS NOT NULL "
                             "ORDER BY type = 'index'");
            create.bind(1, table);
            bool found = false;
            while (create.step()) found = true, db.exec(create.column_text(0).c_str());
            if (!found) throw SqliteError("no table " + std::string(table) + " in this build's schema");
            continue;
        }
        Statement present(db, "SELECT count(*) FROM pragma_table_info(?1)");
        present.bind(1, table).step();
        Statement columns(ours,
                          "SELECT name, type, \"notnull\", dflt_value FROM pragma_table_info(?1) "
                          "WHERE cid >= ?2 ORDER BY cid");
        columns.bind(1, table).bind(2, present.column_int(0));
        while (columns.step()) {
            std::string column = columns.column_text(0) + " " + columns.column_text(1);
            if (columns.column_int(2)) column += " NOT NULL";
            if (!columns.is_null(3)) column += " DEFAULT " + columns.column_text(3);
            db.exec(("ALTER TABLE " + std::string(table) + " ADD COLUMN " + column).c_str());
        }
    }
}

int trace_format_version(Database& db) {
    return static_cast<int>(db.query_int("PRAGMA user_version"));
}

TraceSummary read_summary(Database& db) {
    TraceSummary s;
    {
        Statement run(db, "SELECT command_line, duration_ns, simulated_device, clock_source FROM run");
        if (run.step()) {
            s.command_line = run.column_text(0);
            s.duration_ns = run.column_int(1);
            s.simulated_device = run.column_int(2) != 0;
            s.clock_source = run.column_text(3);
        }
    }
    s.kernels = db.query_int("SELECT count(*) FROM kernels");
    s.copies = db.query_int("SELECT count(*) FROM copies");
    s.sets = db.query_int("SELECT count(*) FROM sets");
    s.allocations = db.query_int("SELECT count(*) FROM allocations");
    s.kernel_allocation_edges = db.query_int("SELECT count(*) FROM kernel_allocations");
    s.processes = db.query_int("SELECT count(*) FROM processes");
    s.dropped_events = db.query_int("SELECT coalesce(sum(count), 0) FROM dropped_events");
    // Running total of live device bytes over time; at equal times frees count first, so a free and
    // an allocation in the same nanosecond do not look like both were live.
    const std::string device_memory = std::string("kind IN ") + kDeviceMemoryKindsSql;
    s.peak_device_bytes =
        db.query_int(("SELECT coalesce(max(live), 0) FROM ("
                      "  SELECT sum(delta) OVER (ORDER BY t, delta ROWS UNBOUNDED PRECEDING) AS live FROM ("
                      "    SELECT alloc_ns AS t, bytes AS delta FROM allocations WHERE " +
                      device_memory +
                      "    UNION ALL"
                      "    SELECT free_ns, -bytes FROM allocations WHERE " +
                      device_memory + " AND free_ns IS NOT NULL))")
                         .c_str());
    Statement device(db, "SELECT name FROM devices ORDER BY id LIMIT 1");
    if (device.step()) s.device_name = device.column_text(0);
    return s;
}

}  // namespace tbdprof::trace
