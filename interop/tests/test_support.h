// Helpers shared by the interop tests: temporary files, gzip writing, small SQLite queries.
#pragma once

#include "tbdprof/trace/sqlite_handle.h"

#include <tbdprof/test_support/temp_dir.h>
#include <tbdprof/test_support/trace_queries.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace tbdprof::interop::test {

// Shared with the other test binaries (tests/support).
using tbdprof::test::query_int;
using tbdprof::test::TempDir;

void write_text(const std::string& path, const std::string& text);
void write_gzip(const std::string& path, const std::string& text);
std::string read_bytes(const std::string& path);

// Opens a trace read-only and runs one query returning one text (query_int: tests/support).
std::string query_text(const std::string& trace, const std::string& sql);
// The first column of every row, one line each: write the SQL as `a || '|' || b` to compare rows.
std::string query_rows(const std::string& trace, const std::string& sql);

}  // namespace tbdprof::interop::test
