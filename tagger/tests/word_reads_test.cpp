// Reads through writable words where each tensor is an allocation of its own (tagger/word_reads.h;
// docs/tagging.md, change 44): a made-up autocast run under a one-allocation-per-tensor allocator,
// loaded from a trace as the tagger loads a recording. The conversion kernel takes its source and
// its result in one by-value struct, both words writable; only the words tell which it reads.
#include <doctest/doctest.h>
#include <tbdprof/trace/sqlite_handle.h>

#include "iterations.h"
#include "model.h"
#include "pool_tagging.h"
#include "rules.h"
#include "schema_database.h"

#include <iterator>
#include <sstream>
#include <string>

using namespace tbdprof::tagger;

namespace {

constexpr int kSteps = 4;
constexpr int64_t kStepNs = 100000;
constexpr uint64_t kMiB = 1 << 20;

// Functions: 1 initialises W, 2 is the conversion (source word at byte 0, result word at byte 8 of
// parameter 0), 3 the update (gradient to const, W writable), 4 the GEMMs' kernel.
std::string header() {
    return "INSERT INTO strings (id, text) VALUES (1, '_Z4initPf'), (2, '_Z7convertN2at6ArrayIPcEE'), "
           "(3, '_Z6updatePKfPf'), (4, '_Z4gemmv');"
           "INSERT INTO functions (id, name, mangled) VALUES (1, 1, 1), (2, 2, 1), (3, 3, 1), (4, 4, 1);"
           "INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, kind) VALUES "
           "(1, 1, 0, 1048576, 65536, 0, 'device_async');"
           "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns) VALUES "
           "(1, 1, 0, 1, 1000, 100, 0);"
           "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
           "(1, 0, 0, 1, 0, 0);";
}

// What a step of both runs starts with: `count` buffers (ids id.., 1 MiB apart from `base`)
// allocated in the step and freed at its end, the batch X copied into the first, and the two GEMMs
// A = Xc Wc (buffers 1, 2 -> 3) and G = A^T Xc (3, 1 -> 4).
void allocate_copy_and_multiply(std::ostringstream& q, int id, int count, uint64_t base, int64_t t0) {
    auto address = [&](int k) { return std::to_string(base + uint64_t(k) * kMiB); };
    auto at = [&](int64_t dt) { return std::to_string(t0 + dt); };
    q << "INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, free_ns, kind) VALUES ";
    for (int k = 0; k < count; ++k)
        q << (k ? "," : "") << "(" << id + k << ", 1, 0, " << address(k) << ", 65536, " << at(k) << ", "
          << at(kStepNs - 10) << ", 'device_async')";
    q << ";INSERT INTO copies (id, process, device, kind, bytes, dst, start_ns, duration_ns, queued_ns, "
         "dst_allocation) VALUES ("
      << id << ", 1, 0, 'htod', 65536, " << address(0) << ", " << at(100) << ", 50, 0, " << id << ");";
    q << "INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, a, a_allocation, b, "
         "b_allocation, c, c_allocation) VALUES ("
      << id << ", 1, 'cublasGemmEx', 'gemm', " << at(3000) << ", " << at(3100) << ", " << address(1) << ", " << id + 1
      << ", " << address(2) << ", " << id + 2 << ", " << address(3) << ", " << id + 3 << "), (" << id + 1
      << ", 1, 'cublasGemmEx', 'gemm', " << at(4000) << ", " << at(4100) << ", " << address(3) << ", " << id + 3 << ", "
      << address(1) << ", " << id + 1 << ", " << address(4) << ", " << id + 4 << ");";
}

// One step at `t0`: the batch X copied in; Xc = convert(X), Wc = convert(W); A = Xc Wc; G = A^T Xc;
// update(G, W). Every buffer but W is allocated in the step and freed at its end (ids from `id`).
std::string step(int s, int64_t t0) {
    const int id = 10 + 10 * s;  // X, Xc, Wc, A, G: id .. id + 4
    const uint64_t base = 16 * kMiB + uint64_t(s) * 8 * kMiB;
    auto at = [&](int64_t dt) { return std::to_string(t0 + dt); };
    std::ostringstream q;
    allocate_copy_and_multiply(q, id, 5, base, t0);
    // Kernels id (Xc), id + 1 (Wc), id + 2 and id + 3 (the GEMMs'), id + 4 (the update).
    q << "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns, library_call) "
         "VALUES ("
      << id << ", 1, 0, 2, " << at(1000) << ", 50, 0, NULL), (" << id + 1 << ", 1, 0, 2, " << at(2000)
      << ", 50, 0, NULL), (" << id + 2 << ", 1, 0, 4, " << at(3050) << ", 50, 0, " << id << "), (" << id + 3
      << ", 1, 0, 4, " << at(4050) << ", 50, 0, " << id + 1 << "), (" << id + 4 << ", 1, 0, 3, " << at(5000)
      << ", 50, 0, NULL);";
    q << "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES (" << id
      << ", 0, 0, " << id << ", 0, 0), (" << id << ", 0, 8, " << id + 1 << ", 0, 0), (" << id + 1
      << ", 0, 0, 1, 0, 0), (" << id + 1 << ", 0, 8, " << id + 2 << ", 0, 0), (" << id + 4 << ", 0, 0, " << id + 4
      << ", 0, 1), (" << id + 4 << ", 1, 0, 1, 0, 0);";
    q << "INSERT INTO ranges (id, process, begin_ns, end_ns, name) VALUES (" << id << ", 1, " << at(0) << ", "
      << at(kStepNs - 1) << ", 'step');";
    return q.str();
}

// A second run as hand-written trainers pass their operands (one by-value struct a kernel): W is
// converted and multiplied as above; a table T is gathered for the batch (kernel 6: X, T, the rows
// Y filled new); backward's kernel 8 fills D new from A, and the table's backward (kernel 7) reads X
// and D and fills the table's gradient E new; the
// update (kernel 5, one launch a weight) takes the weight, its gradient and its momentum (M for W,
// M2 for T: allocated before the steps, filled new by the first launch only), all in one struct.
std::string struct_header() {
    return "INSERT INTO strings (id, text) VALUES (1, '_Z4initPf'), (2, '_Z7convertN2tt4ArgsE'), "
           "(4, '_Z4gemmv'), (5, '_Z3sgdN2tt7SgdArgsE'), (6, '_Z5embedN2tt4ArgsE'), (7, '_Z8embed_bwN2tt4ArgsE'), "
           "(8, '_Z4reluN2tt4ArgsE');"
           "INSERT INTO functions (id, name, mangled) VALUES (1, 1, 1), (2, 2, 1), (4, 4, 1), (5, 5, 1), (6, 6, 1), "
           "(7, 7, 1), (8, 8, 1);"
           "INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, kind) VALUES "
           "(1, 1, 0, 1048576, 65536, 0, 'device_async'), (2, 1, 0, 2097152, 65536, 0, 'device_async'), "
           "(3, 1, 0, 3145728, 65536, 0, 'device_async'), (4, 1, 0, 4194304, 65536, 0, 'device_async');"
           "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns) VALUES "
           "(1, 1, 0, 1, 1000, 100, 0), (2, 1, 0, 1, 2000, 100, 0);"
           "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES "
           "(1, 0, 0, 1, 0, 0), (2, 0, 0, 3, 0, 0);";
}

std::string struct_step(int s, int64_t t0) {
    const int id = 10 + 10 * s;  // X, Xc, Wc, A, G, Y, E, D: id .. id + 7
    const uint64_t base = 16 * kMiB + uint64_t(s) * 8 * kMiB;
    auto at = [&](int64_t dt) { return std::to_string(t0 + dt); };
    std::ostringstream q;
    allocate_copy_and_multiply(q, id, 8, base, t0);
    // (kernel, function, start, library call): Xc, Wc, Y, the GEMMs', E, the updates of W and T, D.
    const int kernels[9][4] = {{id, 2, 1000, 0},      {id + 1, 2, 2000, 0},      {id + 2, 6, 2500, 0},
                               {id + 3, 4, 3050, id}, {id + 4, 4, 4050, id + 1}, {id + 5, 7, 4500, 0},
                               {id + 6, 5, 5000, 0},  {id + 7, 5, 5100, 0},      {id + 8, 8, 4300, 0}};
    q << "INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, queued_ns, library_call) VALUES ";
    for (int k = 0; k < 9; ++k)
        q << (k ? "," : "") << "(" << kernels[k][0] << ", 1, 0, " << kernels[k][1] << ", " << at(kernels[k][2])
          << ", 50, 0, " << (kernels[k][3] ? std::to_string(kernels[k][3]) : "NULL") << ")";
    // (kernel, word, allocation): every operand in parameter 0, writable.
    const int words[][3] = {{id, 0, id},         {id, 8, id + 1},      {id + 1, 0, 1},       {id + 1, 8, id + 2},
                            {id + 2, 0, id},     {id + 2, 8, 3},       {id + 2, 16, id + 5}, {id + 5, 0, id},
                            {id + 5, 8, id + 7}, {id + 5, 16, id + 6}, {id + 6, 0, 1},       {id + 6, 8, id + 4},
                            {id + 6, 16, 2},     {id + 7, 0, 3},       {id + 7, 8, id + 6},  {id + 7, 16, 4},
                            {id + 8, 0, id + 3}, {id + 8, 8, id + 7}};
    q << ";INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES ";
    for (size_t k = 0; k < std::size(words); ++k)
        q << (k ? "," : "") << "(" << words[k][0] << ", 0, " << words[k][1] << ", " << words[k][2] << ", 0, 0)";
    q << ";INSERT INTO ranges (id, process, begin_ns, end_ns, name) VALUES (" << id << ", 1, " << at(0) << ", "
      << at(kStepNs - 1) << ", 'step');";
    return q.str();
}

TraceModel load_run(const std::string& sql) {
    tbdprof::trace::Database db = test_support::schema_database();
    db.exec(sql.c_str());
    return load_model(db);
}

TraceModel autocast_run() {
    std::string sql = header();
    for (int s = 0; s < kSteps; ++s) sql += step(s, 10000 + s * kStepNs);
    return load_run(sql);
}

const Tag& tag_of(const TraceModel& m, const TagResult& r, int64_t id) {
    for (size_t a = 0; a < m.allocations.size(); ++a)
        if (m.allocations[a].id == id) return r.tags[a];
    FAIL("no allocation ", id);
    return r.tags.front();
}

}  // namespace

