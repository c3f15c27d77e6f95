#include "trace_test_support.h"

#include <tbdprof/trace/version.h>

#include <filesystem>
#include <fstream>
#include <string_view>

using namespace tbdprof;
using namespace tbdprof::test;

namespace {

constexpr std::string_view kGemmMangled = "_Z11gemm_kernelPKfS0_Pfiii";
constexpr uint64_t kStart = 1'000'000;  // collector start (CLOCK_MONOTONIC ns)

// A process that allocates two buffers, copies in, sets, launches two kernels (one with a device
// record, one without) and frees one buffer.
RawFileWriter small_run(uint32_t pid = 4242) {
    RawFileWriter w(pid, kStart);
    w.process_info(std::string_view("./train\0--steps\0003", 17), "/bin/train", "node1");
    w.thread(pid, "main", kStart + 10);
    w.device(0, "Simulated H100", true);
    w.alloc(pid, kStart + 100, 0x7000'0000, 4096);
    w.alloc(pid, kStart + 200, 0x7000'1000, 1 << 20);
    const uint64_t copy = w.copy(pid, kStart + 300, raw::CopyKind::HostToDevice, 0x7000'0000, 0x5555'0000, 4096);
    w.device_copy(copy, kStart + 350, kStart + 450, raw::CopyKind::HostToDevice, 4096);
    const uint64_t set = w.set(pid, kStart + 500, 0x7000'1000, 1 << 20, 0);
    w.device_set(set, kStart + 550, kStart + 600, 1 << 20);
    const uint64_t k1 = w.launch(pid, kStart + 700, kGemmMangled, {{0x7000'0000, 0, 0, true}, {0x7000'1010, 2}}, 64, 256);
    w.device_kernel(k1, kStart + 800, kStart + 5800, kGemmMangled);
    w.launch(pid, kStart + 900, "relu_kernel", {}, 8, 128);  // extern "C" name, never reached the device
    w.free(pid, kStart + 6000, 0x7000'0000);
    return w;
}

}  // namespace

TEST_CASE("builder: host launches join CUPTI records; device times win, host time is kept") {
    TempDir dir;
    small_run().save(dir.path());
    const auto result = build(dir);
    CHECK(result.kernels == 2);
    CHECK(result.copies == 1);
    CHECK(result.sets == 1);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    // Times are relative to the collector start.
    CHECK(query_int(db, "SELECT start_ns FROM kernel_view WHERE mangled = 'relu_kernel'") == 900);
    CHECK(query_int(db, "SELECT start_ns FROM kernel_view WHERE name LIKE 'gemm_kernel%'") == 800);
    CHECK(query_int(db, "SELECT end_ns FROM kernel_view WHERE name LIKE 'gemm_kernel%'") == 5800);
    CHECK(query_int(db, "SELECT launch_ns FROM kernel_view WHERE name LIKE 'gemm_kernel%'") == 700);
    CHECK(query_int(db, "SELECT grid_x * 1000 + grid_y * 100 + grid_z FROM kernel_view WHERE id = 1") == 64 * 1000 + 101);
    CHECK(query_int(db, "SELECT block_x FROM kernel_view WHERE id = 1") == 256);
    CHECK(query_is_null(db, "SELECT duration_ns FROM kernels WHERE id = 2"));
    CHECK(query_int(db, "SELECT host_timed_kernels FROM run") == 1);
    CHECK(query_text(db, "SELECT clock_source FROM run") == "mixed");
    CHECK(query_int(db, "SELECT start_ns FROM copies") == 350);
    CHECK(query_int(db, "SELECT duration_ns FROM copies") == 100);
    CHECK(query_text(db, "SELECT kind FROM copies") == "htod");
    CHECK(query_int(db, "SELECT bytes FROM sets") == (1 << 20));
    CHECK(query_int(db, "SELECT duration_ns FROM sets") == 50);
}

TEST_CASE("builder: kernel names are demangled, the mangled name is kept") {
    TempDir dir;
    small_run().save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_text(db, "SELECT name FROM kernel_view WHERE id = 1") ==
          "gemm_kernel(float const*, float const*, float*, int, int, int)");
    CHECK(query_text(db, "SELECT mangled FROM kernel_view WHERE id = 1") == kGemmMangled);
    CHECK(query_text(db, "SELECT name FROM kernel_view WHERE id = 2") == "relu_kernel");
    CHECK(query_int(db, "SELECT count(*) FROM functions") == 2);
}

TEST_CASE("builder: run, process, thread and device metadata") {
    TempDir dir;
    small_run().save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_text(db, "SELECT command_line FROM run") == "./train --steps 3");
    CHECK(query_text(db, "SELECT host FROM run") == "node1");
    CHECK(query_int(db, "SELECT simulated_device FROM run") == 1);
    CHECK(query_int(db, "SELECT start_monotonic_ns FROM run") == static_cast<int64_t>(kStart));
    CHECK(query_int(db, "SELECT duration_ns FROM run") == 6000);
    CHECK(query_int(db, "SELECT pid FROM processes") == 4242);
    CHECK(query_text(db, "SELECT name FROM threads WHERE tid = 4242") == "main");
    CHECK(query_text(db, "SELECT name FROM devices WHERE id = 0") == "Simulated H100");
    CHECK(query_int(db, "SELECT CAST(fp32_peak_flops / 1e9 AS INTEGER) FROM devices") == 2 * 132 * 128 * 1980 / 1000);
    CHECK(query_text(db, "SELECT tool_version FROM run") == std::string(trace::kProductVersion));
}

TEST_CASE("builder: memory_allocations has one row per allocation, free_ns NULL when never freed") {
    TempDir dir;
    small_run().save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT count(*) FROM memory_allocations") == 2);
    CHECK(query_int(db, "SELECT free_ns FROM memory_allocations WHERE address = 0x70000000") == 6000);
    CHECK(query_is_null(db, "SELECT free_ns FROM memory_allocations WHERE address = 0x70001000"));
    CHECK(query_is_null(db, "SELECT category FROM memory_allocations WHERE id = 1"));
    CHECK(query_text(db, "SELECT kind FROM memory_allocations WHERE id = 1") == "device");
    CHECK(query_int(db, "SELECT alloc_ns FROM memory_allocations WHERE id = 2") == 200);
}

TEST_CASE("builder: a crashed process's truncated file still builds, and the trace says so") {
    TempDir dir;
    RawFileWriter w = small_run();
    w.alloc(4242, kStart + 7000, 0x7100'0000, 64);
    w.bytes().resize(w.bytes().size() - 20);
    w.save(dir.path());
    const auto result = build(dir);
    REQUIRE_FALSE(result.warnings.empty());
    CHECK(result.warnings.front().find("ends mid-record") != std::string::npos);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT truncated_files FROM run") == 1);
    CHECK(query_int(db, "SELECT truncated FROM processes") == 1);
    CHECK(query_int(db, "SELECT count(*) FROM allocations") == 2);  // the cut one is gone
    CHECK(query_int(db, "SELECT count(*) FROM run_notes WHERE value LIKE '%mid-record%'") == 1);
}

TEST_CASE("builder: a corrupt file and a foreign file do not stop the build") {
    TempDir dir;
    RawFileWriter good = small_run(1);
    good.save(dir.path());
    RawFileWriter bad = small_run(2);
    raw::RawRecordHeader broken{raw::RecordKind::Alloc, 4, 2};
    std::memcpy(bad.bytes().data() + sizeof(raw::RawFileHeader), &broken, sizeof broken);
    bad.save(dir.path());
    {
        std::ofstream(dir.file("raw-3.tbdraw")) << "garbage garbage garbage garbage garbage garbage";
    }
    const auto result = build(dir);
    CHECK(result.kernels == 2);
    CHECK(result.warnings.size() >= 2);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT count(*) FROM processes") == 2);
    CHECK(query_int(db, "SELECT truncated_files FROM run") == 1);
}

TEST_CASE("builder: several processes share one timeline; kernel ids follow start time") {
    TempDir dir;
    RawFileWriter parent(10, kStart);
    const uint64_t a = parent.launch(10, kStart + 100, "k_parent");
    parent.device_kernel(a, kStart + 5000, kStart + 6000, "k_parent");
    parent.save(dir.path());
    RawFileWriter child(11, kStart + 1000, 10);
    const uint64_t b = child.launch(11, kStart + 1100, "k_child");
    child.device_kernel(b, kStart + 2000, kStart + 3000, "k_child");
    child.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_text(db, "SELECT name FROM kernel_view WHERE id = 1") == "k_child");
    CHECK(query_int(db, "SELECT start_ns FROM kernels WHERE id = 1") == 2000);
    CHECK(query_int(db, "SELECT p.pid FROM kernels k JOIN processes p ON p.id = k.process WHERE k.id = 2") == 10);
    CHECK(query_int(db, "SELECT parent_pid FROM processes WHERE pid = 11") == 10);
    CHECK(query_text(db, "SELECT clock_source FROM run") == "cupti");
}

TEST_CASE("builder: without any device record the run says its times are host times") {
    TempDir dir;
    RawFileWriter w(5, kStart);
    w.clock_source(raw::ClockSource::HostOnly);
    w.launch(5, kStart + 10, "k");
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_text(db, "SELECT clock_source FROM run") == "host");
    CHECK(query_int(db, "SELECT host_timed_kernels FROM run") == 1);
}

TEST_CASE("builder: stacks, frames and drops") {
    TempDir dir;
    RawFileWriter w(5, kStart);
    w.frame(0x401000, "main", "/bin/train");
    w.stack(77, {0x401000, 0x402000});
    w.alloc(5, kStart + 10, 0x9000, 256, raw::MemoryKind::Device, 77);
    w.dropped(3, raw::DropCause::RingFull);
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT depth FROM stacks s JOIN allocations a ON a.stack = s.id") == 2);
    CHECK(query_text(db, "SELECT st.text FROM allocations a JOIN stack_frames sf ON sf.stack = a.stack AND "
                         "sf.position = 0 JOIN frames f ON f.id = sf.frame JOIN strings st ON st.id = f.symbol") == "main");
    CHECK(query_is_null(db, "SELECT f.symbol FROM stack_frames sf JOIN frames f ON f.id = sf.frame WHERE position = 1"));
    CHECK(query_int(db, "SELECT count FROM dropped_events WHERE cause = 'ring_full'") == 3);
}

TEST_CASE("builder: an empty run directory gives a valid empty trace; no temporary file stays") {
    TempDir dir;
    const auto result = build(dir);
    CHECK(result.raw_files == 0);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT count(*) FROM kernels") == 0);
    CHECK_FALSE(std::filesystem::exists(dir.file("trace.sqlite.tmp")));
}

TEST_CASE("builder: an unwritable output fails with a message and leaves nothing behind") {
    TempDir dir;
    small_run().save(dir.path());
    trace::BuildOptions options;
    options.run_dir = dir.path();
    options.output = dir.file("no-such-dir/trace.sqlite");
    const auto result = trace::build_trace(options);
    CHECK_FALSE(result.ok);
    CHECK_FALSE(result.error.empty());
    CHECK_FALSE(std::filesystem::exists(dir.file("no-such-dir")));
}

TEST_CASE("builder: an existing output is replaced whole") {
    TempDir dir;
    small_run().save(dir.path());
    { std::ofstream(dir.file("trace.sqlite")) << "old contents"; }
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT count(*) FROM kernels") == 2);
}
