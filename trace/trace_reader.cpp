#include "tbdprof/trace/trace_reader.h"

#include "tbdprof/trace/schema.h"

namespace tbdprof::trace {

Database open_trace(const std::string& path) {
    sqlite3* handle = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_EXRESCODE, nullptr);
    Database db(handle);
    if (rc != SQLITE_OK) throw TraceOpenError("cannot open trace " + path + ": " + sqlite3_errstr(rc));
    int enabled = 0;
    sqlite3_db_config(handle, SQLITE_DBCONFIG_DEFENSIVE, 1, &enabled);
    sqlite3_db_config(handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &enabled);
    sqlite3_db_config(handle, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, &enabled);
    sqlite3_db_config(handle, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &enabled);
    sqlite3_db_config(handle, SQLITE_DBCONFIG_ENABLE_VIEW, 1, &enabled);  // memory_allocations is a view
    int version = 0;
    try {
        version = trace_format_version(db);
        // A file that is not SQLite fails here; an SQLite file without our tables fails below.
        Statement probe(db, "SELECT 1 FROM run LIMIT 1");
    } catch (const SqliteError& e) {
        throw TraceOpenError(path + " is not a tbdprof trace (" + e.what() + ")");
    }
    if (version > kTraceFormatVersion) {
        throw TraceOpenError("trace format " + std::to_string(version) + " is newer than this tbdprof supports (" +
                             std::to_string(kTraceFormatVersion) + "); upgrade tbdprof");
    }
    if (version < 1) throw TraceOpenError(path + " is not a tbdprof trace (no format version)");
    return db;
}

int trace_format_version(Database& db) { return static_cast<int>(db.query_int("PRAGMA user_version")); }

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
    s.peak_device_bytes = db.query_int(
        "SELECT coalesce(max(live), 0) FROM ("
        "  SELECT sum(delta) OVER (ORDER BY t, delta ROWS UNBOUNDED PRECEDING) AS live FROM ("
        "    SELECT alloc_ns AS t, bytes AS delta FROM allocations WHERE kind <> 'pinned_host'"
        "    UNION ALL"
        "    SELECT free_ns, -bytes FROM allocations WHERE kind <> 'pinned_host' AND free_ns IS NOT NULL))");
    Statement device(db, "SELECT name FROM devices ORDER BY id LIMIT 1");
    if (device.step()) s.device_name = device.column_text(0);
    return s;
}

}  // namespace tbdprof::trace
