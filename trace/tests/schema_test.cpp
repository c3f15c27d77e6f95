// The schema itself: version, tables the issue asks for, and the on-disk cost of a kernel.
#include "trace_test_support.h"

#include <tbdprof/trace/schema.h>

#include <string>

using namespace tbdprof;
using namespace tbdprof::test;

TEST_CASE("schema: user_version is the format version and the listed tables and views exist") {
    TempDir dir;
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(trace::trace_format_version(db) == trace::kTraceFormatVersion);
    CHECK(trace::kTraceFormatVersion >= 1);
    for (const char* table : {"run", "run_notes", "strings", "processes", "threads", "devices", "streams", "functions",
                              "kernels", "copies", "sets", "api_calls", "stacks", "frames", "stack_frames",
                              "allocations", "allocation_categories", "kernel_allocations", "library_calls", "ranges",
                              "cpu_samples", "dropped_events", "iterations", "phases", "memory_allocations", "kernel_view"}) {
        INFO(table);
        CHECK(query_int(db, std::string("SELECT count(*) FROM sqlite_schema WHERE name = '") + table + "'") == 1);
    }
    // The view's columns, in the order the issue gives them.
    trace::Statement columns(db, "SELECT group_concat(name, ',') FROM pragma_table_info('memory_allocations')");
    REQUIRE(columns.step());
    CHECK(columns.column_text(0) == "id,process,device,address,bytes,alloc_ns,free_ns,kind,category");
}

TEST_CASE("schema: a kernel costs at most 48 bytes on disk (hour-long run, realistic values)") {
    // 100k kernels over an hour (6-byte timestamps), 20 distinct names, 1-D grids, a few
    // microseconds each, launched ~20 us ahead, every one with a device record and a correlation id.
    TempDir dir;
    RawFileWriter w(77, 1'000'000'000);
    const char* names[20] = {"_Z4gemmPKfS0_Pf", "_Z4reluPf", "_Z7softmaxPKfPf", "_Z4biasPfPKf", "_Z4sgdPfPKff"};
    for (int i = 5; i < 20; ++i) names[i] = names[i % 5];
    constexpr int kKernels = 100'000;
    constexpr uint64_t kSpacing = 36'000'000;  // 100k kernels * 36 ms = 1 hour
    for (int i = 0; i < kKernels; ++i) {
        const uint64_t launch = 1'000'000'000 + static_cast<uint64_t>(i) * kSpacing;
        const uint64_t seq = w.launch(77, launch, names[i % 20], {}, 128 + static_cast<uint32_t>(i % 7) * 64, 256,
                                      0x5600'0000'1000);
        w.device_kernel(seq, launch + 20'000, launch + 20'000 + 3'000 + static_cast<uint64_t>(i % 500) * 100,
                        names[i % 20]);
    }
    w.save(dir.path());
    const auto result = build(dir);
    REQUIRE(result.kernels == kKernels);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    const int64_t bytes = query_int(db, "SELECT sum(pgsize) FROM dbstat WHERE name = 'kernels'");
    const double per_kernel = static_cast<double>(bytes) / kKernels;
    MESSAGE("kernels table: " << per_kernel << " bytes per kernel; build: "
                              << static_cast<double>(result.events) / result.seconds / 1e6 << " M raw events/s");
    CHECK(per_kernel <= 48.0);
}
