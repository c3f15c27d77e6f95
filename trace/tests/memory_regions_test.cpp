// The builder's memory_heaps and memory_regions from hand-made RawMemRegion records (NVTX's memory
// extension): placement in allocations, records of different threads interleaved out of time order,
// a region registered again over a live one, calls naming no live region.
#include "trace_test_support.h"

using namespace tbdprof;
using namespace tbdprof::test;

namespace {

constexpr uint64_t kStart = 1'000'000;
constexpr uint64_t kArena = 0x7000'0000;

void mem(RawFileWriter& w, uint32_t tid, uint64_t ts, raw::MemRegionOp op, uint64_t heap, uint64_t address,
         uint64_t bytes, uint64_t name = 0) {
    raw::RawMemRegion r{};
    r.host_ns = kStart + ts;
    r.heap = heap;
    r.address = address;
    r.bytes = bytes;
    r.name_string = name;
    r.usage = 1;
    r.op = op;
    w.record(raw::RecordKind::MemRegion, tid, r);
}

}  // namespace

TEST_CASE("builder: memory regions in time order, placed in their allocation") {
    TempDir dir;
    RawFileWriter w(77, kStart);
    w.process_info(std::string_view("./p\0", 4), "/bin/p", "node");
    w.thread(77, "main", kStart);
    w.thread(78, "worker", kStart);
    w.device(0, "Simulated H100", true);
    w.alloc(77, kStart + 10, kArena, 1 << 20);
    using Op = raw::MemRegionOp;
    mem(w, 77, 20, Op::HeapRegister, 1, kArena, 1 << 20, w.string("arena"));
    mem(w, 77, 30, Op::RegionRegister, 1, kArena, 4096);
    mem(w, 77, 31, Op::RegionName, 0, kArena, 0, w.string("weights:w"));
    // The worker's records come later in the file but happened earlier than the main thread's next.
    mem(w, 77, 60, Op::RegionUnregister, 0, kArena + 8192, 0);
    mem(w, 78, 40, Op::RegionRegister, 1, kArena + 8192, 512);
    mem(w, 78, 50, Op::RegionRegister, 1, kArena + 8192, 256);               // again while live: the first is replaced
    mem(w, 77, 70, Op::RegionName, 0, kArena + 99, 0, w.string("nowhere"));  // no region starts there
    mem(w, 77, 71, Op::RegionResize, 0, kArena + 99, 64);
    mem(w, 77, 72, Op::RegionUnregister, 0, kArena + 99, 0);
    mem(w, 77, 80, Op::RegionRegister, 0, 0x1234'0000, 64);  // process-wide heap, not in an allocation
    w.free(77, kStart + 100, kArena);
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT count(*) FROM memory_heaps") == 1);
    CHECK(query_text(db, "SELECT name || ' ' || usage FROM memory_heaps") == "arena sub_allocator");
    CHECK(query_int(db, "SELECT allocation FROM memory_heaps") == query_int(db, "SELECT id FROM allocations"));
    CHECK(query_int(db, "SELECT device FROM memory_heaps") == 0);
    CHECK(query_is_null(db, "SELECT unregister_ns FROM memory_heaps"));
    CHECK(query_int(db, "SELECT count(*) FROM memory_regions") == 4);
    // Ids in time order: w (30), the worker's two (40, 50), the process-wide one (80).
    CHECK(query_text(
              db, "SELECT group_concat(register_ns, ',') FROM (SELECT register_ns FROM memory_regions ORDER BY id)") ==
          "30,40,50,80");
    CHECK(query_text(db, "SELECT name FROM memory_regions WHERE id = 1") == "weights:w");
    CHECK(query_is_null(db, "SELECT unregister_ns FROM memory_regions WHERE id = 1"));
    CHECK(query_text(db, "SELECT end_reason FROM memory_regions WHERE id = 2") == "replaced");
    CHECK(query_int(db, "SELECT unregister_ns FROM memory_regions WHERE id = 2") == 50);
    CHECK(query_text(db, "SELECT end_reason FROM memory_regions WHERE id = 3") == "unregistered");
    CHECK(query_int(db, "SELECT bytes FROM memory_regions WHERE id = 3") == 256);
    CHECK(query_int(
              db, "SELECT count(*) FROM memory_regions WHERE heap = 1 AND allocation IS NOT NULL AND device = 0") == 3);
    CHECK(query_is_null(db, "SELECT heap FROM memory_regions WHERE id = 4"));
    CHECK(query_is_null(db, "SELECT allocation FROM memory_regions WHERE id = 4"));
    CHECK(query_int(db, "SELECT count(*) FROM memory_regions WHERE name = 'nowhere'") == 0);
}
