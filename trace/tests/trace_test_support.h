// Helpers shared by the trace unit tests: build a trace from hand-made raw files and query it.
#pragma once

#include "raw_file_writer.h"

#include <tbdprof/test_support/trace_queries.h>
#include <tbdprof/trace/builder.h>
#include <tbdprof/trace/trace_reader.h>

#include <doctest/doctest.h>

#include <string>

namespace tbdprof::test {

// Builds run directory `dir` into dir/trace.sqlite; fails the test when the build fails.
inline trace::BuildResult build(const TempDir& dir) {
    trace::BuildOptions options;
    options.run_dir = dir.path();
    options.output = dir.file("trace.sqlite");
    trace::BuildResult result = trace::build_trace(options);
    INFO(result.error);
    REQUIRE(result.ok);
    return result;
}

inline std::string query_text(trace::Database& db, const std::string& sql) {
    trace::Statement statement(db, sql);
    return statement.step() ? statement.column_text(0) : std::string("<no row>");
}

inline bool query_is_null(trace::Database& db, const std::string& sql) {
    trace::Statement statement(db, sql);
    REQUIRE(statement.step());
    return statement.is_null(0);
}

}  // namespace tbdprof::test
