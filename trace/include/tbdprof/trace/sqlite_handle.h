// Thin RAII wrappers over the SQLite C API, shared by the trace builder, the trace reader and the
// analyzer. Errors throw SqliteError with SQLite's message and the statement that failed.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

// SQLite's handles, declared only: no file outside trace/ includes sqlite3.h (docs/architecture.md).
struct sqlite3;
struct sqlite3_stmt;

namespace tbdprof::trace {

class SqliteError : public std::runtime_error {
public:
    // What went wrong, for callers that word it for the user without matching SQLite's text.
    // busy: another connection holds a lock (a program writing the file) past the busy timeout.
    enum class Cause { other, corrupt, out_of_memory, prepare, busy };
    explicit SqliteError(const std::string& message, Cause cause = Cause::other)
        : std::runtime_error(message), cause_(cause) {}
    Cause cause() const { return cause_; }

private:
    Cause cause_;
};

class Database {
public:
    Database() = default;
    explicit Database(sqlite3* db) : db_(db) {}
    Database(Database&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    sqlite3* get() const { return db_; }
    explicit operator bool() const { return db_ != nullptr; }
    // Runs one or more statements that return no rows.
    void exec(const char* sql);
    // First column of the first row as an integer (0 when there is no row).
    int64_t query_int(const char* sql) const;
    void close();
    // Gives up ownership: the caller closes the returned handle.
    sqlite3* release() {
        sqlite3* db = db_;
        db_ = nullptr;
        return db;
    }

private:
    sqlite3* db_ = nullptr;
};

// Opens (creating it when missing) a database read-write without any of the trace checks: for the
// builder's temporary, test fixtures and developer tools that make files, never for reading input.
Database create_database(const std::string& path);

// Text that SQLite may read in place instead of copying (SQLITE_STATIC): the caller keeps it alive
// and unchanged until the parameter is bound again or the statement is finalized (the rows of a
// model being written, bound by Statement's owner while the model lives).
struct StaticText {
    std::string_view text;
};

class Statement {
public:
    Statement(const Database& db, std::string_view sql);
    Statement(Statement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    // Bind by 1-based index.
    Statement& bind(int index, int64_t value);
    Statement& bind(int index, uint64_t value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, unsigned value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view text);  // copied by SQLite
    Statement& bind(int index, StaticText text);        // not copied: see StaticText
    Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
    Statement& bind_null(int index);
    template <class T>
    Statement& bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bind_null(index);
    }
    // Binds the values to parameters base + 1, base + 2, ... in order (evaluate arguments with side
    // effects first: a call's arguments are evaluated in no set order); bind_all starts at 1.
    template <class... T>
    Statement& bind_after(int base, const T&... values) {
        (bind(++base, values), ...);
        return *this;
    }
    template <class... T>
    Statement& bind_all(const T&... values) {
        return bind_after(0, values...);
    }

    // Steps once: true when a row is available.
    bool step();
    // Runs a statement that returns no rows, then resets it for reuse.
    void run();
    void reset();

    bool is_null(int column) const;
    int64_t column_int(int column) const;
    double column_double(int column) const;
    std::string column_text(int column) const;
    // The text of a column without copying it: valid until the next step(), reset() or destruction.
    std::string_view column_view(int column) const;
    std::optional<int64_t> column_optional_int(int column) const;
    std::optional<double> column_optional_double(int column) const;

private:
    sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace tbdprof::trace
