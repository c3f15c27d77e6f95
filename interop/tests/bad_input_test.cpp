// Bad input: one clear error (and no output file) or counted warnings, never a crash.
#include "sample_traces.h"
#include "tbdprof/interop/export.h"
#include "tbdprof/interop/import.h"
#include "tbdprof/interop/interop_error.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>

using namespace tbdprof::interop;
using namespace tbdprof::interop::test;

namespace {

// Imports `path`, expects InteropError whose message contains `needle`, and no output left behind.
void expect_rejected(const TempDir& dir, const std::string& path, const std::string& needle) {
    const std::string out = dir.file("out.sqlite");
    std::string message;
    try {
        import_trace_file(path, out);
    } catch (const InteropError& e) {
        message = e.what();
    }
    INFO("message: " << message);
    CHECK(message.find(needle) != std::string::npos);
    CHECK(!std::filesystem::exists(out));
    // Neither the temporary.
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
    }
}

}  // namespace

TEST_CASE("truncated gzip") {
    TempDir dir;
    write_gzip(dir.file("full.json.gz"), current_layout_trace());
    const std::string bytes = read_bytes(dir.file("full.json.gz"));
    for (size_t keep : {bytes.size() / 2, bytes.size() - 4, size_t{12}}) {
        write_text(dir.file("cut.json.gz"), bytes.substr(0, keep));
        expect_rejected(dir, dir.file("cut.json.gz"), "truncated gzip");
    }
}

