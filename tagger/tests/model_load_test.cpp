// Loading the tagger's model from a trace: work in launch order whatever the ids (gaps, library calls
// stored out of time order, copies launched between kernels), each kernel keeping its own library
// call and the allocations its arguments point into, and pointer uses following their items.
#include <doctest/doctest.h>
#include <tbdprof/trace/sqlite_handle.h>

#include "iterations.h"
#include "model.h"
#include "rules.h"
#include "schema_database.h"

#include <algorithm>
#include <string>

using namespace tbdprof::tagger;

namespace {

// A trace with one kernel function (`step`, two function ids) and two 1 MiB device allocations.
tbdprof::trace::Database step_database() {
    tbdprof::trace::Database db = test_support::schema_database();
    db.exec(
        "INSERT INTO strings (id, text) VALUES (1, '_Z4stepPf');"
        "INSERT INTO functions (id, name, mangled) VALUES (1, 1, 1), (2, 1, 1);"
        "INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, kind) VALUES "
        "(1, 1, 0, 1048576, 1048576, 0, 'device'), (2, 1, 0, 4194304, 1048576, 0, 'device');");
    return db;
}

// The kernel of the model's work list with this start time.
const WorkItem& kernel_at(const TraceModel& m, int64_t start_ns) {
    auto it = std::find_if(m.work.begin(), m.work.end(), [&](const WorkItem& w) {
        return w.kind == WorkItem::Kind::Kernel && w.start_ns == start_ns;
    });
    REQUIRE(it != m.work.end());
    return *it;
}

}  // namespace

TEST_CASE("kernel ids with gaps, calls out of time order, copies among kernels: work in launch order") {
    tbdprof::trace::Database db = step_database();
    // Calls 9 and 4 stored in id order but 9 begins first; kernels 5, 7, 100 (gaps) launched at
    // start - queued; a copy launched between the second and third kernel.
    db.exec(
        "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, c, c_allocation) VALUES "
        "(4, 1, 'cublasSgemm_v2', 'gemm', 500, 600, 1048576, 1), "
        "(9, 1, 'cublasSgemm_v2', 'gemm', 100, 200, 1048576, 1);"
        "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns, library_call) VALUES "
        "(5, 1, 0, 1, 1000, 50, 800, 9), (7, 1, 0, 2, 2000, 50, 10, NULL), (100, 1, 0, 1, 3000, 50, 10, 4);"
        "INSERT INTO copies (id, process, device, kind, bytes, dst, start_ns, duration_ns, queued_ns, "
        "dst_allocation) VALUES (1, 1, 0, 'htod', 4096, 4194304, 2500, 20, 0, 2);"
        "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
        "(7, 0, 0, 1, 0, 0), (100, 0, 0, 2, 64, 1);");
    const TraceModel m = load_model(db);
    REQUIRE_EQ(m.work.size(), 4u);
    CHECK(std::is_sorted(m.work.begin(), m.work.end(),
                         [](const WorkItem& a, const WorkItem& b) { return a.launch_ns < b.launch_ns; }));
    CHECK_EQ(m.work[0].launch_ns, 200);   // kernel 5: 1000 - 800
    CHECK_EQ(m.work[2].launch_ns, 2500);  // the copy, between kernels 7 and 100
    CHECK(m.work[2].kind == WorkItem::Kind::CopyHtoD);
    REQUIRE_EQ(m.library_calls.size(), 2u);  // in begin order: 9, then 4
    CHECK_EQ(m.library_calls[0].begin_ns, 100);
    CHECK_EQ(m.library_calls[1].begin_ns, 500);
    CHECK_EQ(kernel_at(m, 1000).library_call, 0);  // call 9
    CHECK_EQ(kernel_at(m, 2000).library_call, kNone);
    CHECK_EQ(kernel_at(m, 3000).library_call, 1);  // call 4
    const WorkItem& plain = kernel_at(m, 2000);
    REQUIRE_EQ(plain.touches.size(), 1u);
    CHECK_EQ(plain.touches[0].allocation, 0);
    CHECK(plain.touches[0].access == Access::Write);  // mangled name, not const: written
    CHECK(m.has_argument_info);
}

