// Autocast-style mixed precision in the what-if (whatif_autocast.h): which requests a caching pool
// gets under autocast, the copies of what the GEMMs read added.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "trace_builder.h"
#include "trace_file.h"
#include "whatif_autocast.h"
#include "whatif_scenarios.h"
#include "whatif_sizes.h"

using namespace tbdprof::analyzer;
using namespace tbdprof::analyzer::whatif;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

PoolTensor tensor(int64_t bytes, int64_t begin_ns, int64_t end_ns, int category, uint8_t role) {
    PoolTensor t;
    t.bytes = bytes;
    t.begin_ns = begin_ns;
    t.end_ns = end_ns;
    t.category = category;
    t.gemm_role = role;
    return t;
}

// One pooled segment of process 0, and two training steps whose updates run at 400-450 and 900-950.
RecordedRun two_steps() {
    RecordedRun run;
    Allocation segment{};
    segment.bytes = 20 * kMiB;
    segment.free_ns = INT64_MAX;
    run.allocations.push_back(segment);
    run.real_count = 1;
    run.update_windows[0] = {{400, 450, 500}, {900, 950, INT64_MAX}};
    return run;
}

}  // namespace

TEST_CASE("autocast copies a weight a GEMM reads once per step, from its first read to its last") {
    const RecordedRun run = two_steps();
    PoolTensor weight = tensor(4 * kMiB, 0, INT64_MAX, kWeights, kGemmRead);
    weight.gemm_reads_ns = {100, 300, 600, 800};  // forward and backward of two steps
    const AutocastRequests out = autocast_requests(run, {weight}, {4 * kMiB}, 0.5);
    REQUIRE(out.tensors.size() == 3);
    CHECK(out.bytes == std::vector<int64_t>{4 * kMiB, 2 * kMiB, 2 * kMiB});
    CHECK(out.tensors[0].end_ns == INT64_MAX);  // the FP32 weight stays
    CHECK(out.tensors[1].begin_ns == 100);
    CHECK(out.tensors[1].end_ns == 300);
    CHECK(out.tensors[2].begin_ns == 600);
    CHECK(out.tensors[2].end_ns == 800);
}

TEST_CASE("autocast releases an FP32 activation a GEMM reads at its cast unless other work uses it after") {
    const RecordedRun run = two_steps();
    // A layer norm's output (FP32) read by a GEMM at 120 and by backward's weight GEMM at 300; a
    // softmax's output read by a GEMM at 130, and by the softmax's backward kernel after.
    PoolTensor norm = tensor(8 * kMiB, 110, 300, kActivations, kGemmRead);
    norm.gemm_reads_ns = {120, 300};
    PoolTensor softmax = tensor(2 * kMiB, 125, 320, kActivations, kGemmRead | kUsedAfterRead);
    softmax.gemm_reads_ns = {130, 310};
    // A GEMM's output (BF16 under autocast) read by the next GEMM: no copy.
    PoolTensor output = tensor(4 * kMiB, 140, 290, kActivations, kGemmWritten | kGemmRead | kLowerPrecision);
    output.gemm_reads_ns = {150, 280};
    const AutocastRequests out = autocast_requests(run, {norm, softmax, output}, {8 * kMiB, 2 * kMiB, 2 * kMiB}, 0.5);
    REQUIRE(out.tensors.size() == 5);
    CHECK(out.tensors[0].end_ns == 120);  // released at the cast
    CHECK(out.tensors[1].end_ns == 320);  // kept: its backward reads it
    CHECK(out.tensors[2].end_ns == 290);
    CHECK(out.bytes == std::vector<int64_t>{8 * kMiB, 2 * kMiB, 2 * kMiB, 4 * kMiB, kMiB});
    CHECK(out.tensors[3].begin_ns == 120);
    CHECK(out.tensors[3].end_ns == 300);
    CHECK(out.tensors[4].begin_ns == 130);
    CHECK(out.tensors[4].end_ns == 310);
}

TEST_CASE(
    "autocast halves lower-precision activations and temporaries, never weights, gradients or library workspaces") {
    CHECK(autocast_request_multiplier(kActivations, false, kGemmWritten | kLowerPrecision, 0.5) == 0.5);
    CHECK(autocast_request_multiplier(kWorkspace, false, kLowerPrecision, 0.5) == 0.5);
    CHECK(autocast_request_multiplier(kWorkspace, true, kLowerPrecision, 0.5) == 1.0);
    CHECK(autocast_request_multiplier(kActivations, false, kGemmRead, 0.5) == 1.0);  // FP32, its copy apart
    CHECK(autocast_request_multiplier(kGradients, false, kGemmWritten, 0.5) == 1.0);
    // Without the pool's requests: a weight a GEMM reads carries its copy, an FP32 tensor used after
    // its cast too, one released at the cast only the copy.
    CHECK(autocast_multiplier(kWeights, false, kGemmRead, 0.5) == 1.5);
    CHECK(autocast_multiplier(kActivations, false, kGemmRead | kUsedAfterRead, 0.5) == 1.5);
    CHECK(autocast_multiplier(kActivations, false, kGemmRead, 0.5) == 0.5);
    CHECK(autocast_multiplier(kActivations, false, 0, 0.5) == 1.0);
}

