// One-value queries on a trace, for tests. Header-only, so that the support library itself needs no
// trace library (the raw-file checkers link without it); users link tbdprof_trace.
#pragma once

#include <tbdprof/trace/sqlite_handle.h>
#include <tbdprof/trace/trace_reader.h>

#include <cstdint>
#include <string>

namespace tbdprof::test {

// The first column of the first row as an integer; 0 when there is no row (as Database::query_int).
inline int64_t query_int(trace::Database& db, const std::string& sql) {
    return db.query_int(sql.c_str());
}

// The same on the trace at `path`, opened read-only for this one query.
inline int64_t query_int(const std::string& path, const std::string& sql) {
    trace::Database db = trace::open_trace(path);
    return query_int(db, sql);
}

}  // namespace tbdprof::test