TEST_CASE("pointer uses follow their work items when the work list is reordered") {
    tbdprof::trace::Database db = step_database();
    // 16 offsets into allocation 1 make it a pooled segment: every pointer is kept as a use. The
    // kernels' ids run backwards against their launch times, so sorting moves every item.
    std::string sql;
    for (int i = 0; i < 16; ++i) {
        const int id = i + 1, start = 10000 - 100 * i;
        sql += "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns) VALUES (" +
               std::to_string(id) + ", 1, 0, 1, " + std::to_string(start) + ", 10);";
        sql += "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES (" +
               std::to_string(id) + ", 0, 0, 1, " + std::to_string(4096 * i) + ", 0);";
    }
    db.exec(sql.c_str());
    const TraceModel m = load_model(db);
    REQUIRE(m.pooled);
    REQUIRE_EQ(m.work.size(), 16u);
    REQUIRE_EQ(m.pointer_uses.size(), 16u);
    for (const PointerUse& use : m.pointer_uses) {
        // Kernel id i + 1 started at 10000 - 100 i and pointed at offset 4096 i.
        const int64_t i = static_cast<int64_t>(use.offset / 4096);
        CHECK_EQ(m.work[use.work].start_ns, 10000 - 100 * i);
    }
    CHECK_EQ(m.work.front().start_ns, 8500);
    CHECK_EQ(m.work.back().start_ns, 10000);
}

TEST_CASE("a workspace of 0 bytes is no operand; one of unrecorded size still is") {
    tbdprof::trace::Database db = step_database();
    // Two cuDNN-style calls, each given a workspace pointer inside allocation 1: the first with a
    // recorded size of 0 (a plan that needs none), the second with no size recorded.
    db.exec(
        "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, workspace, workspace_bytes, "
        "workspace_allocation) VALUES (1, 1, 'cudnnBackendExecute', 'sdpa', 100, 200, 1052672, 0, 1), "
        "(2, 1, 'cudnnBackendExecute', 'sdpa', 300, 400, 1052672, NULL, 1);"
        "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns, library_call) VALUES "
        "(1, 1, 0, 1, 1000, 50, 850, 1), (2, 1, 0, 1, 2000, 50, 1650, 2);");
    const TraceModel m = load_model(db);
    REQUIRE_EQ(m.library_calls.size(), 2u);
    CHECK_EQ(m.library_calls[0].workspace, kNone);
    CHECK_EQ(m.library_calls[1].workspace, 0);
    // The first call's kernel touches nothing through the dropped operand.
    CHECK(kernel_at(m, 1000).touches.empty());
    REQUIRE_EQ(kernel_at(m, 2000).touches.size(), 1u);
}

