// The trace writer binds NULL for an id that SQLite would choose itself (next_rowid.h): the tables it
// writes must be what binding every id gave, whatever the ids, and a repeated id must still fail.
#include "next_rowid.h"

#include <tbdprof/test_support/temp_dir.h>
#include <tbdprof/trace/sqlite_handle.h>
#include <tbdprof/trace/trace_model.h>
#include <tbdprof/trace/trace_writer.h>

#include <sqlite3.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace tbdprof;
using trace::detail::NextRowid;

namespace {

constexpr int64_t kLargest = std::numeric_limits<int64_t>::max();

// (rowid, begin_ns) of every row of `table`, in rowid order, read with SQLite alone.
std::vector<std::pair<int64_t, int64_t>> rows_of(const std::string& path, const char* table, const char* time) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    const std::string sql = std::string("SELECT rowid, ") + time + " FROM " + table + " ORDER BY rowid";
    sqlite3_stmt* statement = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
    std::vector<std::pair<int64_t, int64_t>> rows;
    while (sqlite3_step(statement) == SQLITE_ROW)
        rows.emplace_back(sqlite3_column_int64(statement, 0), sqlite3_column_int64(statement, 1));
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return rows;
}

trace::detail::TraceModel model_with_ids(const std::vector<int64_t>& ids) {
    trace::detail::TraceModel m;
    m.processes.push_back({1, 100, std::nullopt, std::nullopt, std::nullopt, 0, 0, false});
    for (size_t i = 0; i < ids.size(); ++i) {
        const auto ns = static_cast<int64_t>(i) * 10;  // the row's place in the model, to find it again
        m.ranges.push_back({ids[i], 1, std::nullopt, ns, ns + 5, "range" + std::to_string(i), "cpu_op"});
        m.api_calls.push_back({ids[i], 1, std::nullopt, "device_sync", ns, ns + 5, std::nullopt});
        trace::detail::KernelRow k;
        k.id = ids[i];
        k.process = 1;
        k.start_ns = ns;
        m.kernels.push_back(k);
    }
    return m;
}

// The writer fills a file its caller made (trace::OutputFile's temporary): an empty one here.
std::string write(const test::TempDir& dir, const char* name, const trace::detail::TraceModel& model) {
    const std::string path = dir.file(name);
    std::ofstream{path};
    trace::detail::write_trace(path, model);
    return path;
}

}  // namespace

TEST_CASE("trace writer: NULL is bound exactly where SQLite would choose the id itself") {
    NextRowid ids;
    CHECK(ids.bind_value(1) == std::nullopt);  // an empty table's first rowid
    CHECK(ids.bind_value(2) == std::nullopt);
    CHECK(ids.bind_value(7) == 7);  // a gap
    CHECK(ids.bind_value(8) == std::nullopt);
    CHECK(ids.bind_value(4) == 4);  // below the largest
    CHECK(ids.bind_value(9) == std::nullopt);
    CHECK(ids.bind_value(9) == 9);  // repeated: bound, so that SQLite refuses it

    NextRowid negative;
    CHECK(negative.bind_value(-3) == -3);  // an empty table would choose 1
    CHECK(negative.bind_value(-2) == std::nullopt);
    CHECK(negative.bind_value(0) == 0);

    NextRowid top;
    CHECK(top.bind_value(kLargest) == kLargest);
    CHECK(top.bind_value(1) == 1);  // past the largest rowid SQLite picks at random
}

TEST_CASE("trace writer: rows keep their ids, in order or not, over several insert batches") {
    test::TempDir dir;
    std::vector<int64_t> ids;
    for (int64_t id = 1; id <= 150; ++id) ids.push_back(id);  // batches of 64 rows, and a rest
    ids.insert(ids.end(), {400, 401, 160, 402, 155, -5, 403, 3'000'000'000});
    for (int64_t id = 3'000'000'001; id < 3'000'000'100; ++id) ids.push_back(id);
    const trace::detail::TraceModel model = model_with_ids(ids);
    const std::string path = write(dir, "t.sqlite", model);

    std::vector<std::pair<int64_t, int64_t>> expected;
    for (size_t i = 0; i < ids.size(); ++i) expected.emplace_back(ids[i], static_cast<int64_t>(i) * 10);
    std::sort(expected.begin(), expected.end());
    CHECK(rows_of(path, "ranges", "begin_ns") == expected);
    CHECK(rows_of(path, "api_calls", "begin_ns") == expected);
    CHECK(rows_of(path, "kernels", "start_ns") == expected);
}

TEST_CASE("trace writer: a repeated id still fails the write") {
    test::TempDir dir;
    CHECK_THROWS_WITH_AS(write(dir, "r.sqlite", model_with_ids({1, 2, 3, 3})),
                         doctest::Contains("UNIQUE constraint failed: kernels.id"), trace::SqliteError);
    CHECK_THROWS_WITH_AS(write(dir, "s.sqlite", model_with_ids({1, 2, 5, 3, 5})),
                         doctest::Contains("UNIQUE constraint failed: kernels.id"), trace::SqliteError);
}
