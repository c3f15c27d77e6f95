#include "trace_validation.h"

#include <sqlite3.h>

#include "tbdprof/trace/schema.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>
#include <string_view>

namespace tbdprof::trace::detail {
namespace {

struct SchemaObject {
    std::string type;  // table, view, index, trigger
    std::string table;
    std::string sql;  // normalized; empty for automatic indexes
};
using Schema = std::map<std::string, SchemaObject>;

// Comments dropped, whitespace collapsed, and no spaces next to punctuation, so that the same
// statement compares equal however it was laid out (also a comment after a comma: older traces'
// tables end "..., source TEXT NOT NULL -- comment" where the schema now goes on after the comma).
std::string normalize(std::string_view sql) {
    std::string out;
    const auto space = [&out] {
        if (!out.empty() && out.back() != ' ' && out.back() != ',' && out.back() != '(') out += ' ';
    };
    bool in_string = false;
    for (size_t i = 0; i < sql.size(); ++i) {
        const char c = sql[i];
        if (in_string) {
            out += c;
            if (c == '\'') in_string = false;
            continue;
        }
        if (c == '\'') {
            in_string = true;
            out += c;
            continue;
        }
        if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
            while (i < sql.size() && sql[i] != '\n') ++i;
            space();
            continue;
        }
        if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
            const size_t end = sql.find("*/", i + 2);
            i = end == std::string_view::npos ? sql.size() : end + 1;
            space();
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space();
            continue;
        }
        if (c == '(' || c == ')' || c == ',') {
            if (!out.empty() && out.back() == ' ') out.pop_back();
            out += c;
            while (i + 1 < sql.size() && (sql[i + 1] == ' ' || sql[i + 1] == '\t' || sql[i + 1] == '\n')) ++i;
            continue;
        }
        out += c;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

Schema read_schema(sqlite3* db, std::string& error) {
    Schema schema;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema", -1, &s, nullptr) != SQLITE_OK) {
        error = sqlite3_errmsg(db);
        return schema;
    }
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        auto text = [&](int column) {
            const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
            return t ? std::string(t, static_cast<size_t>(sqlite3_column_bytes(s, column))) : std::string();
        };
        schema[text(1)] = SchemaObject{text(0), text(2), normalize(text(3))};
    }
    if (rc != SQLITE_DONE) error = sqlite3_errmsg(db);
    sqlite3_finalize(s);
    return schema;
}

// The schema this build writes, made once in an in-memory database from the embedded script.
const Schema& reference_schema() {
    static std::once_flag once;
    static Schema schema;
    std::call_once(once, [] {
        sqlite3* db = nullptr;
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK &&
            sqlite3_exec(db, kTraceSchemaSql, nullptr, nullptr, nullptr) == SQLITE_OK) {
            std::string ignored;
            schema = read_schema(db, ignored);
        }
        sqlite3_close(db);
    });
    return schema;
}

// "CREATE TABLE x(a INTEGER,b TEXT)" -> "CREATE TABLE x(a INTEGER,b TEXT"; the suffix kept apart.
// The suffix begins with the table's constraints when it has any ("...,b TEXT,PRIMARY KEY(a,b))
// WITHOUT ROWID"): ALTER TABLE ADD COLUMN puts a column after the last column, before them, so a
// column added later sits there both in the schema and in an upgraded older trace.
std::string without_close(const std::string& sql, std::string& suffix) {
    size_t end = sql.rfind(')');
    if (end == std::string::npos) return sql;
    for (const char* constraint : {",PRIMARY KEY(", ",UNIQUE(", ",CHECK(", ",FOREIGN KEY(", ",CONSTRAINT "})
        end = std::min(end, sql.find(constraint));
    suffix = sql.substr(end);
    return sql.substr(0, end);
}

// What ALTER TABLE ADD COLUMN leaves, and nothing that runs code: ",name TYPE [NOT NULL] [DEFAULT literal]".
bool only_simple_columns(const std::string& text) {
    static const std::regex columns(
        R"((,[A-Za-z_][A-Za-z0-9_]*( [A-Za-z]+)?( NOT NULL)?( DEFAULT ('[^']*'|-?[0-9]+(\.[0-9]+)?|NULL))?)*)");
    return std::regex_match(text, columns);
}

