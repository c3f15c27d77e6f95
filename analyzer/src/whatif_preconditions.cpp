// Checks of the what-if's options and of the recorded run (whatif_preconditions.h).
#include "whatif_preconditions.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer::whatif {

std::optional<double> check_options(const WhatIfOptions& o) {
    auto bad = [](const std::string& text) { throw std::invalid_argument(text); };
    if (o.batch_scale && (o.batch_size || o.batch_size_recorded))
        bad("give --batch-scale or --batch-size with --batch-size-recorded, not both");
    if (o.batch_size.has_value() != o.batch_size_recorded.has_value())
        bad("--batch-size and --batch-size-recorded go together (the new batch size and the recorded run's)");
    if (o.batch_size && (*o.batch_size <= 0 || *o.batch_size_recorded <= 0)) bad("batch sizes must be positive");
    if (o.batch_scale && !(std::isfinite(*o.batch_scale) && *o.batch_scale > 0))
        bad("--batch-scale must be a positive number");
    if (!o.calibrate_path.empty()) {
        if (!o.batch_size || !o.calibrate_batch_size)
            bad("--calibrate needs --batch-size, --batch-size-recorded and --calibrate-batch-size (the batch size of "
                "the calibration run)");
        if (*o.calibrate_batch_size <= 0 || *o.calibrate_batch_size == *o.batch_size_recorded)
            bad("--calibrate-batch-size must be positive and differ from --batch-size-recorded");
    } else if (o.calibrate_batch_size) {
        bad("--calibrate-batch-size needs --calibrate OTHER_TRACE");
    }
    if (o.zero_stage < 0 || o.zero_stage > 3) bad("--zero must be 1, 2 or 3");
    if (o.zero_stage > 0 && o.ranks < 2) bad("--zero needs --ranks N with N >= 2");
    if (o.zero_stage == 0 && o.ranks != 1) bad("--ranks needs --zero 1|2|3");
    if (o.zero_stage == 0 && o.zero_partition_tensors) bad("--zero-partition needs --zero 1|2|3");
    if (o.device_memory_bytes && *o.device_memory_bytes <= 0) bad("--device-memory must be positive");
    if (o.checkpoint_every_layers < 0) bad("--checkpoint: the layer count must be positive");
    if (o.batch_scale) return o.batch_scale;
    if (o.batch_size) return static_cast<double>(*o.batch_size) / static_cast<double>(*o.batch_size_recorded);
    return std::nullopt;
}

std::string cannot_predict(const RecordedRun& run, const Replayed& recorded, const WhatIfOptions& options,
                           const std::optional<StoragePrecision>& precision) {
    if (run.real_count == 0) return "the trace has no device allocations";
    if (run.iterations == 0)
        return "no training iterations were found (no iterations table, no step ranges): which allocations belong "
               "to a step cannot be told";
    bool tagged = false;
    for (size_t i = 0; i < run.real_count; ++i) tagged = tagged || run.allocations[i].listed_category != kUntagged;
    if (!tagged) return "the allocations are not tagged with categories (run `tbdprof tag` first)";
    // The report's rules (tag_plausibility.h) on the recorded replay: predictions are only as good
    // as the tags.
    MemoryMetrics memory;
    memory.allocations = static_cast<int64_t>(run.real_count);
    memory.peak_bytes = recorded.peak_bytes;
    memory.at_peak = recorded.at_peak;
    memory.category_max = recorded.category_max;
    memory.tagged = true;
    const TagPlausibility tags = check_tag_plausibility(memory, run.tag_facts);
    if (tags.verdict == TagVerdict::implausible) {
        std::string why = "implausible tags:";
        for (const std::string& warning : tags.warnings) why += " " + warning;
        return why;
    }
    // A segment counted whole in one category may hold tensors of others: what in it scales is
    // unknown. Flat buffers tagged by the parameters' roles (weights, gradients, optimizer state:
    // llm.c's params, grads, m and v, addressed once per tensor) hold one role each and pass; so do
    // small ones (all together under the model's error), with a note.
    int64_t whole_bytes = 0;
    for (size_t i = 0; i < run.real_count; ++i) {
        const Allocation& a = run.allocations[i];
        const bool parameter_role =
            a.listed_category == kWeights || a.listed_category == kGradients || a.listed_category == kOptimizer;
        const bool whole = std::find(run.whole_pooled.begin(), run.whole_pooled.end(), a.id) != run.whole_pooled.end();
        if (whole && !parameter_role) whole_bytes += a.bytes;
    }
    if (static_cast<double>(whole_bytes) > options.fit_margin * static_cast<double>(recorded.peak_bytes))
        return "the breakdown is at segment level for " + std::to_string(run.whole_pooled.size()) +
               " pooled allocations of " + format_bytes(whole_bytes) +
               " (tensors inside them not recovered): what in them scales cannot be told";
    if (options.precision && !precision)
        return "the recorded precision is unknown (no GEMM operand types in the trace): give --precision-recorded";
    return {};
}

}  // namespace tbdprof::analyzer::whatif
