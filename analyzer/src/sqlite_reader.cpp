#include "sqlite_reader.h"

#include "tbdprof/analyzer/analyze.h"

#include <tbdprof/trace/trace_reader.h>

namespace tbdprof::analyzer {
namespace {

// One sentence for the user, by SQLite's primary result code.
[[noreturn]] void raise(sqlite3* db, int rc, const std::string& path) {
    const char* detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
        throw TraceError(path + " is not a SQLite database, so not a tbdprof trace (" + detail + ")");
    case SQLITE_CORRUPT:
        throw TraceError(path + " is corrupt or truncated (" + detail + ")");
    case SQLITE_CANTOPEN:
        throw TraceError("cannot open " + path + " (" + detail + ")");
    case SQLITE_IOERR:
        throw TraceError("cannot read " + path + " (" + detail + ")");
    case SQLITE_NOMEM:
        throw TraceError("out of memory while reading " + path);
    default:
        throw TraceError("cannot read trace " + path + ": " + detail);
    }
}

}  // namespace

ReadOnlyDatabase::ReadOnlyDatabase(const std::string& path) : path_(path) {
    // The one trace opener (tbdprof/trace/trace_reader.h): regular file, format version, schema,
    // defensive settings, memory and time caps.
    try {
        db_ = trace::open_trace_handle(path, trace::TraceAccess::read_only);
    } catch (const trace::TraceOpenError& e) {
        throw TraceError(e.what());
    }
    int ignored = 0;
    sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_VIEW, 0, &ignored);  // the analyzer reads tables only
}

ReadOnlyDatabase::~ReadOnlyDatabase() { sqlite3_close_v2(db_); }

bool ReadOnlyDatabase::has_table(std::string_view name) const {
    Query query(*this, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
    query.bind(1, name);
    return query.step();
}

bool ReadOnlyDatabase::has_column(std::string_view table, std::string_view column) const {
    Query query(*this, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
    query.bind(1, table).bind(2, column);
    return query.step();
}

int64_t ReadOnlyDatabase::query_int(std::string_view sql) const {
    Query query(*this, sql);
    return query.step() ? query.integer(0) : 0;
}

Query::Query(const ReadOnlyDatabase& db, std::string_view sql) : db_(db) {
    const int rc = sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) {
        const int code = sqlite3_errcode(db.get());
        // A missing table or column means the file is not (or no longer) a complete trace.
        if ((code & 0xff) == SQLITE_ERROR) {
            throw TraceError(db.path() + " is not a complete tbdprof trace (" + sqlite3_errmsg(db.get()) + ")");
        }
        raise(db.get(), code, db.path());
    }
}

Query::~Query() { sqlite3_finalize(stmt_); }

Query& Query::bind(int index, int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
}

Query& Query::bind(int index, std::string_view text) {
    sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return *this;
}

bool Query::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    raise(db_.get(), sqlite3_errcode(db_.get()), db_.path());
}

void Query::reset() { sqlite3_reset(stmt_); }

std::string Query::text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
}

}  // namespace tbdprof::analyzer
