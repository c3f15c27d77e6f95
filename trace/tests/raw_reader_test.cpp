#include "raw_file_writer.h"

#include <tbdprof/trace/raw_reader.h>

#include <doctest/doctest.h>

#include <fstream>

using namespace tbdprof;
using test::RawFileWriter;
using test::TempDir;

namespace {

std::vector<raw::RecordKind> kinds_in(const std::string& path, trace::RawFileEnd& end) {
    trace::RawFile file;
    std::string error;
    REQUIRE_MESSAGE(file.open(path, error), error);
    std::vector<raw::RecordKind> kinds;
    auto cursor = file.records();
    trace::RawRecordView record{};
    while (cursor.next(record)) kinds.push_back(record.kind);
    end = cursor.end();
    return kinds;
}

}  // namespace

TEST_CASE("raw reader: a complete file reads every record in order") {
    TempDir dir;
    RawFileWriter w(100, 1000);
    w.string("hello");
    w.alloc(100, 2000, 0x1000, 64);
    w.free(100, 3000, 0x1000);
    trace::RawFileEnd end{};
    const auto kinds = kinds_in(w.save(dir.path()), end);
    CHECK(end == trace::RawFileEnd::Clean);
    REQUIRE(kinds.size() == 3);
    CHECK(kinds[0] == raw::RecordKind::String);
    CHECK(kinds[1] == raw::RecordKind::Alloc);
    CHECK(kinds[2] == raw::RecordKind::Free);
}

TEST_CASE("raw reader: a file cut mid-record reads up to the last whole record") {
    TempDir dir;
    RawFileWriter w(100, 1000);
    w.alloc(100, 2000, 0x1000, 64);
    w.alloc(100, 2100, 0x2000, 64);
    w.bytes().resize(w.bytes().size() - 12);  // the crash cut the second record
    trace::RawFileEnd end{};
    const auto kinds = kinds_in(w.save(dir.path()), end);
    CHECK(end == trace::RawFileEnd::Truncated);
    CHECK(kinds.size() == 1);
}

TEST_CASE("raw reader: a record size that cannot be framed stops reading as corrupt") {
    TempDir dir;
    RawFileWriter w(100, 1000);
    w.alloc(100, 2000, 0x1000, 64);
    const size_t second = w.bytes().size();
    w.alloc(100, 2100, 0x2000, 64);
    w.alloc(100, 2200, 0x3000, 64);
    raw::RawRecordHeader bad{raw::RecordKind::Alloc, 13, 100};  // not a multiple of 8
    std::memcpy(w.bytes().data() + second, &bad, sizeof bad);
    trace::RawFileEnd end{};
    const auto kinds = kinds_in(w.save(dir.path()), end);
    CHECK(end == trace::RawFileEnd::Corrupt);
    CHECK(kinds.size() == 1);
}

TEST_CASE("raw reader: zero-filled tail (file extended, never written) counts as truncated") {
    TempDir dir;
    RawFileWriter w(100, 1000);
    w.alloc(100, 2000, 0x1000, 64);
    w.bytes().resize(w.bytes().size() + 4096);
    trace::RawFileEnd end{};
    const auto kinds = kinds_in(w.save(dir.path()), end);
    CHECK(end == trace::RawFileEnd::Truncated);
    CHECK(kinds.size() == 1);
}

TEST_CASE("raw reader: bad magic, other version and short files are refused with a reason") {
    TempDir dir;
    std::string error;
    trace::RawFile file;
    {
        std::ofstream(dir.file("raw-1.tbdraw")) << "not a raw file at all, but long enough to hold a header";
        CHECK_FALSE(file.open(dir.file("raw-1.tbdraw"), error));
        CHECK(error.find("bad magic") != std::string::npos);
    }
    {
        RawFileWriter w(2, 0);
        uint32_t version = raw::kVersion + 1;
        std::memcpy(w.bytes().data() + 8, &version, 4);
        CHECK_FALSE(file.open(w.save(dir.path()), error));
        CHECK(error.find("raw format version") != std::string::npos);
    }
    {
        std::ofstream(dir.file("raw-3.tbdraw")) << "TBD";
        CHECK_FALSE(file.open(dir.file("raw-3.tbdraw"), error));
        CHECK(error.find("shorter than") != std::string::npos);
    }
    CHECK_FALSE(file.open(dir.file("missing.tbdraw"), error));
}

TEST_CASE("raw reader: records shorter than the struct read missing fields as zero") {
    TempDir dir;
    RawFileWriter w(100, 1000);
    // An older collector's alloc record: only the header, ts, address and bytes.
    struct OldAlloc {
        raw::RawRecordHeader header;
        uint64_t host_ns, address, bytes;
    } old{{}, 5, 0x1000, 64};
    w.record(raw::RecordKind::Alloc, 100, old);
    trace::RawFile file;
    std::string error;
    REQUIRE(file.open(w.save(dir.path()), error));
    auto cursor = file.records();
    trace::RawRecordView record{};
    REQUIRE(cursor.next(record));
    const auto alloc = record.as<raw::RawAlloc>();
    CHECK(alloc.address == 0x1000);
    CHECK(alloc.bytes == 64);
    CHECK(alloc.stack_id == 0);
    CHECK(alloc.device == 0);
}
