// Bad input: missing, not SQLite, empty, too new, truncated, flipped bytes, dropped tables. Each
// gives one clear message and a non-zero exit, never a crash.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/trace/sqlite_handle.h"
#include "trace_builder.h"

using tbdtest::run_analyze;

namespace {

std::string make_trace(const std::string& name) {
    tbdtest::TraceBuilder t(name);
    for (int i = 0; i < 3; ++i) t.range(i * 100000, (i + 1) * 100000, "step");
    // Enough rows to span many pages, so truncation and flips land inside tables and indexes.
    for (int i = 0; i < 3000; ++i) {
        t.kernel(i * 100, 60, 1 + i % 3, 0, i % 5 == 0 ? std::optional<int64_t>(t.library_call(1e6, 68, 0)) : std::nullopt);
        if (i % 10 == 0) t.allocation(4096 + i, i * 100, i * 100 + 500, i % 20 ? "activations" : "");
    }
    return t.finish(300000);
}

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Changes a file behind the trace library's back, as a damaged or hostile file would be.
void tamper(const std::string& path, const std::string& sql) { tbdprof::trace::create_database(path).exec(sql.c_str()); }

void expect_one_clear_failure(const std::string& path, const char* expected = nullptr) {
    const auto r = run_analyze("report " + path);
    CHECK_FALSE(r.signaled);
    CHECK(r.status == 2);
    // One message: a single line on stderr naming the file.
    CHECK(r.output.find('\n') == r.output.size() - 1);
    CHECK(r.output.find(path) != std::string::npos);
    if (expected) CHECK_MESSAGE(r.output.find(expected) != std::string::npos, r.output);
}

}  // namespace

TEST_CASE("missing, empty, directory, not SQLite") {
    expect_one_clear_failure(tbdtest::temp_path("does-not-exist.sqlite"), "No such file");
    const std::string empty = tbdtest::temp_path("empty.sqlite");
    write(empty, "");
    expect_one_clear_failure(empty, "empty");
    const std::string text = tbdtest::temp_path("not-sqlite.sqlite");
    write(text, std::string(8192, 'x'));
    expect_one_clear_failure(text, "not a SQLite database");
    expect_one_clear_failure(TBD_TEST_TMP, "directory");
}

TEST_CASE("a newer format version is refused") {
    const std::string path = make_trace("bad_newer.sqlite");
    tamper(path, "PRAGMA user_version = 999");
    expect_one_clear_failure(path, "newer than this tbdprof");
}

TEST_CASE("a SQLite file that is not a trace") {
    const std::string path = tbdtest::temp_path("bad_other.sqlite");
    std::remove(path.c_str());
    tamper(path, "CREATE TABLE notes (x); PRAGMA user_version = 1");
    expect_one_clear_failure(path, "not a complete tbdprof trace");
}

TEST_CASE("dropped tables") {
    const std::string original = make_trace("bad_drop_source.sqlite");
    for (const char* table : {"kernels", "allocations", "devices", "run", "library_calls", "ranges", "functions"}) {
        const std::string path = tbdtest::temp_path(std::string("bad_drop_") + table + ".sqlite");
        write(path, read(original));
        tamper(path, std::string("DROP VIEW IF EXISTS kernel_view; DROP VIEW IF EXISTS memory_allocations; DROP TABLE ") +
                         table);
        expect_one_clear_failure(path, table);
    }
    // A table replaced by a view (a file from anyone): refused, views are never read.
    const std::string path = tbdtest::temp_path("bad_view.sqlite");
    write(path, read(original));
    tamper(path, "DROP VIEW kernel_view; DROP TABLE kernels; CREATE VIEW kernels AS SELECT * FROM copies");
    expect_one_clear_failure(path, "kernels");
}

TEST_CASE("an empty trace: nothing recorded") {
    tbdtest::TraceBuilder t("bad_nothing.sqlite");
    expect_one_clear_failure(t.finish(1000), "no kernels");
}

TEST_CASE("truncated copies") {
    const std::string original = read(make_trace("bad_trunc_source.sqlite"));
    REQUIRE(original.size() > 64 * 1024);
    for (double fraction : {0.0005, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99}) {
        const std::string path = tbdtest::temp_path("bad_truncated.sqlite");
        write(path, original.substr(0, static_cast<size_t>(static_cast<double>(original.size()) * fraction)));
        CAPTURE(fraction);
        const auto r = run_analyze("report " + path);
        CHECK_FALSE(r.signaled);
        CHECK(r.status == 2);
        CHECK(r.output.find(path) != std::string::npos);
    }
}

TEST_CASE("flipped bytes never crash") {
    const std::string original = read(make_trace("bad_flip_source.sqlite"));
    std::mt19937 random(12345);
    int failures = 0;
    for (int round = 0; round < 40; ++round) {
        std::string copy = original;
        // Flip a burst of bytes somewhere past the 100-byte header, sometimes in the header too.
        const size_t at = round % 8 == 0 ? 16 + random() % 84 : 100 + random() % (copy.size() - 200);
        for (size_t i = 0; i < 16 && at + i < copy.size(); ++i) copy[at + i] = static_cast<char>(copy[at + i] ^ (1 + random() % 255));
        const std::string path = tbdtest::temp_path("bad_flipped.sqlite");
        write(path, copy);
        CAPTURE(round);
        CAPTURE(at);
        const auto r = run_analyze("report " + path + " --format json -o /dev/null");
        CHECK_FALSE(r.signaled);
        CHECK((r.status == 0 || r.status == 2));
        if (r.status == 2) {
            ++failures;
            CHECK(r.output.find(path) != std::string::npos);
        }
    }
    MESSAGE(failures << " of 40 flipped copies were refused; the rest still read as valid traces");
}
