#include "tbdprof/trace/sqlite_handle.h"

#include <sqlite3.h>

namespace tbdprof::trace {
namespace {

SqliteError::Cause cause_of(sqlite3* db, bool preparing) {
    switch (db ? sqlite3_errcode(db) & 0xff : SQLITE_MISUSE) {
        case SQLITE_CORRUPT:
            return SqliteError::Cause::corrupt;
        case SQLITE_NOMEM:
            return SqliteError::Cause::out_of_memory;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return SqliteError::Cause::busy;
        default:
            return preparing ? SqliteError::Cause::prepare : SqliteError::Cause::other;
    }
}

[[noreturn]] void fail(sqlite3* db, std::string_view what, bool preparing = false) {
    throw SqliteError(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "no database"), cause_of(db, preparing));
}

}  // namespace

Database create_database(const std::string& path) {
    sqlite3* handle = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    Database db(handle);  // closes the handle SQLite returns even on failure
    if (rc != SQLITE_OK) fail(handle, "open " + path);
    return db;
}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        close();
        db_ = other.db_;
        other.db_ = nullptr;
    }
    return *this;
}

Database::~Database() {
    close();
}

void Database::close() {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = nullptr;
}

void Database::exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = message ? message : sqlite3_errmsg(db_);
        sqlite3_free(message);
        throw SqliteError(text + " (in: " + std::string(sql).substr(0, 80) + ")", cause_of(db_, false));
    }
}

int64_t Database::query_int(const char* sql) const {
    Statement statement(*this, sql);
    return statement.step() ? statement.column_int(0) : 0;
}

Statement::Statement(const Database& db, std::string_view sql) {
    if (sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_,
                           nullptr) != SQLITE_OK) {
        fail(db.get(), "prepare " + std::string(sql.substr(0, 80)), true);
    }
}

Statement::~Statement() {
    sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    sqlite3_bind_double(stmt_, index, value);
    return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
    sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return *this;
}

Statement& Statement::bind(int index, StaticText text) {
    sqlite3_bind_text64(stmt_, index, text.text.data(), text.text.size(), SQLITE_STATIC, SQLITE_UTF8);
    return *this;
}

Statement& Statement::bind_null(int index) {
    sqlite3_bind_null(stmt_, index);
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(sqlite3_db_handle(stmt_), std::string("step ") + sqlite3_sql(stmt_));
}

void Statement::run() {
    step();
    reset();
}

// Bindings stay: callers bind every parameter of every row (bind_null included), which is cheaper
// than clearing them each time.
void Statement::reset() {
    sqlite3_reset(stmt_);
}

bool Statement::is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t Statement::column_int(int column) const {
    return sqlite3_column_int64(stmt_, column);
}
double Statement::column_double(int column) const {
    return sqlite3_column_double(stmt_, column);
}
std::string Statement::column_text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
}

std::string_view Statement::column_view(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text ? std::string_view(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : std::string_view();
}

// One sqlite3_column_value per column, then the cheap sqlite3_value_* accessors: each
// sqlite3_column_* call enters and leaves the statement's checks, which dominates reading wide rows.
std::optional<int64_t> Statement::column_optional_int(int column) const {
    sqlite3_value* value = sqlite3_column_value(stmt_, column);
    if (sqlite3_value_type(value) == SQLITE_NULL) return std::nullopt;
    return sqlite3_value_int64(value);
}

std::optional<double> Statement::column_optional_double(int column) const {
    if (is_null(column)) return std::nullopt;
    return column_double(column);
}

}  // namespace tbdprof::trace
