#include "trace_test_support.h"

#include <tbdprof/version.h>

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
    CHECK(query_text(db, "SELECT tool_version FROM run") == std::string(kProductVersion));
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

TEST_CASE("builder: a process that ended without the collector's last flush is reported, one with it is not") {
    TempDir dir;
    RawFileWriter flushed = small_run(4242);
    flushed.process_end(raw::EndReason::QuickExit);  // _exit, intercepted: the tail was written
    flushed.save(dir.path());
    small_run(4343).save(dir.path());  // exit_group or SIGKILL: nothing after the last drain
    const auto result = build(dir);
    size_t said = 0;
    for (const std::string& warning : result.warnings) {
        if (warning.find("ended without tbdprof's last flush") == std::string::npos) continue;
        ++said;
        CHECK(warning.starts_with("process 4343 "));
    }
    CHECK(said == 1);
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

TEST_CASE("builder: kernels CUPTI tied to a thread pair with its launches in order, across losses on either side") {
    TempDir dir;
    constexpr uint32_t kMain = 7, kWorker = 8;
    RawFileWriter w(kMain, kStart);
    w.thread(kMain, "main", kStart);
    w.thread(kWorker, "worker", kStart);
    w.device(0, "Simulated H100", true);
    // Thread 7 launched a, b, a, c, d, e; the host record of the second `a` was lost (full ring) and
    // so was the device record of `d` (full CUPTI buffer). Thread 8 launched one `a`, whose CUPTI
    // correlation id is lower than all of thread 7's: pairing is per thread, not global.
    w.launch(kMain, kStart + 100, "k_a");
    w.launch(kWorker, kStart + 150, "k_a");
    w.launch(kMain, kStart + 200, "k_b");
    w.launch(kMain, kStart + 400, "k_c");
    w.launch(kMain, kStart + 500, "k_d");
    w.launch(kMain, kStart + 600, "k_e");
    w.device_kernel_of_thread(kMain, 20, kStart + 1000, kStart + 1100, "k_a");
    w.device_kernel_of_thread(kMain, 21, kStart + 2000, kStart + 2100, "k_b");
    w.device_kernel_of_thread(kMain, 22, kStart + 3000, kStart + 3100, "k_a");
    w.device_kernel_of_thread(kMain, 23, kStart + 4000, kStart + 4100, "k_c");
    w.device_kernel_of_thread(kMain, 25, kStart + 6000, kStart + 6100, "k_e");
    w.device_kernel_of_thread(kWorker, 19, kStart + 1500, kStart + 1600, "k_a");
    w.save(dir.path());
    const auto result = build(dir);
    CHECK(result.kernels == 7);  // 6 launches + the device record whose launch was lost
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    auto row = [&](int64_t start_ns) {
        return query_text(db, "SELECT k.mangled || ' ' || COALESCE(k.launch_ns, -1) || ' ' || COALESCE(k.duration_ns, -1)"
                              " || ' ' || COALESCE((SELECT tid FROM threads t WHERE t.id = k.thread), -1)"
                              " FROM kernel_view k WHERE k.start_ns = " + std::to_string(start_ns));
    };
    CHECK(row(1000) == "k_a 100 100 7");
    CHECK(row(1500) == "k_a 150 100 8");
    CHECK(row(2000) == "k_b 200 100 7");
    CHECK(row(3000) == "k_a -1 100 -1");  // its launch record was lost: an orphan device record
    CHECK(row(4000) == "k_c 400 100 7");
    CHECK(row(500) == "k_d 500 -1 7");  // its device record was lost: host time only
    CHECK(row(6000) == "k_e 600 100 7");
    CHECK(query_int(db, "SELECT host_timed_kernels FROM run") == 1);
}

TEST_CASE("builder: work whose CUPTI correlation record was lost is stored once, paired by order") {
    TempDir dir;
    constexpr uint32_t kMain = 7;
    RawFileWriter w(kMain, kStart);
    w.thread(kMain, "main", kStart);
    // A loop of f, g with a copy after each pair; the correlation records of some kernels and of one
    // copy were dropped, their device records kept. Without the pairing by order each such launch
    // became two kernels (a host-timed one and a device record nobody launched).
    uint64_t correlation = 100;
    for (uint64_t it = 0; it < 6; ++it) {
        const uint64_t t = kStart + it * 100'000;
        w.launch(kMain, t, "f");
        w.launch(kMain, t + 100, "g");
        const uint64_t copy = w.copy(kMain, t + 200, raw::CopyKind::DeviceToHost, 0x5555'0000, 0x7000'0000, 64 + it);
        w.device_kernel_of_thread(kMain, correlation++, t + 1000, t + 2000, "f");
        if (it % 2 == 1) w.lose_last_correlation();
        w.device_kernel_of_thread(kMain, correlation++, t + 3000, t + 4000, "g");
        if (it == 4) w.lose_last_correlation();
        w.device_copy(copy, t + 5000, t + 6000, raw::CopyKind::DeviceToHost, 64 + it);
        if (it == 2) w.lose_last_correlation();
    }
    w.save(dir.path());
    const auto result = build(dir);
    CHECK(result.kernels == 12);
    CHECK(result.copies == 6);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels WHERE thread IS NULL OR duration_ns IS NULL") == 0);
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernel_view WHERE start_ns - launch_ns NOT IN (1000, 2900)") == 0);
    CHECK(query_int(db, "SELECT COUNT(*) FROM copies WHERE duration_ns = 1000 AND thread IS NOT NULL") == 6);
    bool said = false;
    for (const std::string& warning : result.warnings) said = said || warning.starts_with("5 device records had lost");
    CHECK(said);
}

TEST_CASE("builder: a copy or set whose CUPTI id also came with the thread's tag joins the call that named it") {
    TempDir dir;
    constexpr uint32_t kMain = 7;
    RawFileWriter w(kMain, kStart);
    w.thread(kMain, "main", kStart);
    // Real CUPTI with its runtime and driver API records enabled: a cudaMemcpy/cudaMemset shares its id
    // between the runtime record (whose external id is the thread's tag, in force when the runtime
    // call began) and the driver record inside it (the sequence the driver-level hook pushed). The
    // runtime record ends last, so its correlation comes last. Seen on an H200 (docs/real-gpu.md): every
    // copy and set then became two rows, a host call without device time and a device record without
    // a host call.
    for (uint64_t it = 0; it < 4; ++it) {
        const uint64_t t = kStart + it * 100'000;
        const uint64_t copy = w.copy(kMain, t, raw::CopyKind::HostToDevice, 0x7000'0000, 0x5555'0000, 256);
        const uint64_t set = w.set(kMain, t + 100, 0x7000'1000, 128, 0);
        w.launch(kMain, t + 200, "f");
        w.device_copy(copy, t + 1000, t + 2000, raw::CopyKind::HostToDevice, 256);
        w.correlate_last_with_thread_too(kMain);
        w.device_set(set, t + 3000, t + 3500, 128);
        w.correlate_last_with_thread_too(kMain);
        w.device_kernel_of_thread(kMain, 900 + it, t + 4000, t + 5000, "f");
    }
    w.save(dir.path());
    const auto result = build(dir);
    CHECK(result.kernels == 4);
    CHECK(result.copies == 4);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT COUNT(*) FROM copies WHERE duration_ns = 1000 AND thread IS NOT NULL") == 4);
    CHECK(query_int(db, "SELECT COUNT(*) FROM sets") == 4);
    CHECK(query_int(db, "SELECT COUNT(*) FROM sets WHERE duration_ns = 500 AND thread IS NOT NULL") == 4);
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels WHERE thread IS NULL OR duration_ns IS NULL") == 0);
    for (const std::string& warning : result.warnings)
        CHECK_MESSAGE(warning.find("device records") == std::string::npos, warning);
}

TEST_CASE("builder: after lost launch records, a loop's repeated kernel pairs with its own iteration, not an earlier one") {
    TempDir dir;
    constexpr uint32_t kMain = 7;
    RawFileWriter w(kMain, kStart);
    w.thread(kMain, "main", kStart);
    // Iterations launch f then g, 1 ms apart; the host records of iteration 1 were lost. Matching by
    // name alone would give iteration 2's launch of f the kernel of iteration 1.
    for (uint64_t it = 0; it < 3; ++it) {
        const uint64_t t = kStart + it * 1'000'000;
        if (it != 1) {
            w.launch(kMain, t, "f");
            w.launch(kMain, t + 100, "g");
        }
        w.device_kernel_of_thread(kMain, 10 + 2 * it, t + 50'000, t + 60'000, "f");
        w.device_kernel_of_thread(kMain, 11 + 2 * it, t + 70'000, t + 80'000, "g");
    }
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels") == 6);
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels WHERE thread IS NULL") == 2);  // iteration 1's
    CHECK(query_int(db, "SELECT launch_ns FROM kernel_view WHERE start_ns = 2050000") == 2'000'000);
    CHECK(query_int(db, "SELECT launch_ns FROM kernel_view WHERE start_ns = 2070000") == 2'000'100);
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernel_view WHERE start_ns < launch_ns") == 0);
}

TEST_CASE("builder: should CUPTI name kernels differently from the launch hook, a thread still pairs by order and time") {
    TempDir dir;
    constexpr uint32_t kMain = 7;
    RawFileWriter w(kMain, kStart);
    w.thread(kMain, "main", kStart);
    for (uint64_t i = 0; i < 4; ++i) {
        w.launch(kMain, kStart + i * 1000, "_Z6kernelPf");
        w.device_kernel_of_thread(kMain, 100 + i, kStart + i * 1000 + 500, kStart + i * 1000 + 600, "kernel(float*)");
    }
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels") == 4);
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels WHERE thread IS NOT NULL AND duration_ns = 100") == 4);
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernel_view WHERE start_ns - launch_ns = 500") == 4);
}

TEST_CASE("builder: a library call's extra operands join their call by thread and begin time") {
    RawFileWriter w = small_run();
    raw::RawLibraryCall call{};
    call.begin_host_ns = kStart + 1000;
    call.end_host_ns = kStart + 1100;
    call.name_string = w.string("cudnnRNNForward");
    call.op = raw::LibraryOp::RnnForward;
    call.a = 0x7000'0000;
    const auto operand = [&](uint32_t tid, uint64_t begin_ns, uint64_t address, raw::LibraryOperandRole role,
                             raw::OperandAccess access) {
        raw::RawLibraryOperand o{};
        o.call_begin_host_ns = begin_ns;
        o.address = address;
        o.bytes = 256;
        o.role = role;
        o.access = access;
        w.record(raw::RecordKind::LibraryOperand, tid, o);
    };
    // Written before the call, as the collector does; one on another thread and one of a call that
    // was never written (a failed call) join nothing.
    operand(4242, call.begin_host_ns, 0x7000'1000, raw::LibraryOperandRole::Reserve, raw::OperandAccess::Write);
    operand(4242, call.begin_host_ns, 0x7000'0100, raw::LibraryOperandRole::RunningMean, raw::OperandAccess::ReadWrite);
    operand(7, call.begin_host_ns, 0x7000'1000, raw::LibraryOperandRole::Reserve, raw::OperandAccess::Read);
    operand(4242, call.begin_host_ns + 1, 0x7000'1000, raw::LibraryOperandRole::Reserve, raw::OperandAccess::Read);
    w.record(raw::RecordKind::LibraryCall, 4242, call);
    TempDir dir;
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT count(*) FROM library_call_operands") == 2);
    CHECK(query_text(db,
                     "SELECT role || ' ' || access || ' ' || bytes FROM library_call_operands "
                     "WHERE address = 0x70001000") == "reserve write 256");
    CHECK(query_text(db, "SELECT role || ' ' || access FROM library_call_operands WHERE address = 0x70000100") ==
          "running_mean read_write");
    // Resolved to the allocation each points into at the call (the 1 MiB one, and the 4 KiB one).
    CHECK(query_int(db,
                    "SELECT a.bytes FROM library_call_operands o JOIN allocations a ON a.id = o.allocation "
                    "WHERE o.address = 0x70001000") == 1 << 20);
    CHECK(query_int(db,
                    "SELECT a.bytes FROM library_call_operands o JOIN allocations a ON a.id = o.allocation "
                    "WHERE o.address = 0x70000100") == 4096);
    CHECK(query_int(db,
                    "SELECT count(*) FROM library_call_operands o JOIN library_calls c ON c.id = o.library_call "
                    "WHERE c.name = 'cudnnRNNForward'") == 2);
}
