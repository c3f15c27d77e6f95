// Opening a trace for analysis through the trace library's one opener (tbdprof/trace/trace_reader.h),
// and the one place where the trace library's errors become the analyzer's TraceError sentence.
#pragma once

#include <string>
#include <utility>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/trace/sqlite_handle.h"
#include "tbdprof/trace/trace_reader.h"

namespace tbdprof::analyzer {

struct TraceFile {
    trace::Database db;
    std::string path;
    int format_version = 0;
};

// Opens `path` (trace::open_trace) and checks that the tables every report reads are there.
TraceFile open_for_analysis(const std::string& path);

// One sentence for the user about a failed read of `path` (a corrupt page, out of memory, a missing
// table met while reading).
TraceError read_error(const std::string& path, const trace::SqliteError& error);

// Opens `path` and runs `read` on it. The trace library's TraceOpenError and SqliteError (also those
// of other connections and threads, rethrown here) reach the caller as TraceError.
template <class Read>
auto read_trace(const std::string& path, Read&& read) {
    try {
        TraceFile trace = open_for_analysis(path);
        return std::forward<Read>(read)(trace);
    } catch (const trace::TraceOpenError& e) {
        throw TraceError(e.what(), e.busy());
    } catch (const trace::SqliteError& e) {
        throw read_error(path, e);
    }
}

}  // namespace tbdprof::analyzer