bool compatible_table(const std::string& file_sql, const std::string& ours) {
    if (file_sql == ours) return true;
    std::string file_suffix, our_suffix;
    const std::string a = without_close(file_sql, file_suffix), b = without_close(ours, our_suffix);
    if (file_suffix != our_suffix) return false;
    if (a.size() <= b.size()) return b.compare(0, a.size(), a) == 0 && only_simple_columns(b.substr(a.size()));
    return a.compare(0, b.size(), b) == 0 && only_simple_columns(a.substr(b.size()));
}

// An index whose keys are plain columns and which covers every row: it runs no expression when a row
// is written (an expression or a partial index's WHERE clause would, on every insert by `tag`).
bool plain_index(sqlite3* db, const std::string& table, const std::string& index) {
    sqlite3_stmt* s = nullptr;
    bool plain = true;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_index_xinfo(?1) WHERE cid = -2", -1, &s, nullptr) != SQLITE_OK)
        return false;
    sqlite3_bind_text(s, 1, index.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) == SQLITE_ROW) plain = false;
    sqlite3_finalize(s);
    if (!plain) return false;
    if (sqlite3_prepare_v2(db, "SELECT partial FROM pragma_index_list(?1) WHERE name = ?2", -1, &s, nullptr) !=
        SQLITE_OK)
        return false;
    sqlite3_bind_text(s, 1, table.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, index.c_str(), -1, SQLITE_TRANSIENT);
    plain = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == 0;
    sqlite3_finalize(s);
    return plain;
}

// hidden 2 and 3 are generated columns (virtual, stored); 1 is a virtual table's hidden column (an
// FTS5 table has two), which runs nothing.
bool has_generated_columns(sqlite3* db, const std::string& table) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_xinfo(?1) WHERE hidden IN (2, 3)", -1, &s, nullptr) !=
        SQLITE_OK)
        return true;
    sqlite3_bind_text(s, 1, table.c_str(), -1, SQLITE_TRANSIENT);
    const bool found = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return found;
}

}  // namespace

std::string schema_problem(sqlite3* db) {
    std::string error;
    const Schema file = read_schema(db, error);
    if (!error.empty()) return "its schema cannot be read (" + error + ")";
    const Schema& ours = reference_schema();
    if (ours.empty()) return "this build's own schema does not load";
    for (const auto& [name, object] : file) {
        const auto known = ours.find(name);
        if (object.type == "trigger") return "it holds a trigger (" + name + "), which no tbdprof trace has";
        if (object.type == "view") {
            // A view of a newer tbdprof (allowed without a version bump) is never read here; one that
            // takes the name of ours, or of one of our tables, would be.
            if (known != ours.end() && (known->second.type != "view" || known->second.sql != object.sql))
                return "it holds a view " + name + " that is not tbdprof's";
            continue;
        }
        if (object.type == "index") {
            if (object.sql.empty()) continue;  // made by SQLite for a PRIMARY KEY or UNIQUE
            if (known != ours.end() && known->second.type == "index" && known->second.sql == object.sql) continue;
            // Added indexes are allowed too (no version bump), as long as they run no expression.
            if (!plain_index(db, object.table, name))
                return "it holds an index " + name +
                       " on expressions or with a WHERE clause, which tbdprof never makes";
            continue;
        }
        if (object.type != "table") return "it holds an unexpected " + object.type + " " + name;
        if (object.sql.starts_with("CREATE VIRTUAL TABLE")) {
            // A full-text index a user added (FTS5, allowed by docs/trace-format.md) is never read
            // here, and nothing of it is looked into (its module may not even be loaded); it may
            // only not take the name of one of tbdprof's tables.
            if (known != ours.end()) return name + " is a virtual table where tbdprof has a " + known->second.type;
            continue;
        }
        if (has_generated_columns(db, name)) return "table " + name + " has generated columns";
        if (known == ours.end()) continue;  // a table of a newer tbdprof: nobody here reads it
        if (known->second.type != "table") return name + " is a table where tbdprof has a " + known->second.type;
        if (!compatible_table(object.sql, known->second.sql))
            return "table " + name + " is not defined as tbdprof defines it";
    }
    for (const auto& [name, object] : ours) {
        if (object.type != "table" && object.type != "view") continue;
        const auto found = file.find(name);
        if (found != file.end() && found->second.type != object.type)
            return name + " is a " + found->second.type + " where tbdprof has a " + object.type;
    }
    return {};
}

}  // namespace tbdprof::trace::detail
