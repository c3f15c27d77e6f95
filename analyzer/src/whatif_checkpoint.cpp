// Activation checkpointing for the memory what-if (whatif_checkpoint.h, docs/whatif.md).
//
// A layer, as read from the trace: a forward library call (a GEMM) with a weights operand, and every
// kernel after it up to the next such call; a bias add or activation function joins the GEMM before
// it. Segments are K consecutive layers; as torch.utils.checkpoint.checkpoint_sequential does, the
// last segment runs as recorded, and each other keeps only the activations a later segment's forward
// reads (its output). Its other saved activations (allocated by the end of forward, freed after it,
// read in backward) are freed after their last forward access and allocated again at the first
// backward access of any of them: the recomputation of that segment, which then lives as the
// recorded activations did.
#include "whatif_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analysis_parts.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

constexpr int kWeights = static_cast<int>(trace::Category::weights);
constexpr int kActivations = static_cast<int>(trace::Category::activations);

// Training iterations of `process` (every process when none): one rank's forward is never paired
// with another rank's backward.
bool counts(const trace::IterationRow& row, std::optional<int64_t> process) {
    return row.training() && (!process || row.process == *process);
}

// One pass over the iterations (which are training ones, their mean length) and one over the
// phases (each training iteration's forward and backward).
void read_phases(const TraceFile& trace, CheckpointFacts& facts) {
    const std::optional<int64_t> process = detect_iterations(trace, "").process;
    std::unordered_set<int64_t> training;
    int64_t total_ns = 0;
    trace::RowReader<trace::IterationRow> iterations(trace.db);
    for (trace::IterationRow row; iterations.next(row);)
        if (counts(row, process)) training.insert(row.id), total_ns += row.end_ns - row.begin_ns;
    facts.iteration_duration_ns = training.empty() ? 0 : total_ns / static_cast<int64_t>(training.size());
    std::map<int64_t, std::pair<int64_t, int64_t>> forward_by_iteration, backward_by_iteration;
    trace::RowReader<trace::PhaseRow> phases(trace.db);
    for (trace::PhaseRow row; phases.next(row);) {
        if (!training.count(row.iteration)) continue;
        if (row.kind == "forward") forward_by_iteration[row.iteration] = {row.begin_ns, row.end_ns};
        if (row.kind == "backward") backward_by_iteration[row.iteration] = {row.begin_ns, row.end_ns};
    }
    std::vector<std::pair<int64_t, int64_t>> backward;
    for (const auto& [iteration, span] : backward_by_iteration) backward.push_back(span);
    // Pair each forward with the first backward that begins after it ends.
    for (const auto& entry : forward_by_iteration) {
        const std::pair<int64_t, int64_t>& f = entry.second;  // not a structured binding: clang 14 cannot capture one
        auto b =
            std::find_if(backward.begin(), backward.end(), [&](const auto& span) { return span.first >= f.second; });
        if (b != backward.end()) {
            facts.forward.push_back(f);
            facts.backward.push_back(*b);
        }
    }
}

}  // namespace

namespace {

// The device addresses of the allocations counted by their sub-ranges (id -> address).
std::unordered_map<int64_t, int64_t> segment_addresses(const TraceFile& trace,
                                                       const std::unordered_map<int64_t, size_t>& segment_index) {
    std::unordered_map<int64_t, int64_t> out;
    trace::Statement rows(trace.db, "SELECT id, address FROM allocations");
    while (rows.step())
        if (segment_index.count(rows.column_int(0))) out[rows.column_int(0)] = rows.column_int(1);
    return out;
}

// A library call's operands a, b, c as touches: of whole allocations, or inside segments.
void add_call_touches(const TraceFile& trace, const std::unordered_map<int64_t, size_t>& index_of,
                      const std::unordered_map<int64_t, size_t>& segment_index, CheckpointFacts& facts) {
    const std::unordered_map<int64_t, int64_t> base = segment_addresses(trace, segment_index);
    trace::RowReader<trace::LibraryCallRow> calls(trace.db);
    for (trace::LibraryCallRow row; calls.next(row);)
        for (const auto& [operand, address, writes] :
             {std::tuple{row.a_allocation, row.a, false}, std::tuple{row.b_allocation, row.b, false},
              std::tuple{row.c_allocation, row.c, true}}) {
            if (!operand) continue;
            if (const auto index = index_of.find(*operand); index != index_of.end())
                facts.touches.push_back({row.begin_ns, index->second, row.id, writes, true});
            const auto segment = segment_index.find(*operand);
            const auto start = base.find(*operand);
            if (segment != segment_index.end() && start != base.end() && address)
                facts.segment_touches.push_back(
                    {row.begin_ns, segment->second, *address - start->second, row.id, writes, true});
        }
}

}  // namespace

