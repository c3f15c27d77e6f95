// Which tensors the GEMMs read and write, and which would run in the lower precision under autocast
// (whatif_autocast.h, mark_gemm_operands): read from the trace's library calls and kernel arguments.
#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "tbdprof/trace/tables.h"
#include "whatif_autocast.h"

namespace tbdprof::analyzer::whatif {

namespace {

// One access of a place by one piece of work: a GEMM's operand, or a kernel's pointer argument.
struct Touch {
    int64_t ns = 0;    // host time: the call's begin, the kernel's launch
    int64_t work = 0;  // the library call's id, or -1 - the kernel's id
    int64_t allocation = 0;
    int64_t offset = 0;       // from the allocation's start
    uint8_t role = 0;         // kGemmRead or kGemmWritten; 0: a kernel outside the library calls
    bool keeps_fp32 = false;  // a kernel of an op autocast runs in FP32
};

// Kernels of the ops autocast runs in FP32 whatever their inputs (PyTorch's documented list:
// softmax, log_softmax, layer_norm, group_norm, norm, the losses, sum, prod, cumsum, exp, log, pow,
// reciprocal, rsqrt, ...), by the op's word in the kernel's name. A kernel matched wrongly makes its
// outputs FP32: the prediction errs larger, never smaller.
bool keeps_fp32(std::string name) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char* word : {"softmax", "norm", "loss", "sum", "prod", "exp", "log", "pow", "reciprocal", "rsqrt"})
        if (name.find(word) != std::string::npos) return true;
    return false;
}

std::vector<Touch> read_touches(const TraceFile& trace) {
    std::vector<Touch> out;
    if (!trace::has_table(trace.db, "library_calls") || !trace::has_column(trace.db, "library_calls", "a_allocation"))
        return out;
    std::unordered_map<int64_t, int64_t> address;
    trace::Statement addresses(trace.db, "SELECT id, address FROM allocations");
    while (addresses.step()) address[addresses.column_int(0)] = addresses.column_int(1);
    // Library calls with operand types: the GEMMs (cuBLAS, and cuDNN's convolutions).
    trace::RowReader<trace::LibraryCallRow> calls(trace.db);
    for (trace::LibraryCallRow row; calls.next(row);) {
        if (!row.a_type) continue;
        const std::array<std::pair<trace::OptionalInt, trace::OptionalInt>, 3> operands{
            {{row.a_allocation, row.a}, {row.b_allocation, row.b}, {row.c_allocation, row.c}}};
        for (size_t operand = 0; operand < operands.size(); ++operand) {
            const auto& [allocation, pointer] = operands[operand];
            if (!allocation || !pointer) continue;
            const auto base = address.find(*allocation);
            if (base == address.end()) continue;
            out.push_back(
                {row.begin_ns, row.id, base->first, *pointer - base->second, operand == 2 ? kGemmWritten : kGemmRead});
        }
    }
    if (out.empty() || !trace::has_table(trace.db, "kernel_allocations")) return out;
    // Only the argument words that hold a device pointer in every launch of their function: an
    // operand's word does; a by-value struct's unfilled words hold whatever the host stack held before
    // (stale pointers of earlier operations, docs/tagging.md "Stale words"), in some launches only.
    // Taken as inputs they made outputs FP32 (or a tensor's first use) by what the kernel never read.
    trace::Statement kernels(
        trace.db,
        "WITH launches AS (SELECT function, COUNT(*) AS n FROM kernels GROUP BY function), "
        "words AS (SELECT k.function, e.param, e.param_word, COUNT(*) AS n FROM kernel_allocations e "
        "JOIN kernels k ON k.id = e.kernel GROUP BY k.function, e.param, e.param_word) "
        "SELECT e.allocation, e.offset, k.start_ns - COALESCE(k.queued_ns, 0), k.id, s.text "
        "FROM kernel_allocations e JOIN kernels k ON k.id = e.kernel JOIN functions f ON f.id = k.function "
        "JOIN strings s ON s.id = f.name JOIN launches l ON l.function = k.function "
        "JOIN words w ON w.function = k.function AND w.param = e.param AND w.param_word = e.param_word "
        "WHERE k.library_call IS NULL AND w.n = l.n");
    std::unordered_map<std::string, bool> fp32_names;
    while (kernels.step()) {
        const std::string name = kernels.column_text(4);
        auto known = fp32_names.find(name);
        if (known == fp32_names.end()) known = fp32_names.emplace(name, keeps_fp32(name)).first;
        out.push_back({kernels.column_int(2), -1 - kernels.column_int(3), kernels.column_int(0), kernels.column_int(1),
                       0, known->second});
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Touch& x, const Touch& y) { return x.ns != y.ns ? x.ns < y.ns : x.work < y.work; });
    return out;
}

