// Per-category factors of the what-if's scenarios (whatif_factors.h).
#include "whatif_factors.h"

#include <algorithm>
#include <functional>
#include <set>

namespace tbdprof::analyzer::whatif {

namespace {

bool library_workspace(const Allocation& a) {
    return a.listed_category == kWorkspace && (a.rule == "library-workspace" || a.rule == "library-handle-workspace");
}

// By process: weights and gradients at their largest, read as the replay reads a state (after the
// last event of one instant and kind), and one layer's weights.
std::map<int64_t, RankBytes> rank_bytes(const RecordedRun& run, const std::vector<Event>& events) {
    std::map<int64_t, RankBytes> out;
    std::map<int64_t, std::pair<double, double>> live;  // process -> weights, gradients
    for (size_t position = 0; position < events.size(); ++position) {
        const Event& event = events[position];
        const Allocation& a = run.allocations[event.index];
        const double delta = static_cast<double>(event.is_alloc() ? a.bytes : -a.bytes);
        auto& [weights, gradients] = live[a.process];
        if (a.category == kWeights) weights += delta;
        if (a.category == kGradients) gradients += delta;
        if (position + 1 < events.size() && events[position + 1].trace_ns == event.trace_ns &&
            events[position + 1].order == event.order)
            continue;
        for (const auto& [process, bytes] : live) {
            RankBytes& rank = out[process];
            rank.weights = std::max(rank.weights, bytes.first);
            rank.gradients = std::max(rank.gradients, bytes.second);
        }
    }
    for (const Allocation& a : run.allocations)  // without library calls: the largest weights tensor
        if (a.category == kWeights && a.bytes > 0 && !a.by_subrange)
            out[a.process].layer_weights = std::max(out[a.process].layer_weights, static_cast<double>(a.bytes));
    for (const auto& [process, bytes] : run.layer_weight_bytes) out[process].layer_weights = static_cast<double>(bytes);
    return out;
}

// The busiest rank's share when whole parameter tensors are assigned, largest first, to the rank with
// the fewest bytes so far (PyTorch's ZeroRedundancyOptimizer): over the weights tensors each process
// holds when its weights are at their largest (a tensor the tagger recovered again in a later step
// is not counted twice), the largest share of any process. 0 when the trace shows no weights tensors.
double tensor_partition_share(const RecordedRun& run, const std::vector<Event>& events, int64_t ranks) {
    auto is_tensor = [&](const Allocation& a) { return a.category == kWeights && a.bytes > 0 && !a.by_subrange; };
    std::map<int64_t, std::set<uint32_t>> live;                         // process -> live weights tensors
    std::map<int64_t, std::pair<int64_t, std::vector<int64_t>>> sizes;  // process -> (bytes, tensors) at most
    std::map<int64_t, int64_t> bytes;                                   // process -> live weights bytes
    for (const Event& event : events) {
        const Allocation& a = run.allocations[event.index];
        if (!is_tensor(a)) continue;
        auto& set = live[a.process];
        event.is_alloc() ? (void)set.insert(event.index) : (void)set.erase(event.index);
        bytes[a.process] += event.is_alloc() ? a.bytes : -a.bytes;
        auto& [most, tensors] = sizes[a.process];
        if (bytes[a.process] <= most) continue;
        most = bytes[a.process];
        tensors.clear();
        for (const uint32_t index : set) tensors.push_back(run.allocations[index].bytes);
    }
    double share = 0;
    for (auto& [process, most_and_tensors] : sizes) {
        auto& [most, tensors] = most_and_tensors;
        std::sort(tensors.begin(), tensors.end(), std::greater<>());
        std::vector<int64_t> bins(static_cast<size_t>(ranks), 0);
        for (const int64_t t : tensors) *std::min_element(bins.begin(), bins.end()) += t;
        if (most > 0)
            share = std::max(
                share, static_cast<double>(*std::max_element(bins.begin(), bins.end())) / static_cast<double>(most));
    }
    return share;
}

// Mixed-precision Adam as the ZeRO paper counts it: an FP32 master copy (4 B per parameter) besides
// the FP32 moments; going to FP32 drops it. The bytes the change adds (negative: removes) per parameter.
double master_delta_per_parameter(const ScenarioSpec& spec, const Model& model) {
    // Autocast keeps the FP32 weights: they are the master copy.
    if (!spec.precision || !model.recorded_precision || spec.autocast) return 0;
    const bool to_half = *spec.precision != StoragePrecision::fp32;
    const bool from_half = *model.recorded_precision != StoragePrecision::fp32;
    return to_half && !from_half ? 4.0 : !to_half && from_half ? -4.0 : 0.0;
}

}  // namespace

double factor_of(const Factors& factors, const Allocation& a, int category) {
    if (category == kWorkspace && library_workspace(a)) return 1.0;
    return factors.by_category[static_cast<size_t>(category)];
}

Model read_model(const RecordedRun& run, const std::vector<Event>& events, const Replayed& recorded,
                 const WhatIfOptions& options) {
    Model model;
    model.granularity = granularity_of(run);
    model.recorded_precision = options.precision_recorded ? options.precision_recorded : run.gemm_precision;
    model.ranks = options.ranks;
    model.optimizer_bytes = recorded.category_max[kOptimizer];
    model.bucket_bytes = options.zero_bucket_bytes;
    // Each rank's weights size its ZeRO buffers and its master copy.
    if (options.zero_stage > 0 || model.recorded_precision) model.by_process = rank_bytes(run, events);
    if (options.zero_stage > 0 && options.zero_partition_tensors)
        model.zero_share = tensor_partition_share(run, events, options.ranks);
    if (model.recorded_precision)
        model.parameters =
            static_cast<double>(recorded.category_max[kWeights]) / element_bytes(*model.recorded_precision);
    return model;
}

double comm_buffer_bytes(const ScenarioSpec& spec, const Model& model, int64_t process) {
    const auto rank = model.by_process.find(process);
    if (spec.zero_stage == 0 || rank == model.by_process.end()) return 0;
    double ratio = 1.0;  // autocast keeps FP32 weights and gradients: its buckets carry FP32
    if (spec.precision && model.recorded_precision && !spec.autocast)
        ratio = static_cast<double>(element_bytes(*spec.precision)) /
                static_cast<double>(element_bytes(*model.recorded_precision));
    const double bucket = static_cast<double>(model.bucket_bytes);
    const double reduce_scatter = std::min(bucket, rank->second.gradients * ratio);
    // Backward's reduce-scatter is done before the update's all-gather begins: one buffer serves both
    // (a framework reuses it, or frees the first before the second).
    if (spec.zero_stage < 3) return std::max(reduce_scatter, std::min(bucket, rank->second.weights * ratio));
    // Stage 3 keeps no whole weights to gather after the update: each layer's are gathered before
    // their use, in backward while the reduce-scatter bucket is in use.
    return reduce_scatter + rank->second.layer_weights * ratio;
}

double master_copy_bytes(const ScenarioSpec& spec, const Model& model, std::optional<int64_t> process) {
    if (model.optimizer_bytes > 0 || !model.recorded_precision) return 0;  // the optimizer state grows instead
    double parameters = model.parameters;
    if (process) {
        const auto rank = model.by_process.find(*process);
        parameters =
            rank == model.by_process.end() ? 0.0 : rank->second.weights / element_bytes(*model.recorded_precision);
    }
    double bytes = std::max(0.0, master_delta_per_parameter(spec, model) * parameters);
    if (spec.zero_stage >= 1) bytes *= shard_share(model);
    return bytes;
}

double shard_share(const Model& model) {
    return model.zero_share > 0 ? model.zero_share : 1.0 / static_cast<double>(model.ranks);
}

Factors precision_zero_factors(const ScenarioSpec& spec, const Model& model) {
    Factors f;
    // Autocast's changes are per tensor (whatif_autocast.h), not per category.
    if (spec.precision && model.recorded_precision && !spec.autocast) {
        const double ratio = static_cast<double>(element_bytes(*spec.precision)) /
                             static_cast<double>(element_bytes(*model.recorded_precision));
        for (int c : {kWeights, kGradients, kActivations}) f.by_category[static_cast<size_t>(c)] = ratio;
        // The master copy joins the optimizer state, spread over its allocations in proportion; a run
        // without optimizer state gets it in allocations of its own (master_copy_bytes).
        const double delta = master_delta_per_parameter(spec, model) * model.parameters;
        if (model.optimizer_bytes > 0)
            f.by_category[kOptimizer] = std::max(0.0, static_cast<double>(model.optimizer_bytes) + delta) /
                                        static_cast<double>(model.optimizer_bytes);
    }
    if (spec.zero_stage >= 1) {
        const double share = shard_share(model);
        f.by_category[kOptimizer] *= share;
        if (spec.zero_stage >= 2) f.by_category[kGradients] *= share;
        if (spec.zero_stage >= 3) f.by_category[kWeights] *= share;
    }
    return f;
}

Factors with_batch(Factors f, double scale) {
    for (int c : {kInput, kActivations, kWorkspace}) f.by_category[static_cast<size_t>(c)] *= scale;
    return f;
}

}  // namespace tbdprof::analyzer::whatif
