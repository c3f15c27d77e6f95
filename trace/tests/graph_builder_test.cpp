// CUDA graphs in the builder: captured launches and sets are templates, not work that ran; a replay's
// kernels (tied by CUPTI to the graph launch, not to the thread) become rows of the launching thread
// with the captured launches' edges, resolved against allocations live at replay time, while the
// thread's ordinary launches around the replays still pair with their own kernels in order.
#include "trace_test_support.h"

using namespace tbdprof;
using namespace tbdprof::test;

namespace {
constexpr uint64_t kStart = 1'000'000;
constexpr uint32_t kMain = 7;
constexpr uint64_t kStream = 0x5000, kGraph = 0x6100, kExec = 0x6200;
constexpr uint64_t kA = 0x7000'0000, kB = 0x7000'1000;
}  // namespace

TEST_CASE("builder: graph replays interleaved with ordinary launches on one thread") {
    TempDir dir;
    RawFileWriter w(kMain, kStart);
    w.thread(kMain, "main", kStart);
    w.device(0, "Simulated H100", true);
    w.alloc(kMain, kStart + 100, kA, 4096);
    w.alloc(kMain, kStart + 110, kB, 4096);
    w.launch(kMain, kStart + 200, "k_pre", {}, 1, 1, kStream);
    w.device_kernel_of_thread(kMain, 20, kStart + 1000, kStart + 1100, "k_pre");

    w.graph_capture(kMain, kStart + 300, raw::CapturePhase::Begin, kStream);
    w.launch(kMain, kStart + 310, "k_x", {{kA, 0}}, 4, 64);
    w.set(kMain, kStart + 320, kB, 4096, 9);
    w.launch(kMain, kStart + 330, "k_y", {{kA, 0}, {kB + 16, 1}}, 8, 64);
    w.graph_capture(kMain, kStart + 400, raw::CapturePhase::End, kStream, kGraph);
    w.graph_instantiate(kMain, kStart + 410, kGraph, kExec);

    const uint64_t first = w.graph_launch(kMain, kStart + 500, kExec, kStream);
    w.device_kernel_of_graph(first, 30, kStart + 2000, kStart + 2100, "k_x");
    w.device_set_of_graph(first, 30, kStart + 2100, kStart + 2200, 4096);
    w.device_kernel_of_graph(first, 30, kStart + 2200, kStart + 2300, "k_y");
    w.launch(kMain, kStart + 600, "k_mid", {}, 1, 1, kStream);
    w.device_kernel_of_thread(kMain, 31, kStart + 2400, kStart + 2500, "k_mid");
    // The buffer behind kA is replaced between the replays: the second replay's edges go to the new one.
    w.free(kMain, kStart + 700, kA);
    w.alloc(kMain, kStart + 710, kA, 4096);
    const uint64_t second = w.graph_launch(kMain, kStart + 800, kExec, kStream);
    w.device_kernel_of_graph(second, 32, kStart + 3000, kStart + 3100, "k_x");
    w.device_set_of_graph(second, 32, kStart + 3100, kStart + 3200, 4096);
    w.device_kernel_of_graph(second, 32, kStart + 3200, kStart + 3300, "k_y");
    w.launch(kMain, kStart + 900, "k_post", {}, 1, 1, kStream);
    w.device_kernel_of_thread(kMain, 33, kStart + 3400, kStart + 3500, "k_post");
    w.process_end();  // a complete file (no warning expected)
    w.save(dir.path());

    const auto result = build(dir);
    REQUIRE(result.ok);
    CHECK(result.kernels == 7);  // 3 ordinary + 2 replays x 2; the captured launches are not kernels
    CHECK(result.sets == 2);     // the replays' sets; the captured one did not run
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT host_timed_kernels FROM run") == 0);
    CHECK(query_int(db, "SELECT count(*) FROM run_notes WHERE key = 'warning'") == 0);

    auto row = [&](int64_t start_ns) {
        return query_text(db,
                          "SELECT k.mangled || ' ' || k.launch_ns || ' ' || COALESCE(k.graph_launch, 0) || ' ' || "
                          "(SELECT tid FROM threads t WHERE t.id = k.thread) || ' ' || k.grid_x || ' ' || "
                          "(SELECT count(*) FROM kernel_allocations e WHERE e.kernel = k.id)"
                          " FROM kernel_view k WHERE k.start_ns = " +
                              std::to_string(start_ns));
    };
    CHECK(row(1000) == "k_pre 200 0 7 1 0");
    CHECK(row(2000) == "k_x 500 1 7 4 1");
    CHECK(row(2200) == "k_y 500 1 7 8 2");
    CHECK(row(2400) == "k_mid 600 0 7 1 0");
    CHECK(row(3000) == "k_x 800 2 7 4 1");
    CHECK(row(3200) == "k_y 800 2 7 8 2");
    CHECK(row(3400) == "k_post 900 0 7 1 0");

    CHECK(query_text(db,
                     "SELECT group_concat(launch_ns || ':' || kernels || ':' || graph_exec || ':' || graph, ' ') "
                     "FROM graph_launches") == "500:2:" + std::to_string(kExec) + ":" + std::to_string(kGraph) +
                                                   " 800:2:" + std::to_string(kExec) + ":" + std::to_string(kGraph));
    // Edges resolve at replay time: the first replay's k_x reads the first buffer at kA, the second's
    // the buffer allocated there later; k_y also points 16 bytes into kB.
    auto edge = [&](int64_t start_ns, int64_t param) {
        return query_text(db,
                          "SELECT a.alloc_ns || '+' || e.offset FROM kernel_allocations e JOIN kernels k ON "
                          "k.id = e.kernel JOIN allocations a ON a.id = e.allocation WHERE k.start_ns = " +
                              std::to_string(start_ns) + " AND e.param = " + std::to_string(param));
    };
    CHECK(edge(2000, 0) == "100+0");
    CHECK(edge(3000, 0) == "710+0");
    CHECK(edge(2200, 1) == "110+16");
    CHECK(edge(3200, 0) == "710+0");
    CHECK(query_text(db,
                     "SELECT group_concat(dst || ':' || value || ':' || (SELECT tid FROM threads t WHERE "
                     "t.id = s.thread), ' ') FROM sets s") ==
          std::to_string(kB) + ":9:7 " + std::to_string(kB) + ":9:7");
    CHECK(query_text(db,
                     "SELECT group_concat(key || '=' || value, ' ') FROM run_notes WHERE key IN "
                     "('graph_replays', 'captured_launches', 'captured_copies_and_sets')") ==
          "graph_replays=2 captured_launches=2 captured_copies_and_sets=1");
}