TEST_CASE("a library call's pointer uses say which of its operands they are, the call keeps no addresses") {
    tbdprof::trace::Database db = step_database();
    // Allocation 1 (at 1 MiB) is a pooled segment: 16 kernels point into it at 16 offsets. A GEMM
    // reads one pointer as both A and B (x^T x) and writes C; the library_call_operands table gives
    // the same call an extra operand at C's address (read-write) and one at an address of its own.
    std::string sql;
    for (int i = 0; i < 16; ++i)
        sql += "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns) VALUES (" +
               std::to_string(i + 1) + ", 1, 0, 1, " + std::to_string(100 * i) +
               ", 10);"
               "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES (" +
               std::to_string(i + 1) + ", 0, 0, 1, " + std::to_string(4096 * i) + ", 0);";
    sql +=
        "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, m, n, k, a, b, c, a_allocation, "
        "b_allocation, c_allocation) VALUES (1, 1, 'cublasSgemm_v2', 'gemm', 5000, 5100, 8, 8, 8, 1114112, 1114112, "
        "1179648, 1, 1, 1);"
        "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, library_call) VALUES "
        "(17, 1, 0, 2, 5010, 10, 1);"
        "INSERT INTO library_call_operands (library_call, process, role, access, address, bytes, allocation) VALUES "
        "(1, 1, 'residual', 'read_write', 1179648, 256, 1), (1, 1, 'bias', 'read', 1245184, 32, 1);";
    db.exec(sql.c_str());
    const TraceModel m = load_model(db);
    REQUIRE(m.pooled);
    std::vector<PointerUse> of_call;
    for (const PointerUse& u : m.pointer_uses)
        if (m.work[u.work].library_call != kNone) of_call.push_back(u);
    REQUIRE_EQ(of_call.size(), 4u);  // A = B once, C, and the two extra operands
    for (const PointerUse& u : of_call) {
        const bool at_ab = u.offset == 65536, at_c = u.offset == 131072;
        CHECK_EQ(u.operand_of_call.a, at_ab);
        CHECK_EQ(u.operand_of_call.b, at_ab);
        CHECK_EQ(u.operand_of_call.c, at_c);  // C itself and the extra operand at its address
        CHECK_FALSE(u.operand_of_call.workspace);
    }
    for (const PointerUse& u : m.pointer_uses)
        if (m.work[u.work].library_call == kNone) CHECK_FALSE((u.operand_of_call.a || u.operand_of_call.c));
}

TEST_CASE("a plain kernel's pointer into a library handle's own allocation is a stale word, not a use") {
    tbdprof::trace::Database db = step_database();
    // Allocation 2 was made inside cublasCreate_v2 (its stack's innermost frame). Kernel 5 runs inside
    // a cuBLAS call (its operands come from the call); kernel 7, launched outside every library call,
    // has an argument word inside allocation 2 (odd, as the unfilled bytes of a by-value struct can
    // hold) besides its own pointer into allocation 1.
    db.exec(
        "INSERT INTO strings (id, text) VALUES (2, 'cublasCreate_v2'), (3, 'libcublas.so.13');"
        "INSERT INTO frames (id, process, ip, symbol, module, offset) VALUES (1, 1, 4096, 2, 3, 16);"
        "INSERT INTO stacks (id, process, depth) VALUES (1, 1, 1);"
        "INSERT INTO stack_frames (stack, position, frame) VALUES (1, 0, 1);"
        "UPDATE allocations SET stack = 1 WHERE id = 2;"
        "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns) VALUES "
        "(9, 1, 'cublasSgemm_v2', 'gemm', 100, 200);"
        "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns, library_call) VALUES "
        "(5, 1, 0, 1, 1000, 50, 800, 9), (7, 1, 0, 2, 2000, 50, 10, NULL);"
        "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
        "(5, 0, 0, 2, 0, 0), (7, 0, 0, 1, 0, 0), (7, 0, 91, 2, 12582913, 0);");
    const TraceModel m = load_model(db);
    REQUIRE_EQ(m.allocations.size(), 2u);
    CHECK_FALSE(m.allocations[0].made_by_library_handle);
    CHECK(m.allocations[1].made_by_library_handle);
    const WorkItem& plain = kernel_at(m, 2000);
    REQUIRE_EQ(plain.touches.size(), 1u);  // its own pointer only
    CHECK_EQ(plain.touches[0].allocation, 0);
}

