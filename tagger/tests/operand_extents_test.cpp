// Library-call operand extents: what the collector computes from a descriptor
// (preload/operand_extent.h), what the tagger loads from library_calls.a_bytes/b_bytes/c_bytes
// (exact, preferred to the GEMM-shape lower bound, which stays for calls and traces without them),
// and what sub-ranges make of exact library writes and workspaces in a pool.
#include <doctest/doctest.h>
#include <tbdprof/trace/sqlite_handle.h>
#include <tbdprof/trace/tables.h>

#include "model.h"
#include "operand_extent.h"
#include "subranges.h"
#include "timed_work.h"

#include <fstream>
#include <sstream>
#include <string>

using namespace tbdprof::tagger;
using tbdprof::preload::strided_extent_bytes;

TEST_CASE("extent of a strided tensor: packed, padded, broadcast, unusable") {
    const int64_t dims[4] = {16, 3, 16, 16};
    const int64_t packed[4] = {3 * 16 * 16, 16 * 16, 16, 1};
    CHECK_EQ(strided_extent_bytes(4, dims, packed, 4), uint64_t(16 * 3 * 16 * 16 * 4));
    // Rows padded to 20 elements: the last row ends 16 elements into its 20.
    const int64_t padded[4] = {3 * 16 * 20, 16 * 20, 20, 1};
    CHECK_EQ(strided_extent_bytes(4, dims, padded, 2), uint64_t((15 * 960 + 2 * 320 + 15 * 20 + 15 + 1) * 2));
    // NHWC strides span the same bytes as NCHW.
    const int64_t nhwc[4] = {16 * 16 * 3, 1, 16 * 3, 3};
    CHECK_EQ(strided_extent_bytes(4, dims, nhwc, 4), uint64_t(16 * 3 * 16 * 16 * 4));
    // A bias broadcast over N, H, W (strides 0) spans its C elements only.
    const int64_t broadcast[4] = {0, 1, 0, 0};
    CHECK_EQ(strided_extent_bytes(4, dims, broadcast, 4), uint64_t(3 * 4));
    const int64_t empty[4] = {16, 0, 16, 16};
    CHECK_EQ(strided_extent_bytes(4, empty, packed, 4), 0u);
    const int64_t negative[4] = {3 * 16 * 16, -256, 16, 1};
    CHECK_EQ(strided_extent_bytes(4, dims, negative, 4), 0u);
    CHECK_EQ(strided_extent_bytes(4, dims, packed, 0), 0u);  // unknown data type
    CHECK_EQ(strided_extent_bytes(0, dims, packed, 4), 0u);
}

namespace {

struct Database {
    tbdprof::trace::Database db = tbdprof::trace::create_database(":memory:");
    explicit Database(bool with_extent_columns) {
        std::ifstream in(TBD_TRACE_SCHEMA);
        std::stringstream schema;
        schema << in.rdbuf();
        REQUIRE(!schema.str().empty());
        exec(schema.str());
        if (!with_extent_columns)  // a trace written before the columns were added
            exec(
                "ALTER TABLE library_calls RENAME TO current_calls; CREATE TABLE library_calls AS SELECT id, "
                "process, thread, name, op, begin_ns, end_ns, stream, m, n, k, batch, a_type, b_type, c_type, "
                "compute_type, transa, transb, flops, a, b, c, workspace, workspace_bytes, math_mode, precision "
                "FROM current_calls; DROP TABLE current_calls;");
        exec(
            "INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, kind) VALUES "
            "(1, 1, 0, 1048576, 1048576, 0, 'device');");
    }
    void exec(const std::string& sql) { db.exec(sql.c_str()); }
};

// A convolution forward recorded with its implicit-GEMM shape (m = N*P*Q = 4096, n = K = 16,
// k = C*R*S = 27) and, where the columns exist, its operands' extents.
const char* kConvolution =
    "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, m, n, k, batch, a_type, b_type, c_type, "
    "a, b, c, workspace, workspace_bytes%s) VALUES (1, 1, 'cudnnConvolutionForward', 'convolution_forward', 10, 20, "
    "4096, 16, 27, 1, 0, 0, 0, 1048576, 1148576, 1248576, 1348576, 216%s);";
const char* kGemm =
    "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, m, n, k, batch, a_type, b_type, c_type, "
    "a, b, c) VALUES (2, 1, 'cublasSgemm_v2', 'gemm', 30, 40, 10, 16, 512, 1, 0, 0, 0, 1048576, 1148576, 1248576);";

// The operands load_model reads (for pooled traces) from each library_calls row, in id order.
std::vector<CallOperands> operands_of(const tbdprof::trace::Database& db) {
    std::vector<CallOperands> operands;
    tbdprof::trace::LibraryCallRow r;
    for (tbdprof::trace::RowReader<tbdprof::trace::LibraryCallRow> rows(db); rows.next(r);)
        operands.push_back(call_operands(r));
    return operands;
}

// `pattern` with its two "%s" replaced by `columns` and `values`.
std::string format(const char* pattern, const char* columns, const char* values) {
    std::string s = pattern;
    size_t at = s.find("%s");
    s.replace(at, 2, columns);
    at = s.find("%s", at + std::string(columns).size());
    s.replace(at, 2, values);
    return s;
}

}  // namespace