TEST_CASE("corrupt gzip data") {
    TempDir dir;
    write_gzip(dir.file("full.json.gz"), current_layout_trace());
    std::string bytes = read_bytes(dir.file("full.json.gz"));
    for (size_t i = 20; i < 60; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
    write_text(dir.file("bad.json.gz"), bytes);
    expect_rejected(dir, dir.file("bad.json.gz"), "gzip");
}

TEST_CASE("gzip whose CRC does not match its data") {
    TempDir dir;
    write_gzip(dir.file("full.json.gz"), current_layout_trace());
    std::string bytes = read_bytes(dir.file("full.json.gz"));
    bytes[bytes.size() - 8] = static_cast<char>(bytes[bytes.size() - 8] ^ 0x01);  // the trailer's CRC-32
    write_text(dir.file("crc.json.gz"), bytes);
    expect_rejected(dir, dir.file("crc.json.gz"), "corrupt gzip data (incorrect data check)");
    // Bytes after the last member that are no gzip member.
    write_text(dir.file("tail.json.gz"), read_bytes(dir.file("full.json.gz")) + "trailing text, not gzip");
    expect_rejected(dir, dir.file("tail.json.gz"), "corrupt gzip data");
}

TEST_CASE("missing and empty files") {
    TempDir dir;
    expect_rejected(dir, dir.file("nope.json"), "cannot open");
    write_text(dir.file("empty.json"), "");
    expect_rejected(dir, dir.file("empty.json"), "empty file");
}

TEST_CASE("invalid JSON") {
    TempDir dir;
    const std::string trace = current_layout_trace();
    write_text(dir.file("cut.json"), trace.substr(0, trace.size() / 2));
    expect_rejected(dir, dir.file("cut.json"), "invalid JSON");
    write_text(dir.file("junk.json"), "{\"traceEvents\": [ {\"ph\": \"X\", ] }");
    expect_rejected(dir, dir.file("junk.json"), "invalid JSON");
    write_text(dir.file("text.json"), "this is not json");
    expect_rejected(dir, dir.file("text.json"), "JSON");
    write_text(dir.file("trailing.json"), "{\"traceEvents\": []} {\"more\": 1}");
    expect_rejected(dir, dir.file("trailing.json"), "after the end");
}

TEST_CASE("JSON that is not a trace") {
    TempDir dir;
    write_text(dir.file("config.json"), R"({"learning_rate": 0.1, "layers": [1, 2, 3]})");
    expect_rejected(dir, dir.file("config.json"), "not a trace");
    write_text(dir.file("string.json"), R"("hello")");
    expect_rejected(dir, dir.file("string.json"), "not a trace");
    write_text(dir.file("events-not-array.json"), R"({"traceEvents": {"a": 1}})");
    expect_rejected(dir, dir.file("events-not-array.json"), "not an array");
    write_text(dir.file("nothing.json"), R"({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}]})");
    expect_rejected(dir, dir.file("nothing.json"), "no events");
    write_text(dir.file("rows.json"), "[[1, 2], [3, 4, 5, 6]]");
    expect_rejected(dir, dir.file("rows.json"), "expected [ts_ns, action, bytes, category]");
}

TEST_CASE("missing or ill-typed fields, negative durations, out-of-order timestamps: counted, not fatal") {
    TempDir dir;
    write_text(dir.file("odd.json"), R"({"traceEvents": [
      {"ph":"X","cat":"kernel","name":"late","pid":0,"tid":7,"ts":500,"dur":5,"args":{"device":0,"stream":7,"correlation":2}},
      {"ph":"X","cat":"kernel","name":"early","pid":0,"tid":7,"ts":100,"dur":5,"args":{"device":0,"stream":7,"correlation":1}},
      {"ph":"X","cat":"kernel","name":"negative","pid":0,"tid":7,"ts":300,"dur":-4,"args":{"device":0,"stream":7}},
      {"ph":"X","cat":"kernel","name":"no dur","pid":0,"tid":7,"ts":300},
      {"ph":"X","cat":"kernel","name":"string ts","pid":0,"tid":7,"ts":"oops","dur":1},
      {"ph":"X","cat":"kernel","name":"object dur","pid":0,"tid":7,"ts":1,"dur":{"a":1}},
      {"ph":"X","cat":"kernel","name":["not a string"],"pid":0,"tid":7,"ts":1,"dur":1},
      {"ph":"X","cat":"kernel","name":"no device","ts":50,"dur":1},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":600,"dur":1,"args":{"correlation":2}},
      {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH","pid":0,"tid":7,"ts":700,"dur":1,"args":{"device":0,"stream":7}},
      {"ph":"X","cat":"cpu_op","name":"open","pid":1,"tid":1,"ts":20},
      {"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":30,"args":{"Device Type":1,"Device Id":0}},
      {"ph":"B","name":"begin","pid":1,"tid":1,"ts":10},
      42,
      {"ph":"X","cat":"kernel","name":"args not object","pid":0,"tid":7,"ts":800,"dur":1,"args":[1,2]}
    ]})");
    const ImportSummary s = import_trace_file(dir.file("odd.json"), dir.file("odd.sqlite"));
    const std::string db = dir.file("odd.sqlite");
    CHECK(s.kernels == 5);  // late, early, negative (clamped), no device, args not object
    CHECK(s.warnings.at("negative durations (set to 0)") == 1);
    CHECK(s.warnings.at("GPU events without ts or dur (skipped)") == 1);
    CHECK(s.warnings.at("ill-typed field \"ts\" (event skipped)") == 1);
    CHECK(s.warnings.at("ill-typed field \"dur\" (event skipped)") == 1);
    CHECK(s.warnings.at("ill-typed field \"name\" (event skipped)") == 1);
    CHECK(s.warnings.at("GPU activity starting before its launch call (queue time set to 0)") == 1);
    CHECK(s.warnings.at("copies and sets without bytes (0 assumed)") == 1);
    CHECK(s.warnings.at("ranges without dur (end unknown)") == 1);
    CHECK(s.warnings.at("[memory] events without ts or Bytes (skipped)") == 1);
    CHECK(s.warnings.at("trace events that are not objects (skipped)") == 1);
    CHECK(s.warnings.at("ill-typed args (not an object)") == 1);
    CHECK(s.unknown.at("ph=B") == 1);
    // Out-of-order input comes out sorted.
    CHECK(query_rows(db, "SELECT name FROM kernel_view ORDER BY id") == "no device\nearly\nnegative\nlate\nargs not object\n");
    CHECK(query_int(db, "SELECT duration_ns FROM kernel_view WHERE name = 'negative'") == 0);
    CHECK(query_int(db, "SELECT count(*) FROM ranges WHERE end_ns IS NULL") == 1);
    // The warnings are kept with the trace.
    CHECK(query_int(db, "SELECT count(*) FROM run_notes WHERE key = 'import.warning'") >= 10);
}

TEST_CASE("export refuses what is not a tbdprof trace, without leaving output") {
    TempDir dir;
    write_text(dir.file("x.sqlite"), "not sqlite at all, just text that is long enough to not be a header");
    CHECK_THROWS_AS(export_chrome_trace(dir.file("x.sqlite"), dir.file("x.json")), InteropError);
    CHECK(!std::filesystem::exists(dir.file("x.json")));
    CHECK_THROWS_AS(export_chrome_trace(dir.file("missing.sqlite"), dir.file("y.json")), InteropError);
    CHECK(!std::filesystem::exists(dir.file("y.json")));
}
