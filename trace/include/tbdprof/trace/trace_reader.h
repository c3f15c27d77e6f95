// Opening a trace for reading, safely: a .sqlite file may come from anywhere, so it is opened
// read-only with SQLite's defensive settings (no writes to the schema through SQL, untrusted schema,
// no extension loading), and its format version is checked before anything else is read.
#pragma once

#include "tbdprof/trace/sqlite_handle.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tbdprof::trace {

// Opens `path` read-only. Throws TraceOpenError with a message meant for the user when it is not a
// tbdprof trace, or when its format is newer than this build reads:
//   "trace format N is newer than this tbdprof supports (M); upgrade tbdprof"
// busy(): the file is locked by another program writing it; it may be a good trace, to read later.
class TraceOpenError : public std::runtime_error {
public:
    explicit TraceOpenError(const std::string& message, bool busy = false) : std::runtime_error(message), busy_(busy) {}
    bool busy() const { return busy_; }

private:
    bool busy_ = false;
};
Database open_trace(const std::string& path);

// The one opener every command uses (open_trace, open_trace_for_update, the analyzer, the tagger).
// It refuses what is not a regular, non-empty SQLite file (a FIFO would block, a device would be
// read forever), checks the format version and the schema (trace_validation.h: tbdprof's tables,
// views and indexes only, no triggers, no generated columns), requires the run row, and opens with
// SQLITE_DBCONFIG_DEFENSIVE, trusted_schema off, no extensions, no triggers, strings and blobs
// capped at 256 MiB, SQLite's heap capped for the process (TBDPROF_SQLITE_HEAP_LIMIT_MB, default
// 4096) and each statement stopped after TBDPROF_SQL_STATEMENT_SECONDS (default 300) without
// progress: the clock restarts with every row handed over and every page read from the file, so a
// long scan of a large trace runs on and only a statement that computes without end is stopped.
// Throws TraceOpenError; the caller owns (sqlite3_close_v2) the returned handle.
enum class TraceAccess { read_only, update };
sqlite3* open_trace_handle(const std::string& path, TraceAccess access);

// For `tbdprof tag`: the same checks, opened read-write. The caller writes in one transaction.
Database open_trace_for_update(const std::string& path);

// Brings `tables` of a trace opened for update to this build's definition (kTraceSchemaSql): a table
// the file lacks is created with its indexes, columns it lacks at a table's end are added, exactly as
// schemas/trace.sql has them (an older trace of the same format version may lack both, see
// docs/trace-format.md). Only the tables the caller writes: a table added empty would tell readers
// that the builder found nothing. Throws SqliteError.
void upgrade_for_update(Database& db, std::initializer_list<std::string_view> tables);

// The format version stored in an open trace (PRAGMA user_version).
int trace_format_version(Database& db);

struct TraceSummary {
    std::string command_line;
    int64_t duration_ns = 0;
    int64_t kernels = 0;
    int64_t copies = 0;
    int64_t sets = 0;
    int64_t allocations = 0;
    int64_t kernel_allocation_edges = 0;
    int64_t peak_device_bytes = 0;  // most device memory (not pinned host) allocated at once, all devices
    int64_t processes = 0;
    int64_t dropped_events = 0;
    bool simulated_device = false;
    std::string clock_source;
    std::string device_name;  // of device 0, empty when no device was seen
};
TraceSummary read_summary(Database& db);

}  // namespace tbdprof::trace