TEST_CASE("memory a math library allocates for itself is known by its stack, however deep the entry point") {
    tbdprof::trace::Database db = step_database();
    // As cublasCreate_v2 allocated on the real H200 (cuMemAlloc reached through cuGetProcAddress):
    // five unnamed frames inside libcublas, the entry point sixth, then the framework. Allocation 3
    // came through the runtime (cudaMalloc's frame innermost) from inside cuDNN; allocation 1 is
    // PyTorch's, made through the runtime for cublasSetWorkspace: the framework's, not the library's.
    db.exec(
        "INSERT INTO strings (id, text) VALUES (2, 'cublasCreate_v2'), (3, '/venv/nvidia/lib/libcublas.so.13'),"
        " (4, 'at::cuda::getCurrentCUDABlasHandle()'), (5, '/venv/torch/lib/libtorch_cuda.so'),"
        " (6, 'cudaMalloc'), (7, '/venv/nvidia/lib/libcudart.so.13'), (8, '/venv/nvidia/lib/libcudnn_ops.so.9'),"
        " (9, 'at::cuda::setWorkspaceForHandle(cublasContext*, c10::cuda::CUDAStream)');"
        "INSERT INTO frames (id, process, ip, symbol, module, offset) VALUES"
        " (1, 1, 4096, NULL, 3, 16), (2, 1, 4097, NULL, 3, 17), (3, 1, 4098, NULL, 3, 18), (4, 1, 4099, NULL, 3, 19),"
        " (5, 1, 4100, NULL, 3, 20), (6, 1, 4101, 2, 3, 21), (7, 1, 4102, 4, 5, 22), (8, 1, 4103, 6, 7, 23),"
        " (9, 1, 4104, NULL, 8, 24), (10, 1, 4105, 9, 5, 25);"
        "INSERT INTO stacks (id, process, depth) VALUES (1, 1, 7), (2, 1, 3), (3, 1, 3);"
        "INSERT INTO stack_frames (stack, position, frame) VALUES (1, 0, 1), (1, 1, 2), (1, 2, 3), (1, 3, 4),"
        " (1, 4, 5), (1, 5, 6), (1, 6, 7), (2, 0, 8), (2, 1, 9), (2, 2, 7), (3, 0, 8), (3, 1, 10), (3, 2, 7);"
        "INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, kind) VALUES "
        "(3, 1, 0, 16777216, 4096, 0, 'device');"
        "UPDATE allocations SET stack = 3 WHERE id = 1; UPDATE allocations SET stack = 1 WHERE id = 2;"
        "UPDATE allocations SET stack = 2 WHERE id = 3;");
    const TraceModel m = load_model(db);
    REQUIRE_EQ(m.allocations.size(), 3u);
    CHECK_FALSE(m.allocations[0].made_by_library_handle);
    CHECK(m.allocations[0].made_by.library.empty());
    CHECK(m.allocations[1].made_by_library_handle);
    CHECK_EQ(m.allocations[1].made_by.library, "cuBLAS");
    CHECK_EQ(m.allocations[1].made_by.entry_point, "cublasCreate_v2");
    CHECK(m.allocations[2].made_by_library_handle);
    CHECK_EQ(m.allocations[2].made_by.library, "cuDNN");
    CHECK(m.allocations[2].made_by.entry_point.empty());
    // Tagged workspace under its own rule, with words that name the library and its function.
    const TagResult tags = tag_allocations(m, IterationSet{});
    REQUIRE_EQ(tags.tags.size(), 3u);
    CHECK_NE(tags.tags[0].rule, "library-handle-workspace");
    CHECK_EQ(tags.tags[1].category, "workspace");
    CHECK_EQ(tags.tags[1].rule, "library-handle-workspace");
    CHECK_NE(tags.tags[1].reason.find("allocated by cuBLAS itself inside cublasCreate_v2"), std::string::npos);
    CHECK_EQ(tags.tags[2].category, "workspace");
    CHECK_NE(tags.tags[2].reason.find("allocated by cuDNN itself"), std::string::npos);
}