TEST_CASE("a conversion's source in a writable word is read: the weight and the batch autocast copies") {
    const TraceModel m = autocast_run();
    REQUIRE(!m.pooled);
    CHECK(m.pointer_uses.empty());  // kept for pooled segments only
    IterationSet its;
    const TagResult r = tag_model(m, "", its);
    REQUIRE_EQ(its.iterations.size(), size_t(kSteps));
    // Without the pass the conversion "writes" W first thing in each step: activations.
    CHECK_EQ(tag_of(m, r, 1).category, "weights");
    for (int s = 1; s < kSteps; ++s) {
        const int id = 10 + 10 * s;
        CHECK_EQ(tag_of(m, r, id).category, "input");  // the batch, converted, never written
        CHECK_EQ(tag_of(m, r, id + 4).category, "gradients");
        CHECK_NE(tag_of(m, r, id + 2).category, "weights");  // the step's copy of W is made in the step
    }
}

TEST_CASE("a conversion's result word and the update's writable word are no reads") {
    const TraceModel m = autocast_run();
    size_t conversions = 0, updates = 0;
    for (const WorkItem& w : m.work) {
        if (w.kind != WorkItem::Kind::Kernel || w.library_call != kNone) continue;
        for (const Touch& t : w.touches) {
            const int64_t id = m.allocations[size_t(t.allocation)].id;
            if (w.function == 2) {  // source: W (1) or a batch (id % 10 == 0); result: Xc or Wc
                const bool source = id == 1 || id % 10 == 0;
                CHECK_MESSAGE(t.reads_first == source, "allocation ", id);
                conversions += source;
            } else if (w.function == 3 && id == 1) {
                CHECK_FALSE(t.reads_first);  // the update writes W: its word starts no value, but
                ++updates;                   // its launch writes through no output word either
            }
        }
    }
    CHECK_EQ(conversions, size_t(2 * kSteps));
    CHECK_EQ(updates, size_t(kSteps));
}