TEST_CASE("builder: a replay whose kernels differ from the captured launches keeps them, without edges") {
    TempDir dir;
    RawFileWriter w(kMain, kStart);
    w.thread(kMain, "main", kStart);
    w.device(0, "Simulated H100", true);
    w.alloc(kMain, kStart + 100, kA, 4096);
    w.graph_capture(kMain, kStart + 300, raw::CapturePhase::Begin, kStream);
    w.launch(kMain, kStart + 310, "k_x", {{kA, 0}});
    w.graph_capture(kMain, kStart + 400, raw::CapturePhase::End, kStream, kGraph);
    w.graph_instantiate(kMain, kStart + 410, kGraph, kExec);
    // A graph launched whose instantiation was not recorded, and one whose kernel has another name.
    const uint64_t unknown = w.graph_launch(kMain, kStart + 500, 0x9999, kStream);
    w.device_kernel_of_graph(unknown, 40, kStart + 1000, kStart + 1100, "k_x");
    const uint64_t other = w.graph_launch(kMain, kStart + 600, kExec, kStream);
    w.device_kernel_of_graph(other, 41, kStart + 2000, kStart + 2100, "k_other");
    w.save(dir.path());
    const auto result = build(dir);
    REQUIRE(result.ok);
    CHECK(result.kernels == 2);
    CHECK(result.edges == 0);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT count(*) FROM kernels WHERE graph_launch IS NOT NULL AND thread IS NOT NULL") == 2);
    CHECK(query_int(db, "SELECT count(*) FROM graph_launches WHERE graph IS NULL") == 1);
}