TEST_CASE("ranges the caller has are the model's, in place of the file's; without them the file's are read") {
    tbdprof::trace::Database db = step_database();
    db.exec(
        "INSERT INTO ranges (id, process, thread, begin_ns, end_ns, name) VALUES "
        "(1, 1, 1, 100, 200, 'ProfilerStep#1'), (2, 1, 1, 300, NULL, 'aten::mm');");
    const TraceModel read = load_model(db);
    REQUIRE_EQ(read.ranges.size(), 2u);
    CHECK_EQ(read.ranges[0].name, "ProfilerStep#1");
    CHECK_EQ(read.ranges[1].end_ns, 300);  // no end: its begin
    // An import hands over what it has just written (interop/src/import.cpp): the file is not read.
    WrittenRows known{.ranges = {{1, 10, 20, "ProfilerStep#7"}}, .allocations = std::nullopt};
    const TraceModel given = load_model(db, std::move(known));
    REQUIRE_EQ(given.ranges.size(), 1u);
    CHECK_EQ(given.ranges[0].name, "ProfilerStep#7");
    CHECK_EQ(given.ranges[0].begin_ns, 10);
    CHECK_EQ(given.allocations.size(), read.allocations.size());  // the rest still from the file
}

TEST_CASE("allocations the caller has are the model's, in place of the file's; without them the file's are read") {
    tbdprof::trace::Database db = step_database();
    const TraceModel read = load_model(db);
    REQUIRE_FALSE(read.allocations.empty());
    // The file's rows as an import hands them over (interop/src/import.cpp): the same model.
    std::vector<tbdprof::trace::AllocationRow> rows;
    tbdprof::trace::AllocationRow row;
    for (tbdprof::trace::RowReader<tbdprof::trace::AllocationRow> reader(db, {.tag_texts = false}); reader.next(row);)
        rows.push_back(row);
    const TraceModel same = load_model(db, WrittenRows{.ranges = read.ranges, .allocations = rows});
    REQUIRE_EQ(same.allocations.size(), read.allocations.size());
    for (size_t i = 0; i < same.allocations.size(); ++i) {
        CHECK_EQ(same.allocations[i].id, read.allocations[i].id);
        CHECK_EQ(same.allocations[i].address, read.allocations[i].address);
        CHECK_EQ(same.allocations[i].bytes, read.allocations[i].bytes);
        CHECK_EQ(same.allocations[i].alloc_ns, read.allocations[i].alloc_ns);
        CHECK(same.allocations[i].free_ns == read.allocations[i].free_ns);
    }
    CHECK_EQ(same.work.size(), read.work.size());
    // Rows that differ from the file's are taken as given: the file is not read. Host memory and
    // unknown kinds are left out as the file's would be; a device_async row is kept.
    tbdprof::trace::AllocationRow given{};
    given.id = 41;
    given.process = 1;
    given.address = 0x7000000;
    given.bytes = 12345;
    given.alloc_ns = 5;
    given.kind = tbdprof::trace::MemoryKind::device_async;
    tbdprof::trace::AllocationRow host = given;
    host.id = 42;
    host.kind = tbdprof::trace::MemoryKind::pinned_host;
    const TraceModel other = load_model(db, WrittenRows{.ranges = {}, .allocations = std::vector{given, host}});
    REQUIRE_EQ(other.allocations.size(), 1u);
    CHECK_EQ(other.allocations[0].id, 41);
    CHECK_EQ(other.allocations[0].bytes, 12345);
}