CheckpointFacts read_checkpoint_facts(const TraceFile& trace, const std::vector<Allocation>& allocations,
                                      size_t real_count) {
    CheckpointFacts facts;
    if (!trace::has_table(trace.db, "phases")) return facts;
    read_phases(trace, facts);
    if (facts.forward.empty()) return facts;
    std::unordered_map<int64_t, size_t> index_of, segment_index;
    for (size_t i = 0; i < real_count; ++i)
        (allocations[i].by_subrange ? segment_index : index_of)[allocations[i].id] = i;
    // Kernels: host launch time (device start less the queueing delay), device duration.
    std::unordered_map<int64_t, std::pair<int64_t, int64_t>> kernel_launch;  // id -> (launch, library call)
    trace::RowReader<trace::KernelRow> kernels(trace.db);
    for (trace::KernelRow row; kernels.next(row);) {
        const int64_t launch = row.start_ns - row.queued_ns.value_or(0);
        kernel_launch[row.id] = {launch, row.library_call.value_or(-1)};
        facts.kernels.push_back({launch, row.duration_ns.value_or(0), row.library_call.value_or(-1)});
    }
    if (trace::has_table(trace.db, "kernel_allocations")) {
        trace::RowReader<trace::KernelEdgeRow> edges(trace.db);
        for (trace::KernelEdgeRow row; edges.next(row);) {
            const auto kernel = kernel_launch.find(row.kernel);
            facts.kernel_accesses = true;
            if (kernel == kernel_launch.end()) continue;
            const auto [launch, call] = kernel->second;
            if (const auto index = index_of.find(row.allocation); index != index_of.end())
                facts.touches.push_back({launch, index->second, call, !row.read_only});
            if (const auto segment = segment_index.find(row.allocation); segment != segment_index.end())
                facts.segment_touches.push_back({launch, segment->second, row.offset, call, !row.read_only});
        }
    }
    add_call_touches(trace, index_of, segment_index, facts);
    auto by_time = [](const auto& x, const auto& y) { return x.trace_ns < y.trace_ns; };
    std::stable_sort(facts.touches.begin(), facts.touches.end(), by_time);
    std::stable_sort(facts.segment_touches.begin(), facts.segment_touches.end(), by_time);
    std::sort(facts.kernels.begin(), facts.kernels.end(),
              [](const TimedKernel& x, const TimedKernel& y) { return x.launch_ns < y.launch_ns; });
    return facts;
}

namespace checkpoint_detail {

int ForwardLayers::layer_at(int64_t time) const {
    const auto after = std::upper_bound(starts.begin(), starts.end(), time);
    return std::max(0, static_cast<int>(after - starts.begin()) - 1);
}

double segment_kernel_ns(const CheckpointFacts& facts, const ForwardLayers& layers, Span forward, int segment,
                         int segment_layers, const RecomputeCut& cut) {
    double ns = 0;
    auto first = std::lower_bound(facts.kernels.begin(), facts.kernels.end(), forward.first,
                                  [](const TimedKernel& k, int64_t time) { return k.launch_ns < time; });
    for (auto k = first; k != facts.kernels.end() && k->launch_ns <= forward.second; ++k) {
        if (layers.starts.empty() || k->launch_ns < layers.starts.front()) continue;
        if (layers.layer_at(k->launch_ns) / segment_layers != segment) continue;
        if (k->launch_ns <= cut.cutoff_ns || cut.writer_calls.count(k->library_call))
            ns += static_cast<double>(k->duration_ns);
    }
    return ns;
}

}  // namespace checkpoint_detail

