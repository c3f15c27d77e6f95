// Minimal read-only SQLite wrappers for the analyzer. Errors throw TraceError with SQLite's message,
// so a corrupt trace ends in one clear sentence instead of a crash.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tbdprof::analyzer {

class ReadOnlyDatabase {
public:
    // Opens `path` read-only with SQLite's defensive settings: no writes, no extension loading,
    // untrusted schema (views and triggers of the file cannot call unsafe functions).
    explicit ReadOnlyDatabase(const std::string& path);
    ReadOnlyDatabase(const ReadOnlyDatabase&) = delete;
    ReadOnlyDatabase& operator=(const ReadOnlyDatabase&) = delete;
    ~ReadOnlyDatabase();

    sqlite3* get() const { return db_; }
    const std::string& path() const { return path_; }
    // True when the file has a real table (not a view) of this name.
    bool has_table(std::string_view name) const;
    bool has_column(std::string_view table, std::string_view column) const;
    int64_t query_int(std::string_view sql) const;  // first column of the first row, 0 without rows

private:
    sqlite3* db_ = nullptr;
    std::string path_;
};

class Query {
public:
    Query(const ReadOnlyDatabase& db, std::string_view sql);
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;
    ~Query();

    Query& bind(int index, int64_t value);
    Query& bind(int index, std::string_view text);
    bool step();  // true when a row is available; throws on corruption
    void reset();

    bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
    int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
    double real(int column) const { return sqlite3_column_double(stmt_, column); }
    std::string text(int column) const;
    sqlite3_stmt* raw() const { return stmt_; }

private:
    const ReadOnlyDatabase& db_;
    sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace tbdprof::analyzer