TEST_CASE("kernels the caller has are the model's, in place of the file's; without them the file's are read") {
    tbdprof::trace::Database db = step_database();
    db.exec(
        "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns, library_call) VALUES "
        "(1, 1, 0, 1, 1000, 50, 10, NULL), (2, 1, 0, 1, 2000, NULL, NULL, NULL);"
        "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
        "(1, 0, 0, 1, 0, 1), (2, 0, 0, 2, 0, 0);");
    const TraceModel read = load_model(db);
    std::vector<tbdprof::trace::KernelLaunch> kernels;
    tbdprof::trace::for_each_kernel_launch(db, [&](const tbdprof::trace::KernelLaunch& k) { kernels.push_back(k); });
    REQUIRE_FALSE(kernels.empty());
    // The file's rows as an import hands them over (interop/src/import.cpp): the same work.
    const TraceModel same = load_model(db, WrittenRows{.ranges = read.ranges, .allocations = {}, .kernels = kernels});
    REQUIRE_EQ(same.work.size(), read.work.size());
    for (size_t i = 0; i < same.work.size(); ++i) {
        CHECK_EQ(same.work[i].start_ns, read.work[i].start_ns);
        CHECK_EQ(same.work[i].launch_ns, read.work[i].launch_ns);
        CHECK_EQ(same.work[i].function, read.work[i].function);
        CHECK_EQ(same.work[i].end_ns, read.work[i].end_ns);
        CHECK_EQ(same.work[i].touches.size(), read.work[i].touches.size());
    }
    // A kernel that is not the file's is taken as given: the file's kernels are not read.
    tbdprof::trace::KernelLaunch given = kernels.front();
    given.start_ns = 987654;
    given.duration_ns = 11;
    const TraceModel other =
        load_model(db, WrittenRows{.ranges = {}, .allocations = {}, .kernels = std::vector{given}});
    const auto found =
        std::find_if(other.work.begin(), other.work.end(), [](const WorkItem& w) { return w.start_ns == 987654; });
    REQUIRE(found != other.work.end());
    CHECK_EQ(found->end_ns, 987654 + 11);
    CHECK_EQ(other.work.size(), read.work.size() - kernels.size() + 1);
}

TEST_CASE("host waits come from the API calls the caller has, in place of the file's") {
    tbdprof::trace::Database db = step_database();
    db.exec(
        "INSERT INTO api_calls (id, process, thread, kind, begin_ns, end_ns) VALUES "
        "(1, 1, 1, 'stream_wait_event', 100, 110), (2, 1, 1, 'device_sync', 300, 400), "
        "(3, 1, 1, 'stream_sync', 200, 250);");
    const TraceModel read = load_model(db);
    REQUIRE_EQ(read.host_waits.size(), 2u);
    CHECK_EQ(read.host_waits[0].begin_ns, 200);  // by time, not by id
    CHECK_EQ(read.host_waits[1].begin_ns, 300);
    // The file's rows in time order as an import hands them over (interop/src/import.cpp).
    const std::vector<tbdprof::trace::ApiCallRow> calls{
        {.id = 1, .process = 1, .thread = 1, .kind = "stream_wait_event", .begin_ns = 100, .end_ns = 110},
        {.id = 3, .process = 1, .thread = 1, .kind = "stream_sync", .begin_ns = 200, .end_ns = 250},
        {.id = 2, .process = 1, .thread = 1, .kind = "device_sync", .begin_ns = 300, .end_ns = 400}};
    const TraceModel same = load_model(db, WrittenRows{.ranges = read.ranges, .api_calls = calls});
    REQUIRE_EQ(same.host_waits.size(), read.host_waits.size());
    for (size_t i = 0; i < same.host_waits.size(); ++i) {
        CHECK_EQ(same.host_waits[i].begin_ns, read.host_waits[i].begin_ns);
        CHECK_EQ(same.host_waits[i].end_ns, read.host_waits[i].end_ns);
    }
    // Calls that are not the file's are taken as given: the file's are not read.
    const std::vector<tbdprof::trace::ApiCallRow> given{
        {.id = 9, .process = 1, .kind = "event_sync", .begin_ns = 7, .end_ns = 8}};
    const TraceModel other = load_model(db, WrittenRows{.ranges = {}, .api_calls = given});
    REQUIRE_EQ(other.host_waits.size(), 1u);
    CHECK_EQ(other.host_waits[0].begin_ns, 7);
}