TEST_CASE("an update in place through one struct keeps its writes") {
    std::string sql = struct_header();
    for (int s = 0; s < kSteps; ++s) sql += struct_step(s, 10000 + s * kStepNs);
    const TraceModel m = load_run(sql);
    REQUIRE(!m.pooled);
    IterationSet its;
    const TagResult r = tag_model(m, "", its);
    REQUIRE_EQ(its.iterations.size(), size_t(kSteps));
    // The update fills the momenta new in its first launches only: not a conversion. Taken for one,
    // its struct words would read W and T, and nothing would be the update.
    CHECK_EQ(tag_of(m, r, 1).category, "weights");
    CHECK_EQ(tag_of(m, r, 3).category, "weights");  // the table: read beside the rows gathered new
    CHECK_EQ(tag_of(m, r, 2).category, "optimizer_state");
    CHECK_EQ(tag_of(m, r, 4).category, "optimizer_state");
    for (int s = 1; s < kSteps; ++s) {
        const int id = 10 + 10 * s;
        CHECK_EQ(tag_of(m, r, id).category, "input");
        CHECK_EQ(tag_of(m, r, id + 4).category, "gradients");
        CHECK_EQ(tag_of(m, r, id + 6).category, "gradients");
        // D, which the table's backward reads right before the update, is backward's value (its
        // two-kernel life makes it a temporary here), never a gradient the update reads.
        CHECK_NE(tag_of(m, r, id + 7).category, "gradients");
    }
}