namespace {

using checkpoint_detail::ForwardLayers;
using checkpoint_detail::RecomputeCut;
using checkpoint_detail::Span;

struct AccessSpan {
    int first_layer = 0, last_layer = 0;  // forward
    int64_t last_forward_ns = 0;
    int64_t first_backward_ns = INT64_MAX;
};

// A layer starts at each forward library call with a weights operand: a whole allocation tagged
// weights, or (with a caching pool) a weights tensor inside a segment.
ForwardLayers read_layers(const CheckpointFacts& facts, const std::vector<Allocation>& allocations, Span forward,
                          const PooledTensors* pooled) {
    ForwardLayers layers;
    std::vector<std::pair<int64_t, int64_t>> starts;  // (time, library call)
    int64_t last_call = -1;
    for (const AllocationTouch& t : facts.touches) {
        if (t.trace_ns < forward.first || t.trace_ns > forward.second) continue;
        if (t.library_call < 0 || t.library_call == last_call || allocations[t.allocation].category != kWeights)
            continue;
        starts.emplace_back(t.trace_ns, t.library_call);
        last_call = t.library_call;
    }
    if (pooled) checkpoint_detail::add_pooled_layer_starts(facts, *pooled, forward, starts);
    checkpoint_detail::move_layer_starts_to_cuts(facts, allocations, pooled, forward, starts);
    for (const auto& start : starts) layers.starts.push_back(start.first);
    return layers;
}

// Per allocation touched in this iteration: the layers its forward accesses fall in, its last
// forward access and first backward one.
std::unordered_map<size_t, AccessSpan> access_spans(const CheckpointFacts& facts, const ForwardLayers& layers,
                                                    Span forward, Span backward) {
    std::unordered_map<size_t, AccessSpan> spans;
    for (const AllocationTouch& t : facts.touches) {
        if (t.trace_ns >= forward.first && t.trace_ns <= forward.second) {
            const int layer = layers.layer_at(t.trace_ns);
            auto [it, fresh] = spans.try_emplace(t.allocation, AccessSpan{layer, layer, t.trace_ns, INT64_MAX});
            it->second.last_layer = std::max(it->second.last_layer, layer);
            it->second.last_forward_ns = std::max(it->second.last_forward_ns, t.trace_ns);
        } else if (t.trace_ns >= backward.first && t.trace_ns <= backward.second) {
            const auto it = spans.find(t.allocation);
            if (it != spans.end()) it->second.first_backward_ns = std::min(it->second.first_backward_ns, t.trace_ns);
        }
    }
    return spans;
}

// Where a segment's recomputation stops: the last forward write (kernel or GEMM) of one of its freed
// activations; kernels that only produce the kept output are not run again.
void add_recompute_cut(const CheckpointFacts& facts, Span forward, const std::vector<size_t>& freed,
                       RecomputeCut& cut) {
    const std::unordered_set<size_t> members(freed.begin(), freed.end());
    for (const AllocationTouch& t : facts.touches)
        if (t.writes && t.trace_ns >= forward.first && t.trace_ns <= forward.second && members.count(t.allocation)) {
            cut.cutoff_ns = std::max(cut.cutoff_ns, t.trace_ns);
            if (t.library_call >= 0) cut.writer_calls.insert(t.library_call);
        }
}

// The whole allocations' saved activations of one iteration checkpointed: frees moved, re-allocations
// appended. Returns the bytes recomputed.
int64_t plan_whole_allocations(const CheckpointFacts& facts, const std::vector<Allocation>& recorded,
                               const ForwardLayers& layers, Span forward, Span backward, int k, int segments,
                               CheckpointPlan& plan, std::map<int, RecomputeCut>& cuts) {
    const auto spans = access_spans(facts, layers, forward, backward);
    std::map<int, std::vector<size_t>> dropped;  // segment -> allocations
    for (const auto& [index, span] : spans) {
        const Allocation& a = recorded[index];
        const int segment = span.first_layer / k;
        const bool saved = a.category == kActivations && a.alloc_ns <= forward.second &&
                           (!a.freed || a.free_ns > forward.second) && span.first_backward_ns != INT64_MAX;
        if (saved && segment < segments - 1 && span.last_layer / k == segment) dropped[segment].push_back(index);
    }
    int64_t bytes = 0;
    for (auto& [segment, members] : dropped) {
        std::sort(members.begin(), members.end());
        add_recompute_cut(facts, forward, members, cuts[segment]);
        int64_t recompute_ns = INT64_MAX;
        for (size_t index : members) recompute_ns = std::min(recompute_ns, spans.at(index).first_backward_ns);
        for (size_t index : members) {
            Allocation& a = plan.allocations[index];
            Allocation again = a;
            a.free_ns = std::max(a.alloc_ns, spans.at(index).last_forward_ns);
            a.freed = true;
            again.alloc_ns = recompute_ns;
            plan.allocations.push_back(again);
            plan.origin.push_back(index);
            bytes += a.bytes;
            ++plan.recomputed_allocations;
        }
    }
    return bytes;
}

// One iteration: the frees of its recomputed activations moved and their re-allocations appended.
void plan_iteration(const CheckpointFacts& facts, size_t iteration, const std::vector<Allocation>& recorded,
                    int every_layers, const PooledTensors* pooled, CheckpointPlan& plan) {
    const Span forward = facts.forward[iteration], backward = facts.backward[iteration];
    const ForwardLayers layers = read_layers(facts, recorded, forward, pooled);
    const int layer_count = static_cast<int>(layers.starts.size());
    if (layer_count < 2) return;
    const int k =
        every_layers > 0 ? every_layers : std::max(1, static_cast<int>(std::lround(std::sqrt(double(layer_count)))));
    const int segments = (layer_count + k - 1) / k;
    if (plan.layers == 0) plan.layers = layer_count, plan.segment_layers = k, plan.segments = segments;
    std::map<int, RecomputeCut> cuts;  // per segment recomputed
    int64_t bytes = plan_whole_allocations(facts, recorded, layers, forward, backward, k, segments, plan, cuts);
    if (pooled)
        bytes += checkpoint_detail::plan_pooled_iteration(facts, *pooled, layers, forward, backward, k, segments, plan,
                                                          cuts);
    double kernel_ns = 0;
    for (const auto& [segment, cut] : cuts)
        kernel_ns += checkpoint_detail::segment_kernel_ns(facts, layers, forward, segment, k, cut);
    plan.recomputed_bytes = std::max(plan.recomputed_bytes, bytes);
    plan.extra_forward_ns_per_step += kernel_ns / static_cast<double>(facts.forward.size());
}

// Saved activations held inside segments (arenas, pools) are not moved: their bytes, the largest
// over the iterations.
int64_t saved_in_segments(const CheckpointFacts& facts, const std::vector<Allocation>& allocations) {
    int64_t largest = 0;
    for (const Span& forward : facts.forward) {
        int64_t bytes = 0;
        for (const Allocation& a : allocations)
            if (!a.real && a.bytes > 0 && a.category == kActivations && a.alloc_ns <= forward.second &&
                a.free_ns > forward.second)
                bytes += a.bytes;
        largest = std::max(largest, bytes);
    }
    return largest;
}

}  // namespace