TEST_CASE("a kernel of a library call with no known operand keeps its own argument edges") {
    // cuDNN's backend API (cudnnBackendExecute: PyTorch's convolutions on a real GPU) passes its
    // tensors in a variant pack the collector does not decode: the call has no a, b, c or workspace.
    // Its kernel's edges (the batch read through a pointer to const, the output written) are all the
    // trace knows of what the convolution uses; a GEMM call with its operands keeps the call's roles.
    tbdprof::trace::Database db = step_database();
    db.exec(
        "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, a, a_allocation, c, c_allocation) "
        "VALUES (1, 1, 'cudnnBackendExecute', 'pointwise', 100, 200, NULL, NULL, NULL, NULL), "
        "(2, 1, 'cublasSgemm_v2', 'gemm', 300, 400, 1048576, 1, 4194304, 2);"
        "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns, library_call) VALUES "
        "(1, 1, 0, 1, 1000, 50, 10, 1), (2, 1, 0, 1, 2000, 50, 10, 2);"
        "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
        "(1, 0, 0, 1, 0, 1), (1, 1, 0, 2, 0, 0), (2, 0, 0, 2, 64, 1);");
    const TraceModel m = load_model(db);
    const WorkItem& convolution = kernel_at(m, 1000);
    CHECK_EQ(convolution.library_call, kNone);
    REQUIRE_EQ(convolution.touches.size(), 2u);
    CHECK(std::any_of(convolution.touches.begin(), convolution.touches.end(),
                      [](const Touch& t) { return t.allocation == 0 && t.access == Access::Read; }));
    CHECK(std::any_of(convolution.touches.begin(), convolution.touches.end(),
                      [](const Touch& t) { return t.allocation == 1 && t.access == Access::Write; }));
    const WorkItem& gemm = kernel_at(m, 2000);
    CHECK_EQ(gemm.library_call, 1);
    REQUIRE_EQ(gemm.touches.size(), 2u);  // A read, C written: the call's roles, not the edge
    CHECK(gemm.touches[0].allocation == 0);
    CHECK(gemm.touches[1].allocation == 1);
}

TEST_CASE("in a pool, an opaque call's kernel keeps its pointers at tensors others use, not its own scratch") {
    // Allocation 1 is a pooled segment: 16 plain kernels point into it at offsets 0, 4096, ... A
    // cuDNN backend call (no operands known) launches a kernel that reads the tensor at 4096 (used by
    // a plain kernel too) and writes at 200000 (its transposed copy in the variant pack's workspace,
    // which no other work uses): only the first is a pointer use, so no tensor starts inside the
    // tensors around it; both stay touches of the segment.
    tbdprof::trace::Database db = step_database();
    std::string sql;
    for (int i = 0; i < 16; ++i)
        sql += "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns) VALUES (" +
               std::to_string(i + 1) + ", 1, 0, 1, " + std::to_string(100 * i) +
               ", 10);"
               "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES (" +
               std::to_string(i + 1) + ", 0, 0, 1, " + std::to_string(4096 * i) + ", 0);";
    sql +=
        "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns) VALUES "
        "(1, 1, 'cudnnBackendExecute', 'pointwise', 5000, 5100);"
        "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, library_call) VALUES "
        "(17, 1, 0, 2, 5010, 10, 1);"
        "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
        "(17, 0, 0, 1, 4096, 1), (17, 1, 0, 1, 200000, 0);";
    db.exec(sql.c_str());
    const TraceModel m = load_model(db);
    REQUIRE(m.pooled);
    const WorkItem& convolution = kernel_at(m, 5010);
    CHECK_EQ(convolution.library_call, kNone);
    CHECK_EQ(convolution.touches.size(), 1u);  // the segment
    std::vector<uint64_t> offsets;
    for (const PointerUse& u : m.pointer_uses)
        if (&m.work[u.work] == &convolution) offsets.push_back(u.offset);
    REQUIRE_EQ(offsets.size(), 1u);
    CHECK_EQ(offsets[0], 4096u);
}
