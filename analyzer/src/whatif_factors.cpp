// Per-category factors of the what-if's scenarios (whatif_factors.h).
#include "whatif_factors.h"

#include <algorithm>

namespace tbdprof::analyzer::whatif {

namespace {

bool library_workspace(const Allocation& a) {
    return a.listed_category == kWorkspace && (a.rule == "library-workspace" || a.rule == "library-handle-workspace");
}

}  // namespace

double factor_of(const Factors& factors, const Allocation& a, int category) {
    if (category == kWorkspace && library_workspace(a)) return 1.0;
    return factors.by_category[static_cast<size_t>(category)];
}

Model read_model(const RecordedRun& run, const Replayed& recorded, const WhatIfOptions& options) {
    Model model;
    model.granularity = granularity_of(run);
    model.recorded_precision = options.precision_recorded ? options.precision_recorded : run.gemm_precision;
    model.ranks = options.ranks;
    model.optimizer_bytes = recorded.category_max[kOptimizer];
    model.bucket_bytes = options.zero_bucket_bytes;
    model.weights_bytes = static_cast<double>(recorded.category_max[kWeights]);
    model.gradients_bytes = static_cast<double>(recorded.category_max[kGradients]);
    for (const Allocation& a : run.allocations)
        if (a.category == kWeights && a.bytes > 0 && !a.by_subrange)
            model.largest_weight_bytes = std::max(model.largest_weight_bytes, static_cast<double>(a.bytes));
    if (model.recorded_precision)
        model.parameters =
            static_cast<double>(recorded.category_max[kWeights]) / element_bytes(*model.recorded_precision);
    return model;
}

double comm_buffer_bytes(const ScenarioSpec& spec, const Model& model) {
    if (spec.zero_stage == 0) return 0;
    double ratio = 1.0;
    if (spec.precision && model.recorded_precision)
        ratio = static_cast<double>(element_bytes(*spec.precision)) /
                static_cast<double>(element_bytes(*model.recorded_precision));
    const double bucket = static_cast<double>(model.bucket_bytes);
    double bytes = std::min(bucket, model.gradients_bytes * ratio) + std::min(bucket, model.weights_bytes * ratio);
    if (spec.zero_stage >= 3) bytes += model.largest_weight_bytes * ratio;
    return bytes;
}

Factors precision_zero_factors(const ScenarioSpec& spec, const Model& model, double& master_bytes) {
    Factors f;
    master_bytes = 0;
    if (spec.precision && model.recorded_precision) {
        const double ratio = static_cast<double>(element_bytes(*spec.precision)) /
                             static_cast<double>(element_bytes(*model.recorded_precision));
        for (int c : {kWeights, kGradients, kActivations}) f.by_category[static_cast<size_t>(c)] = ratio;
        // Mixed-precision Adam as the ZeRO paper counts it: an FP32 master copy (4 B per parameter)
        // besides the FP32 moments; going to FP32 drops it.
        const bool to_half = *spec.precision != StoragePrecision::fp32;
        const bool from_half = *model.recorded_precision != StoragePrecision::fp32;
        const double delta = to_half && !from_half   ? 4 * model.parameters
                             : !to_half && from_half ? -4 * model.parameters
                                                     : 0.0;
        if (model.optimizer_bytes > 0)
            f.by_category[kOptimizer] = std::max(0.0, static_cast<double>(model.optimizer_bytes) + delta) /
                                        static_cast<double>(model.optimizer_bytes);
        else
            master_bytes = std::max(0.0, delta);
    }
    if (spec.zero_stage >= 1) {
        const double share = 1.0 / static_cast<double>(model.ranks);
        f.by_category[kOptimizer] *= share;
        master_bytes *= share;
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