CheckpointPlan plan_checkpointing(const CheckpointFacts& facts, const std::vector<Allocation>& allocations,
                                  int every_layers, const PooledTensors* pooled) {
    CheckpointPlan plan;
    plan.allocations = allocations;
    for (size_t i = 0; i < allocations.size(); ++i) plan.origin.push_back(i);
    plan.iteration_duration_ns = static_cast<double>(facts.iteration_duration_ns);
    if (facts.forward.empty()) {
        plan.cannot_predict =
            "no forward and backward phases were found in the training iterations: which "
            "activations backward reads cannot be told";
        return plan;
    }
    if (!facts.kernel_accesses) {
        plan.cannot_predict =
            "the trace has no kernel argument accesses (kernel_allocations): which activations "
            "forward writes and backward reads cannot be told";
        return plan;
    }
    if (pooled) {
        plan.pooled = true;
        plan.pool_tensors = pooled->tensors;
        for (size_t i = 0; i < pooled->tensors.size(); ++i) plan.pool_origin.push_back(i);
    } else if (const int64_t inside = saved_in_segments(facts, allocations); inside > 0) {
        plan.cannot_predict =
            "activations saved for backward lie inside segments or arenas that are not a caching "
            "pool the replay reproduces (" +
            std::to_string(inside) + " B in one iteration): checkpointing them is not modelled";
        return plan;
    }
    CheckpointFacts aligned = facts;
    checkpoint_detail::align_phases(aligned, allocations, pooled);
    for (size_t i = 0; i < aligned.forward.size(); ++i)
        plan_iteration(aligned, i, allocations, every_layers, pooled, plan);
    if (plan.layers < 2)
        plan.cannot_predict =
            "fewer than two layers (forward library calls with a weights operand) were found in forward";
    return plan;
}

}  // namespace tbdprof::analyzer
