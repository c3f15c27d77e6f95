#include "trace_file.h"

#include <string_view>

#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

// The tables every report reads. Tables added by later versions (iterations) are optional.
constexpr const char* kRequiredTables[] = {"run",           "devices",     "functions",
                                           "strings",       "kernels",     "copies",
                                           "sets",          "allocations", "allocation_categories",
                                           "library_calls", "ranges",      "cpu_samples"};

}  // namespace

TraceFile open_for_analysis(const std::string& path) {
    TraceFile trace{trace::open_trace(path), path};
    trace.format_version = trace::trace_format_version(trace.db);
    for (const char* table : kRequiredTables) {
        if (!trace::has_table(trace.db, table))
            throw TraceError(path + " is not a complete tbdprof trace: table '" + table + "' is missing");
    }
    return trace;
}

TraceError read_error(const std::string& path, const trace::SqliteError& error) {
    switch (error.cause()) {
        case trace::SqliteError::Cause::out_of_memory:
            return TraceError("out of memory while reading " + path);
        case trace::SqliteError::Cause::corrupt:
            return TraceError(path + " is corrupt or truncated (database disk image is malformed)");
        // A statement that cannot be prepared names a table or column the file lacks.
        case trace::SqliteError::Cause::prepare:
            return TraceError(path + " is not a complete tbdprof trace (" + std::string(error.what()) + ")");
        case trace::SqliteError::Cause::busy:
            return TraceError(path + " is locked by another program that is writing it (database is locked); " +
                                  "try again when it has finished",
                              true);
        case trace::SqliteError::Cause::other:
            break;
    }
    return TraceError("cannot read trace " + path + ": " + std::string(error.what()));
}

}  // namespace tbdprof::analyzer