// The tensors (a reading of the pool, or the whole allocations as tensors of their own) and where
// each segment's lie.
struct Target {
    std::vector<PoolTensor>& tensors;
    std::unordered_map<size_t, std::vector<size_t>> of_segment;
    std::vector<int64_t> first_read_ns;
    std::vector<bool> seen;
    explicit Target(std::vector<PoolTensor>& t) : tensors(t), first_read_ns(t.size(), INT64_MAX), seen(t.size()) {
        for (size_t i = 0; i < t.size(); ++i) of_segment[t[i].segment].push_back(i);
    }
    void holding(size_t head, int64_t offset, int64_t ns, std::vector<size_t>& out) const {
        const auto found = of_segment.find(head);
        if (found == of_segment.end()) return;
        for (const size_t i : found->second) {
            const PoolTensor& t = tensors[i];
            if (offset >= t.offset && offset < t.offset + t.bytes && ns >= t.begin_ns && ns <= t.end_ns)
                out.push_back(i);
        }
    }
};

bool batch_sized(const PoolTensor& t) {
    return !t.library_workspace && (t.category == kActivations || t.category == kWorkspace);
}

// One piece of work's touches of `target` (`touched`: tensor, touch pairs): GEMM roles, reads after
// a GEMM's, and the precision of what a kernel makes: a tensor a kernel makes (its first use) runs in
// the lower precision when the kernel reads such a tensor, no FP32 activation or temporary, and is
// no op autocast keeps in FP32 (weights, input and gradients are not its inputs' precision: autocast
// casts weights for the GEMMs, and an elementwise op with an FP32 weight keeps its input's type).
void apply_work(Target& target, const std::vector<std::pair<size_t, const Touch*>>& touched) {
    bool half_input = false, fp32_input = false, fp32_op = false;
    for (const auto& [i, touch] : touched) {
        PoolTensor& t = target.tensors[i];
        fp32_op = fp32_op || touch->keeps_fp32;
        if (touch->role != 0) {
            t.gemm_role |= touch->role;
            if (touch->role == kGemmWritten && batch_sized(t)) t.gemm_role |= kLowerPrecision;
            if (touch->role == kGemmRead) {
                target.first_read_ns[i] = std::min(target.first_read_ns[i], touch->ns);
                t.gemm_reads_ns.push_back(touch->ns);
            }
        } else if (touch->ns > target.first_read_ns[i]) {
            t.gemm_role |= kUsedAfterRead;
        }
        if (target.seen[i] && batch_sized(t) && touch->role == 0) {
            half_input = half_input || (t.gemm_role & kLowerPrecision);
            fp32_input = fp32_input || !(t.gemm_role & kLowerPrecision);
        }
    }
    const bool kernel = !touched.empty() && touched.front().second->role == 0;
    for (const auto& [i, touch] : touched) {
        PoolTensor& t = target.tensors[i];
        if (kernel && !target.seen[i] && batch_sized(t) && half_input && !fp32_input && !fp32_op)
            t.gemm_role |= kLowerPrecision;
    }
    for (const auto& [i, touch] : touched) target.seen[i] = true;
}

}  // namespace

void mark_gemm_operands(const TraceFile& trace, RecordedRun& run) {
    run.gemm_roles.assign(run.real_count, 0);
    const std::vector<Touch> touches = read_touches(trace);
    if (touches.empty()) return;
    std::vector<PoolTensor> whole;  // the allocations not counted by their tensors, as tensors
    std::unordered_map<int64_t, size_t> index_of;
    for (size_t i = 0; i < run.real_count; ++i) {
        const Allocation& a = run.allocations[i];
        index_of[a.id] = i;
        PoolTensor t;
        t.segment = i;
        t.bytes = a.by_subrange ? 0 : a.bytes;
        t.begin_ns = a.alloc_ns;
        t.end_ns = a.free_ns;
        t.category = a.category;
        t.library_workspace = a.rule == "library-workspace" || a.rule == "library-handle-workspace";
        whole.push_back(t);
    }
    Target released(run.pool_readings.released), held(run.pool_readings.held), allocations(whole);
    const MappedSegments& mapped = run.pool_readings.mapped;
    std::vector<std::pair<size_t, const Touch*>> touched[3];
    std::vector<size_t> found;
    Target* targets[3] = {&released, &held, &allocations};
    for (size_t k = 0; k < touches.size(); ++k) {
        const Touch& touch = touches[k];
        const auto index = index_of.find(touch.allocation);
        if (index != index_of.end()) {
            size_t head = index->second;
            int64_t offset = touch.offset;
            if (const auto place = mapped.place.find(head); place != mapped.place.end()) {
                head = place->second.head;
                offset += place->second.offset;
            }
            for (int r = 0; r < 3; ++r) {
                found.clear();
                if (r == 2)
                    targets[r]->holding(index->second, touch.offset, touch.ns, found);
                else
                    targets[r]->holding(head, offset, touch.ns, found);
                for (const size_t i : found) touched[r].push_back({i, &touch});
            }
        }
        if (k + 1 < touches.size() && touches[k + 1].work == touch.work) continue;
        for (int r = 0; r < 3; ++r) {
            apply_work(*targets[r], touched[r]);
            touched[r].clear();
        }
    }
    for (size_t i = 0; i < run.real_count; ++i) run.gemm_roles[i] = whole[i].gemm_role;
}

}  // namespace tbdprof::analyzer::whatif
