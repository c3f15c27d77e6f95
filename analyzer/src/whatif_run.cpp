// Reading the recorded run of a memory what-if from its trace (whatif_run.h).
#include "whatif_run.h"

#include <algorithm>
#include <unordered_set>

#include "analysis_parts.h"
#include "whatif_autocast.h"

namespace tbdprof::analyzer::whatif {

namespace {

std::vector<CoverageSpan> coverage_of(std::vector<std::pair<int64_t, int64_t>> extents, std::vector<int> categories,
                                      int64_t segment_bytes) {
    std::vector<int64_t> edges{0, segment_bytes};
    for (auto& [offset, bytes] : extents) {
        offset = std::clamp<int64_t>(offset, 0, segment_bytes);
        bytes = std::clamp<int64_t>(bytes, 0, segment_bytes - offset);
        edges.push_back(offset);
        edges.push_back(offset + bytes);
    }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    std::vector<unsigned> masks(edges.size(), 0);
    for (size_t r = 0; r < extents.size(); ++r) {
        const auto first = std::lower_bound(edges.begin(), edges.end(), extents[r].first) - edges.begin();
        const auto last =
            std::lower_bound(edges.begin(), edges.end(), extents[r].first + extents[r].second) - edges.begin();
        for (auto p = first; p < last; ++p) masks[static_cast<size_t>(p)] |= 1u << categories[r];
    }
    std::vector<CoverageSpan> spans;
    for (size_t p = 0; p + 1 < edges.size(); ++p) spans.push_back({edges[p + 1] - edges[p], masks[p]});
    return spans;
}

// Which bytes of each segment counted by sub-ranges held which categories (allocation_subranges).
void read_coverage(const TraceFile& trace, RecordedRun& run) {
    std::unordered_map<int64_t, size_t> segment_index;
    for (size_t i = 0; i < run.real_count; ++i)
        if (run.allocations[i].by_subrange) segment_index[run.allocations[i].id] = i;
    if (segment_index.empty()) return;
    std::map<size_t, std::pair<std::vector<std::pair<int64_t, int64_t>>, std::vector<int>>> by_segment;
    trace::RowReader<trace::SubrangeRow> rows(trace.db, {.tag_texts = false});
    for (trace::SubrangeRow row; rows.next(row);) {
        auto found = segment_index.find(row.allocation);
        if (found == segment_index.end() || row.bytes <= 0) continue;
        auto& [extents, categories] = by_segment[found->second];
        extents.emplace_back(row.offset, row.bytes);
        categories.push_back(category_index(row.category));
    }
    for (auto& [index, parts] : by_segment)
        run.coverage[index] =
            coverage_of(std::move(parts.first), std::move(parts.second), run.allocations[index].bytes);
}

// The storage precision of the GEMM operands most calls used (cudaDataType: 0 R_32F, 2 R_16F, 14 R_16BF).
std::optional<StoragePrecision> gemm_precision(const TraceFile& trace) {
    if (!trace::has_table(trace.db, "library_calls")) return std::nullopt;
    std::map<StoragePrecision, int64_t> counts;
    trace::RowReader<trace::LibraryCallRow> calls(trace.db);
    for (trace::LibraryCallRow row; calls.next(row);) {
        if (!row.a_type) continue;
        if (*row.a_type == 0) ++counts[StoragePrecision::fp32];
        if (*row.a_type == 2) ++counts[StoragePrecision::fp16];
        if (*row.a_type == 14) ++counts[StoragePrecision::bf16];
    }
    if (counts.empty()) return std::nullopt;
    return std::max_element(counts.begin(), counts.end(), [](auto& x, auto& y) { return x.second < y.second; })->first;
}

// ZeRO's communication buffers, zero bytes until a scenario fills them: one per rank (a process that
// allocated weights), from its weights' first allocation on, on its device; one for the run when no
// allocation is tagged weights.
void add_comm_buffers(RecordedRun& run, const Allocation& template_buffer) {
    std::map<int64_t, Allocation> by_process;
    for (const Allocation& a : run.allocations) {
        if (a.bytes <= 0 || (a.real ? a.listed_category : a.category) != kWeights) continue;
        const auto found = by_process.find(a.process);
        if (found == by_process.end() || a.alloc_ns < found->second.alloc_ns) {
            Allocation buffer = template_buffer;
            buffer.alloc_ns = a.alloc_ns;
            buffer.device = a.device;
            buffer.process = a.process;
            by_process[a.process] = buffer;
        }
    }
    if (by_process.empty()) by_process[template_buffer.process] = template_buffer;
    for (const auto& [process, buffer] : by_process) {
        run.comm_buffer_indices.push_back(run.allocations.size());
        run.allocations.push_back(buffer);
    }
}

// The FP32 master copies a precision change may fill, zero bytes until then: one per rank (a process
// with an allocation tagged weights), from its first one (id order) on, on its device, as each rank
// keeps a master copy of the parameters it holds; one for the run when no allocation is tagged weights.
void add_master_copies(RecordedRun& run, const Allocation& template_master) {
    std::map<int64_t, Allocation> by_process;
    for (const Allocation& a : run.allocations) {
        if (!a.real || a.listed_category != kWeights || by_process.contains(a.process)) continue;
        Allocation master = template_master;
        master.alloc_ns = a.alloc_ns;
        master.device = a.device;
        master.process = a.process;
        by_process[a.process] = master;
    }
    run.master_copy_per_rank = !by_process.empty();
    if (by_process.empty()) by_process[template_master.process] = template_master;
    for (const auto& [process, master] : by_process) {
        run.master_copy_indices.push_back(run.allocations.size());
        run.allocations.push_back(master);
    }
}

// A GEMM operand's bytes: as recorded (library_calls.a_bytes, b_bytes), else from the shape (op(A) is
// m x k, op(B) k x n) and the element type; 0 when unknown or not one matrix (batched calls).
int64_t gemm_operand_bytes(const trace::LibraryCallRow& row, bool a) {
    const trace::OptionalInt recorded = a ? row.a_bytes : row.b_bytes;
    if (recorded && *recorded > 0) return *recorded;
    if (row.op != "gemm" || !row.m || !row.n || !row.k) return 0;
    const trace::OptionalInt type = a ? row.a_type : row.b_type;
    const int64_t element = !type ? 0 : *type == 0 ? 4 : *type == 1 ? 8 : (*type == 2 || *type == 14) ? 2 : 0;
    return (a ? *row.m : *row.n) * *row.k * element;
}

// By process: one layer's weights as the library calls read them, the largest operand (a, b) of one
// call but a collective that lies in an allocation tagged weights (a GEMM reads one layer's weight
// matrix, even from a flat buffer holding every layer's).
std::map<int64_t, int64_t> layer_weight_bytes(const TraceFile& trace, const RecordedRun& run) {
    std::map<int64_t, int64_t> out;
    if (!trace::has_table(trace.db, "library_calls")) return out;
    std::unordered_set<int64_t> weights;  // allocations tagged weights whole
    for (size_t i = 0; i < run.real_count; ++i)
        if (!run.allocations[i].by_subrange && run.allocations[i].category == kWeights)
            weights.insert(run.allocations[i].id);
    trace::RowReader<trace::LibraryCallRow> calls(trace.db);
    for (trace::LibraryCallRow row; calls.next(row);) {
        if (row.op.starts_with("nccl")) continue;  // a collective carries shards and buckets, not a layer
        for (const bool a : {true, false}) {
            const trace::OptionalInt allocation = a ? row.a_allocation : row.b_allocation;
            const int64_t bytes = allocation && weights.contains(*allocation) ? gemm_operand_bytes(row, a) : 0;
            if (bytes > 0) out[row.process] = std::max(out[row.process], bytes);
        }
    }
    return out;
}

// Each process's optimizer phases (training iterations only), with the next iteration's begin.
std::map<int64_t, std::vector<UpdateWindow>> read_update_windows(const TraceFile& trace) {
    std::map<int64_t, std::vector<UpdateWindow>> out;
    if (!trace::has_table(trace.db, "phases") || !trace::has_table(trace.db, "iterations")) return out;
    std::map<int64_t, trace::IterationRow> iterations;  // by id
    std::map<int64_t, std::vector<int64_t>> begins;     // by process: every iteration's begin
    trace::RowReader<trace::IterationRow> its(trace.db);
    for (trace::IterationRow row; its.next(row);) {
        begins[row.process].push_back(row.begin_ns);
        if (row.training()) iterations[row.id] = row;
    }
    for (auto& [process, list] : begins) std::sort(list.begin(), list.end());
    trace::RowReader<trace::PhaseRow> phases(trace.db);
    for (trace::PhaseRow row; phases.next(row);) {
        const auto it = iterations.find(row.iteration);
        if (row.kind != "optimizer" || it == iterations.end()) continue;
        const auto& list = begins[it->second.process];
        const auto next = std::upper_bound(list.begin(), list.end(), it->second.begin_ns);
        out[it->second.process].push_back({row.begin_ns, row.end_ns, next == list.end() ? INT64_MAX : *next});
    }
    for (auto& [process, windows] : out)
        std::sort(windows.begin(), windows.end(), [](auto& a, auto& b) { return a.begin_ns < b.begin_ns; });
    return out;
}

}  // namespace

bool is_update_temporary(const RecordedRun& run, int64_t process, int64_t begin_ns, int64_t end_ns) {
    const auto found = run.update_windows.find(process);
    if (found == run.update_windows.end()) return false;
    const auto& windows = found->second;
    auto w = std::upper_bound(windows.begin(), windows.end(), begin_ns,
                              [](int64_t t, const UpdateWindow& u) { return t < u.begin_ns; });
    if (w == windows.begin()) return false;
    --w;
    return begin_ns <= w->end_ns && end_ns < w->next_ns;
}

RecordedRun read_run(const std::string& path, bool for_checkpoint) {
    return read_trace(path, [for_checkpoint](TraceFile& trace) {
        RecordedRun run;
        int64_t absurd = 0;
        run.allocations = read_device_allocations(trace, std::nullopt, absurd);
        run.real_count = run.allocations.size();
        add_subranges(trace, run.allocations);
        read_coverage(trace, run);
        run.pool_readings = read_pool_tensors(trace, run.allocations, run.real_count);
        mark_gemm_operands(trace, run);
        Allocation master{};  // filled only by a precision change that needs an FP32 master copy
        master.id = -1;
        master.free_ns = INT64_MAX;
        master.stack = -1;
        master.category = master.listed_category = kOptimizer;
        master.real = false;
        for (const Allocation& a : run.allocations)
            if (a.real && a.listed_category == kWeights) {
                master.alloc_ns = a.alloc_ns;
                master.device = a.device;
                break;
            }
        add_master_copies(run, master);
        Allocation buffers = master;
        buffers.category = buffers.listed_category = static_cast<int>(trace::Category::other);
        add_comm_buffers(run, buffers);
        run.layer_weight_bytes = layer_weight_bytes(trace, run);
        run.update_windows = read_update_windows(trace);
        trace::RowReader<trace::DeviceRow> devices(trace.db);
        for (trace::DeviceRow row; devices.next(row);) {
            if (row.memory_bytes > 0) run.device_memory[row.id] = row.memory_bytes;
            if (run.device_name.empty()) run.device_name = std::string(row.name);
        }
        run.iterations = detect_iterations(trace, "").spans.size();
        run.whole_pooled = whole_pooled_allocations(trace);
        run.gemm_precision = gemm_precision(trace);
        bool tagged = false;
        for (size_t i = 0; i < run.real_count; ++i) tagged = tagged || run.allocations[i].listed_category != kUntagged;
        run.tag_facts = read_tag_check_facts(trace, static_cast<int64_t>(run.iterations), tagged);
        if (for_checkpoint) run.checkpoint_facts = read_checkpoint_facts(trace, run.allocations, run.real_count);
        return run;
    });
}

// The granularity of the program's allocator. Memory a library allocated for itself (rule
// library-handle-workspace: cuBLAS's 1 KiB and 128 KiB handle buffers, cuDNN's 25,344 B) comes from
// the driver, not from that allocator, and keeps its size in every scenario: it does not count, or a
// caching pool's 2 MiB segments would read as 512 B sizes and the pool replay would not apply.
int64_t granularity_of(const RecordedRun& run) {
    if (run.real_count < 4) return 1;
    for (int64_t g : {int64_t{2} << 20, int64_t{512}}) {
        bool all = true;
        for (size_t i = 0; i < run.real_count && all; ++i)
            all = run.allocations[i].bytes % g == 0 || run.allocations[i].rule == "library-handle-workspace";
        if (all) return g;
    }
    return 1;
}

}  // namespace tbdprof::analyzer::whatif
