// Helpers shared by the interop tests: temporary files, gzip writing, small SQLite queries.
#pragma once

#include "tbdprof/trace/sqlite_handle.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace tbdprof::interop::test {

// A fresh directory under the system temp folder, removed with its contents at scope exit.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

void write_text(const std::string& path, const std::string& text);
void write_gzip(const std::string& path, const std::string& text);
std::string read_bytes(const std::string& path);

// Opens a trace read-only and runs one query returning one integer / text.
int64_t query_int(const std::string& trace, const std::string& sql);
std::string query_text(const std::string& trace, const std::string& sql);
// The first column of every row, one line each: write the SQL as `a || '|' || b` to compare rows.
std::string query_rows(const std::string& trace, const std::string& sql);

}  // namespace tbdprof::interop::test