TEST_CASE("a by-value struct's stale word does not decide the precision of what a kernel makes") {
    // One 20 MiB pooled segment at address 4096: a GEMM writes A (+0) at 100; a kernel made B (+4 MiB,
    // FP32) at 50; an elementwise kernel makes C (+8 MiB) at 200 from A, its words 0 and 8. Its word 16
    // names B in that launch only: of the function's two launches, one holds a pointer there (a stale
    // word of an earlier operation), both in words 0 and 8 (operands). C is the GEMM output's type.
    tbdtest::TraceBuilder t("whatif_autocast_stale_word.sqlite");
    const int64_t segment = t.allocation(20 * kMiB, 0, std::nullopt);
    const int64_t call = t.library_call(1e6, std::nullopt, 0, "cublasGemmEx", 100);  // a_type CUDA_R_32F
    t.exec("UPDATE library_calls SET c = 4096, c_allocation = " + std::to_string(segment) +
           " WHERE id = " + std::to_string(call));
    const int64_t norm = t.kernel(50, 1, 2);
    const int64_t add = t.kernel(200, 1, 1);
    const int64_t again = t.kernel(300, 1, 1);
    auto word = [&](int64_t kernel, int64_t param_word, int64_t offset) {
        t.exec("INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) VALUES (" +
               std::to_string(kernel) + ", 0, " + std::to_string(param_word) + ", " + std::to_string(segment) + ", " +
               std::to_string(offset) + ", 0)");
    };
    word(norm, 0, 4 * kMiB);
    word(add, 0, 8 * kMiB);
    word(add, 8, 0);
    word(add, 16, 4 * kMiB);  // stale
    word(again, 0, 8 * kMiB);
    word(again, 8, 0);
    const std::string path = t.finish(1000);
    RecordedRun run;
    Allocation a{};
    a.id = segment;
    a.bytes = 20 * kMiB;
    a.free_ns = INT64_MAX;
    a.real = a.by_subrange = true;
    a.category = kActivations;
    run.allocations = {a};
    run.real_count = 1;
    run.pool_readings.released = {tensor(kMiB, 90, 400, kActivations, 0), tensor(kMiB, 50, 400, kActivations, 0),
                                  tensor(kMiB, 200, 400, kActivations, 0)};
    run.pool_readings.released[1].offset = 4 * kMiB;
    run.pool_readings.released[2].offset = 8 * kMiB;
    read_trace(path, [&](const TraceFile& trace) { mark_gemm_operands(trace, run); });
    const std::vector<PoolTensor>& marked = run.pool_readings.released;
    CHECK((marked[0].gemm_role & kLowerPrecision) != 0);  // the GEMM's output
    CHECK((marked[1].gemm_role & kLowerPrecision) == 0);  // made from nothing in the lower precision
    CHECK((marked[2].gemm_role & kLowerPrecision) != 0);  // from A alone: B's word was stale
}

TEST_CASE("under autocast a bound asks for the least its pool serves scaled as its tensor is") {
    // A 20 MiB large-pool segment whose last tensor runs to its end (its size unknown): it was requested
    // with more than 1 MiB. Lower precision halves it, the batch halved too quarters it: the least is
    // scaled with it (a small-pool request may serve it), not kept at the recorded least.
    RecordedRun run;
    Allocation a{};
    a.bytes = 20 * kMiB;
    a.free_ns = INT64_MAX;
    a.real = a.by_subrange = true;
    a.category = a.listed_category = kActivations;
    run.allocations = {a};
    run.real_count = 1;
    PoolTensor bound = tensor(2 * kMiB, 100, 200, kActivations, kGemmWritten | kLowerPrecision);
    bound.offset = 18 * kMiB;
    bound.bound = true;
    bound.least_bytes = kMiB + 1;
    Model model;
    model.recorded_precision = StoragePrecision::fp32;
    ScenarioSpec bf16;
    bf16.precision = StoragePrecision::bf16;
    bf16.autocast = true;
    std::vector<int64_t> pool_bytes;
    scenario_bytes(run, model, bf16, {bound}, pool_bytes);
    CHECK(pool_bytes == std::vector<int64_t>{(kMiB + 1 + 1) / 2});
    bf16.batch_scale = 0.5;
    scenario_bytes(run, model, bf16, {bound}, pool_bytes);
    CHECK(pool_bytes == std::vector<int64_t>{kMiB / 4});
    // The batch alone keeps the recorded least (its predictions as measured before).
    ScenarioSpec batch;
    batch.batch_scale = 0.5;
    scenario_bytes(run, model, batch, {bound}, pool_bytes);
    CHECK(pool_bytes == std::vector<int64_t>{kMiB + 1});
}
