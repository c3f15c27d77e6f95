// Kernel -> allocation edges: pointer arguments resolved against allocation lifetimes.
#include "trace_test_support.h"

using namespace tbdprof;
using namespace tbdprof::test;

namespace {
constexpr uint64_t kStart = 50'000;
constexpr uint64_t kA = 0x7f00'0000'0000;
}  // namespace

TEST_CASE("edges: each pointer argument maps to the allocation that contains it, with its offset") {
    TempDir dir;
    RawFileWriter w(9, kStart);
    w.alloc(9, kStart + 1, kA, 1024);
    w.alloc(9, kStart + 2, kA + 4096, 512);
    w.launch(9, kStart + 10, "k", {{kA, 0, 0, true}, {kA + 4096 + 100, 1}, {kA + 1024, 2} /* one past the end */});
    w.save(dir.path());
    const auto result = build(dir);
    CHECK(result.edges == 2);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT allocation FROM kernel_allocations WHERE param = 0") == 1);
    CHECK(query_int(db, "SELECT read_only FROM kernel_allocations WHERE param = 0") == 1);
    CHECK(query_int(db, "SELECT allocation FROM kernel_allocations WHERE param = 1") == 2);
    CHECK(query_int(db, "SELECT offset FROM kernel_allocations WHERE param = 1") == 100);
    CHECK(query_int(db, "SELECT read_only FROM kernel_allocations WHERE param = 1") == 0);
    CHECK(query_int(db, "SELECT count(*) FROM kernel_allocations WHERE param = 2") == 0);
}

TEST_CASE("edges: a reused address maps to the allocation live at launch time") {
    TempDir dir;
    RawFileWriter w(9, kStart);
    w.alloc(9, kStart + 1, kA, 1024);
    w.launch(9, kStart + 2, "first", {{kA + 8, 0}});
    w.free(9, kStart + 3, kA);
    w.launch(9, kStart + 4, "between", {{kA + 8, 0}});  // nothing live there
    w.alloc(9, kStart + 5, kA, 2048);
    w.launch(9, kStart + 6, "second", {{kA + 1500, 0}});
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    const std::string edge_of = "SELECT e.allocation FROM kernel_allocations e JOIN kernel_view k ON k.id = e.kernel "
                                "WHERE k.name = ";
    CHECK(query_int(db, edge_of + "'first'") == 1);
    CHECK(query_int(db, edge_of + "'second'") == 2);
    CHECK(query_int(db, "SELECT count(*) FROM kernel_allocations e JOIN kernel_view k ON k.id = e.kernel "
                        "WHERE k.name = 'between'") == 0);
    CHECK(query_int(db, "SELECT free_ns FROM allocations WHERE id = 1") == 3);
}

TEST_CASE("edges: same timestamp, file order decides (alloc, launch, free in one nanosecond)") {
    TempDir dir;
    RawFileWriter w(9, kStart);
    w.alloc(9, kStart + 7, kA, 64);
    w.launch(9, kStart + 7, "k", {{kA, 0}});
    w.free(9, kStart + 7, kA);
    w.save(dir.path());
    const auto result = build(dir);
    CHECK(result.edges == 1);
}

TEST_CASE("edges: pointers are resolved within their own process only") {
    TempDir dir;
    RawFileWriter a(1, kStart);
    a.alloc(1, kStart + 1, kA, 64);
    a.save(dir.path());
    RawFileWriter b(2, kStart);
    b.launch(2, kStart + 5, "k", {{kA, 0}});
    b.save(dir.path());
    const auto result = build(dir);
    CHECK(result.edges == 0);
}

TEST_CASE("edges: frees without an allocation are counted, cudaFree(0) is not") {
    TempDir dir;
    RawFileWriter w(9, kStart);
    w.free(9, kStart + 1, 0);
    w.free(9, kStart + 2, kA);
    w.process_end();  // a complete file: its only warning is the frees'
    w.save(dir.path());
    const auto result = build(dir);
    REQUIRE(result.warnings.size() == 1);
    CHECK(result.warnings[0].find("1 frees") == 0);
}

TEST_CASE("operand edges: copies and sets resolve at their host enqueue time, not their device time") {
    TempDir dir;
    RawFileWriter w(9, kStart);
    w.alloc(9, kStart + 1, kA, 1024);
    const uint64_t copy = w.copy(9, kStart + 2, raw::CopyKind::HostToDevice, kA + 16, 0x1000, 64);
    w.free(9, kStart + 3, kA);  // freed before the device ran the copy
    w.device_copy(copy, kStart + 20, kStart + 30, raw::CopyKind::HostToDevice, 64);
    w.set(9, kStart + 4, kA + 16, 64, 0);  // enqueued after the free: no edge
    w.alloc(9, kStart + 5, kA, 2048);
    w.set(9, kStart + 5, kA + 1500, 8, 0);  // same nanosecond as the allocation
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT dst_allocation FROM copies") == 1);
    CHECK(query_int(db, "SELECT count(*) FROM copies WHERE src_allocation IS NOT NULL") == 0);
    CHECK(query_int(db, "SELECT count(*) FROM sets WHERE dst_allocation IS NOT NULL") == 1);
    CHECK(query_int(db, "SELECT dst_allocation FROM sets WHERE dst = " + std::to_string(kA + 1500)) == 2);
}
