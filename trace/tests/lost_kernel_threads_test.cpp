// Kernels whose CUPTI correlation record was lost, with several threads launching: each must reach a
// launch of its own thread (trace/lost_kernel_threads.cpp).
#include "trace_test_support.h"

namespace tbdprof::test {
namespace {

constexpr uint64_t kStart = 1'000'000;
constexpr uint32_t kA = 7, kB = 8;

TEST_CASE("lost kernels: a thread held inside its launch gets its id among another thread's, and keeps its kernel") {
    TempDir dir;
    RawFileWriter w(kA, kStart);
    w.thread(kA, "a", kStart);
    w.thread(kB, "b", kStart);
    // B launches at +500 and is held inside the call: CUPTI gives it id 13 while A launches 10..16
    // (one every 1 000 ns). Id 13's correlation record is lost, so its neighbours (11, 12 | 14, 15)
    // are all A's: the rule "the thread of its neighbours" gave it to A, leaving B's launch
    // host-timed and one of A's kernels without a launch.
    w.launch(kB, kStart + 500, "f");
    uint64_t id = 10;
    for (uint64_t i = 0; i < 6; ++i) {
        const uint64_t launch_ns = kStart + 1000 * (i + 1);
        w.launch(kA, launch_ns, "f");
        if (id == 13) {
            w.device_kernel_of_thread(kB, id++, kStart + 3600, kStart + 3700, "f");
            w.lose_last_correlation();
        }
        w.device_kernel_of_thread(kA, id++, launch_ns + 500, launch_ns + 600, "f");
    }
    w.launch(kB, kStart + 9000, "f");
    w.device_kernel_of_thread(kB, id, kStart + 9500, kStart + 9600, "f");
    w.save(dir.path());
    const auto result = build(dir);
    CHECK(result.kernels == 8);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels WHERE thread IS NULL OR duration_ns IS NULL") == 0);
    // B's first launch, 500 ns after the start, holds the lost kernel.
    const std::string of_b =
        "SELECT k.correlation FROM kernel_view k JOIN threads t ON t.id = k.thread "
        "WHERE t.tid = 8 AND k.launch_ns = 500";
    CHECK(query_int(db, of_b) == 13);
    CHECK(query_int(db,
                    "SELECT COUNT(*) FROM kernel_view k JOIN threads t ON t.id = k.thread "
                    "WHERE t.tid = 7 AND k.start_ns - k.launch_ns <> 500") == 0);
}

TEST_CASE("lost kernels: a kernel whose launch was not seen is left out of the walk, the others still placed") {
    TempDir dir;
    RawFileWriter w(kA, kStart);
    w.thread(kA, "a", kStart);
    w.thread(kB, "b", kStart);
    // A and B alternate; every third correlation record is lost; one kernel ("g", id 30) has no
    // launch at all (launched by a path the hooks do not see).
    uint64_t id = 20;
    for (uint64_t i = 0; i < 6; ++i) {
        const uint64_t launch_ns = kStart + 1000 * (i + 1);
        const uint32_t tid = i % 2 == 0 ? kA : kB;
        w.launch(tid, launch_ns, "f");
        w.device_kernel_of_thread(tid, id, launch_ns + 300, launch_ns + 400, "f");
        if (id++ % 3 == 0) w.lose_last_correlation();
    }
    w.device_kernel_of_thread(kA, 30, kStart + 8000, kStart + 8100, "g");
    w.lose_last_correlation();
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels") == 7);
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels WHERE duration_ns IS NULL") == 0);
    CHECK(query_int(
              db, "SELECT COUNT(*) FROM kernel_view WHERE launch_ns IS NOT NULL AND start_ns - launch_ns <> 300") == 0);
    CHECK(query_int(db, "SELECT COUNT(*) FROM kernels WHERE thread IS NULL") == 1);  // g
}

}  // namespace
}  // namespace tbdprof::test