TEST_CASE("recorded extents are loaded as exact sizes; without them the GEMM shape rule stays") {
    Database d(true);
    d.exec(format(kConvolution, ", a_bytes, b_bytes, c_bytes", ", 49152, 1728, 262144"));
    d.exec(kGemm);
    REQUIRE_EQ(load_model(d.db).library_calls.size(), 2u);
    const std::vector<CallOperands> operands = operands_of(d.db);
    REQUIRE_EQ(operands.size(), 2u);
    const CallOperands& conv = operands[0];
    CHECK_EQ(conv.a_bytes, 49152);  // x, not m*k*4 = 442368 (the im2col size)
    CHECK_EQ(conv.b_bytes, 1728);
    CHECK_EQ(conv.c_bytes, 262144);
    CHECK_EQ(conv.workspace_bytes, 216);
    CHECK((conv.a_exact && conv.b_exact && conv.c_exact));
    const CallOperands& gemm = operands[1];
    CHECK_EQ(gemm.a_bytes, 10 * 512 * 4);  // NULL extents: m*k, k*n, m*n elements, lower bounds
    CHECK_EQ(gemm.b_bytes, 512 * 16 * 4);
    CHECK_EQ(gemm.c_bytes, 10 * 16 * 4);
    CHECK(!(gemm.a_exact || gemm.b_exact || gemm.c_exact));
}

TEST_CASE("a trace without the extent columns loads; cuDNN calls then have no operand sizes") {
    Database d(false);
    d.exec(format(kConvolution, "", ""));
    d.exec(kGemm);
    REQUIRE_EQ(load_model(d.db).library_calls.size(), 2u);
    const std::vector<CallOperands> operands = operands_of(d.db);
    REQUIRE_EQ(operands.size(), 2u);
    CHECK_EQ(operands[0].a_bytes, 0);
    CHECK(!operands[0].a_exact);
    CHECK_EQ(operands[1].c_bytes, 10 * 16 * 4);
}

TEST_CASE("a pooled address reused for a workspace after a library output is a new tensor") {
    // One segment: a batch norm writes y at offset 0 (recorded extent 4096), the activation reads
    // it, then the allocator hands offset 0 to the next convolution as its workspace (216 bytes).
    // The workspace write replaced y's contents: two tensors at 0, y of its recorded size. (Before
    // workspaces carried an exact size, the workspace joined y and made it a "workspace".)
    TraceModel m;
    m.pooled = true;
    m.has_argument_info = true;
    Allocation segment;
    segment.id = 1;
    segment.address = 1 << 20;
    segment.bytes = 1 << 20;
    m.allocations.push_back(segment);
    int64_t now = 1000;
    auto work = [&](std::vector<PointerUse> uses) {
        WorkItem w = tbdprof::tagger::test::timed_work(WorkItem::Kind::Kernel, 1, now);
        w.touches.push_back({0, uses.front().access});
        for (PointerUse& u : uses) {
            u.work = static_cast<uint32_t>(m.work.size());
            u.allocation = 0;
            m.pointer_uses.push_back(u);
        }
        m.work.push_back(std::move(w));
    };
    work({{0, 0, 65536, 4096, true, Access::Read}, {0, 0, 0, 4096, true, Access::Write}});  // batch norm
    work({{0, 0, 0, 4096, true, Access::Read}, {0, 0, 8192, 4096, true, Access::Write}});   // activation
    work({{0, 0, 8192, 4096, true, Access::Read}, {0, 0, 0, 216, true, Access::Write}});    // conv workspace
    SubRangeSet set = derive_subranges(m, {});
    std::vector<SubRange> at_zero;
    for (const SubRange& r : set.ranges)
        if (r.offset == 0 && !r.merged) at_zero.push_back(r);
    REQUIRE_EQ(at_zero.size(), 2u);
    CHECK_EQ(at_zero[0].bytes, 4096);
    CHECK_EQ(at_zero[0].last_work, 1u);
    CHECK_EQ(at_zero[1].bytes, 216);
    CHECK_EQ(at_zero[1].first_work, 2u);
}
