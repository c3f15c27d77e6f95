// "Memory the framework cannot see" on a synthetic trace whose every byte is known: which kind each
// allocation outside the pool is, what is live at the peak, and workspace ranges in the pool that
// overlap at the peak counted once per byte (docs/analyzer.md).
#include <doctest/doctest.h>

#include "framework_unseen.h"
#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/render.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {

const UnseenMemoryItem& item(const FrameworkUnseenMemory& u, const std::string& kind) {
    for (const UnseenMemoryItem& i : u.items)
        if (i.kind == kind) return i;
    FAIL("no item " << kind);
    return u.items.front();
}

// A library call on `thread` over [begin, end], optionally using a workspace.
void call(tbdtest::TraceBuilder& t, const std::string& name, int64_t thread, int64_t begin, int64_t end,
          const std::string& workspace = "NULL, NULL, NULL") {
    const int64_t id = t.library_call(0, std::nullopt, std::nullopt, name, begin);
    t.exec("UPDATE library_calls SET thread = " + std::to_string(thread) + ", end_ns = " + std::to_string(end) +
           ", (workspace, workspace_bytes, workspace_allocation) = (" + workspace +
           ") WHERE id = " + std::to_string(id));
}

}  // namespace

TEST_CASE("memory outside a pool by kind, at the peak and in total; pool workspaces once per byte") {
    tbdtest::TraceBuilder t("framework_unseen.sqlite");
    const int64_t segment = t.allocation(1000, 0, std::nullopt, "activations");  // address 4096 * id
    t.exec("INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category) VALUES (1, " +
           std::to_string(segment) + ", 400, 100, 0, 30, 'weights')");
    t.allocation(300, 5, std::nullopt);  // inside the NCCL call: nccl
    t.allocation(200, 7, 9);             // inside the cuBLAS call: library_own, live at the peak (8)
    t.allocation(50, 8, std::nullopt);   // no call running: outside_pools
    t.allocation(70, 12, 14);            // outside_pools, after the peak: in total only
    t.exec("UPDATE allocations SET thread = 1");
    call(t, "ncclAllReduce", 1, 4, 6);
    call(t, "cublasSgemm_v2", 1, 6, 7);
    const std::string base = std::to_string(4096 * segment), id = std::to_string(segment);
    // Two ranges of the segment handed to calls on another thread, overlapping by 50 bytes over the peak,
    // the first used twice; a third used only before the peak.
    call(t, "cublasLtMatmul", 2, 1, 3, base + ", 100, " + id);
    call(t, "cublasLtMatmul", 2, 15, 20, base + ", 100, " + id);
    call(t, "cudnnConvolutionForward", 2, 6, 10, base + " + 50, 100, " + id);
    call(t, "cudnnConvolutionForward", 2, 2, 3, base + " + 600, 40, " + id);
    const Report r = analyze_trace(t.finish(100), AnalysisOptions{});
    REQUIRE(r.memory.peak_trace_ns == 8);
    const FrameworkUnseenMemory& u = r.unseen;
    REQUIRE(u.present);
    CHECK(u.allocator == "a pool allocator or the program's own arenas, not told apart");  // sub-ranges only
    CHECK(u.pool_allocations == 1);
    CHECK(u.pool_at_peak_bytes == 1000);
    CHECK(item(u, "nccl").at_peak_bytes == 300);
    CHECK(item(u, "nccl").sources == std::vector<std::string>{"NCCL"});
    CHECK(item(u, "library_own").at_peak_bytes == 200);
    CHECK(item(u, "library_own").sources == std::vector<std::string>{"cuBLAS"});
    CHECK(item(u, "outside_pools").at_peak_bytes == 50);
    CHECK(item(u, "outside_pools").total_bytes == 120);
    CHECK(item(u, "outside_pools").count == 2);
    const UnseenMemoryItem& in_pool = item(u, "library_workspace_in_pool");
    CHECK(in_pool.count == 3);
    CHECK(in_pool.total_bytes == 240);
    CHECK(in_pool.at_peak_bytes == 150);  // [0, 100) and [50, 150): 150 bytes, not 200
    CHECK(u.at_peak_bytes == 300 + 200 + 50 + 150);
    CHECK(u.total_bytes == 300 + 200 + 120 + 240);
}

TEST_CASE("no pool, no section") {
    tbdtest::TraceBuilder t("framework_unseen_none.sqlite");
    t.allocation(100, 0, std::nullopt, "weights");
    const Report r = analyze_trace(t.finish(100), AnalysisOptions{});
    CHECK_FALSE(r.unseen.present);
    CHECK(render_report(r, Format::json, 0).find("\"framework_unseen\": null") != std::string::npos);
}

TEST_CASE("the estimate's allocations come from the memory scan's read: every device, its own kinds") {
    // The rows the estimate keeps, by kind and size: device memory of 1 byte to 1 PiB, not mapped host
    // memory (the memory scan's replay does count that).
    std::vector<UnseenAllocation> kept;
    tbdprof::trace::AllocationRow row;
    row.bytes = 64;
    for (const auto kind : {tbdprof::trace::MemoryKind::device, tbdprof::trace::MemoryKind::device_async,
                            tbdprof::trace::MemoryKind::managed, tbdprof::trace::MemoryKind::device_mapped,
                            tbdprof::trace::MemoryKind::unknown}) {
        row.kind = kind;
        ++row.id;
        collect_unseen_allocation(row, kept);
    }
    REQUIRE(kept.size() == 3);
    CHECK(kept[0].id == 1);
    CHECK_FALSE(kept[0].stream_ordered);
    CHECK(kept[1].stream_ordered);
    CHECK(kept[2].id == 3);
    row.kind = tbdprof::trace::MemoryKind::device;
    for (const int64_t bytes : {int64_t{0}, int64_t{-5}, (int64_t{1} << 50) + 1}) {
        row.bytes = bytes;
        collect_unseen_allocation(row, kept);
    }
    CHECK(kept.size() == 3);

    // A report that replays device 0 only still estimates over every device's allocations, as when
    // the estimate read the table itself.
    tbdtest::TraceBuilder t("framework_unseen_devices.sqlite");
    const int64_t segment = t.allocation(1000, 0, std::nullopt, "activations");
    t.exec("INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category) VALUES (1, " +
           std::to_string(segment) + ", 0, 100, 0, 30, 'weights')");
    t.allocation(50, 8, std::nullopt, "", "device", 1);         // another device, outside the pool
    t.allocation(70, 8, std::nullopt, "", "device_mapped", 0);  // mapped host memory: not the estimate's
    AnalysisOptions options;
    options.memory_device = 0;
    const Report r = analyze_trace(t.finish(100), options);
    REQUIRE(r.unseen.present);
    CHECK(item(r.unseen, "outside_pools").total_bytes == 50);
    CHECK(item(r.unseen, "outside_pools").count == 1);
}
