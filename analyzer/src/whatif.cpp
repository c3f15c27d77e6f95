// Memory what-if (docs/whatif.md): the recorded timeline of device allocations and frees, the same
// one the report replays (memory_allocations.h), replayed again with each allocation's bytes
// transformed by a scenario. A scenario is a factor per category (batch, precision, ZeRO), or for
// the batch, with a second recorded run, a line a + b * batch fitted per allocation.
// The parts: the recorded run (whatif_run.h), the replay (whatif_replay.h), the scenarios
// (whatif_scenarios.h), their factors (whatif_factors.h) and bytes (whatif_sizes.h), calibration
// (whatif_calibrate.h), the caching pool's replay (whatif_pool_replay.h), checkpointing
// (whatif_checkpoint.h), the checks before predicting (whatif_preconditions.h) and the notes
// (whatif_notes.h); this file puts them together.
#include "tbdprof/analyzer/whatif.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "tbdprof/analyzer/units.h"
#include "whatif_calibrate.h"
#include "whatif_checkpoint.h"
#include "whatif_factors.h"
#include "whatif_notes.h"
#include "whatif_pool_replay.h"
#include "whatif_preconditions.h"
#include "whatif_replay.h"
#include "whatif_run.h"
#include "whatif_scenarios.h"
#include "whatif_sizes.h"

namespace tbdprof::analyzer {
namespace {

using whatif::Model;
using whatif::PoolModel;
using whatif::RecordedRun;
using whatif::Replayed;
using whatif::ScenarioSpec;

// The error allowed for when a caching pool's replay does not give back the recorded segments and
// each segment is scaled on its own: that fallback measured -4.8% to +30.5% on PyTorch transformers
// (docs/whatif.md, "Why the four larger transformers are refused"), against 3% where the replay
// reproduces them.
constexpr double kUnreproducedPoolMargin = 0.10;

FitVerdict verdict_for(int64_t device_peak, int64_t memory, double margin) {
    if (device_peak > memory) return FitVerdict::does_not_fit;
    if (static_cast<double>(device_peak) * (1.0 + margin) > static_cast<double>(memory)) return FitVerdict::borderline;
    return FitVerdict::fits;
}

WhatIfScenario make_scenario(const std::string& name, const Replayed& replayed, const RecordedRun& run,
                             const std::optional<int64_t>& memory_override, double margin) {
    WhatIfScenario s;
    s.name = name;
    s.peak_bytes = replayed.peak_bytes;
    s.peak_trace_ns = replayed.peak_trace_ns;
    s.at_peak = replayed.at_peak;
    for (const auto& [device, peak] : replayed.device_peaks) {
        s.device_peak_bytes = std::max(s.device_peak_bytes, peak);
        const auto memory = run.device_memory.find(device);
        const std::optional<int64_t> bytes =
            memory_override ? memory_override
                            : (memory != run.device_memory.end() ? std::optional(memory->second) : std::nullopt);
        if (!bytes) continue;
        const int64_t headroom = *bytes - peak;
        if (!s.headroom_bytes || headroom < *s.headroom_bytes) {
            s.headroom_bytes = headroom;
            s.verdict = verdict_for(peak, *bytes, margin);
        }
    }
    return s;
}

// The checkpointing plan (empty without --checkpoint), its summary in `result`, and why it cannot be
// made in result.cannot_predict. With a caching pool replayed by placement, the saved activations
// inside it are the pool's tensors the plan moves.
CheckpointPlan checkpoint_plan(const RecordedRun& run, const PoolModel& pool, const WhatIfOptions& options,
                               WhatIfResult& result) {
    CheckpointPlan plan;
    if (!result.cannot_predict.empty() || !options.checkpoint) return plan;
    // Not inside expandable segments: the one shape measured there (cnn_train.py, batch 128) came out
    // 15.6% under the checkpointed run's peak, with "fits" below it (docs/whatif.md, "Checkpointing").
    const PooledTensors pooled{pool.tensors, run.pool_readings.mapped};
    plan = plan_checkpointing(run.checkpoint_facts, run.allocations, options.checkpoint_every_layers,
                              pool.usable && pool.by_placement && !pool.expandable ? &pooled : nullptr);
    if (!plan.cannot_predict.empty() && pool.usable && pool.expandable)
        plan.cannot_predict =
            "activations saved for backward lie inside PyTorch's expandable segments (mapped pages): checkpointing "
            "them is not modelled (measured 15.6% under the peak of a checkpointed run, docs/whatif.md)";
    if (!plan.cannot_predict.empty()) result.cannot_predict = "checkpointing: " + plan.cannot_predict;
    result.checkpoint = CheckpointSummary{plan.layers,
                                          plan.segment_layers,
                                          plan.segments,
                                          plan.recomputed_bytes,
                                          plan.extra_forward_ns_per_step,
                                          plan.iteration_duration_ns};
    return plan;
}

// A caching pool whose replay at the recorded sizes does not give back the recorded segments.
bool pool_not_reproduced(const PoolModel& pool, const Model& model) {
    return !pool.usable && !pool.segments.empty() && model.granularity > 1;
}

// How many bytes the batch replay (batch_pool_model) reserves at the recorded sizes against the
// recorded segments, in words.
std::string batch_miss_words(const PoolModel& pool) {
    if (pool.batch_miss_bytes == 0) return "as many bytes as the recorded segments";
    return format_bytes(std::abs(pool.batch_miss_bytes)) + (pool.batch_miss_bytes > 0 ? " less" : " more") +
           " than the recorded segments";
}

// Which segments the caching pool's replay gives, or why the recorded ones are scaled instead.
// `combined`: a scenario changes the batch with precision or ZeRO (replayed as the batch alone is).
void add_pool_note(const PoolModel& pool, const Model& model, bool combined, WhatIfResult& result) {
    if (pool.usable && pool.batch_replay)
        result.notes.push_back(
            "caching pool: the batch changed alone also requests the library calls' workspaces (one request "
            "per call) in the segments counted whole as a library workspace, which the pool's replay keeps as "
            "recorded: past the first such a segment is reserved when batch-sized tensors took a freed "
            "workspace block between two calls, which another batch may not do; at the recorded sizes that "
            "replay reserves " +
            batch_miss_words(pool));
    if (pool.usable)
        result.notes.push_back(
            "caching pool: the tensors in " + std::to_string(pool.segments.size() - pool.workspaces) +
            (pool.expandable ? " mapped pages of expandable segments " : " pooled segments ") +
            (!pool.by_placement ? "(as recovered, overlaps resolved)"
             : pool.held        ? "(in the pool's order, from their recorded placement, batch-sized "
                                  "tensors recovered again on the same bytes held as one request)"
             : pool.approximate
                 ? "(in the pool's order, from their recorded placement; at the recorded sizes "
                   "their replay maps " +
                       format_bytes(std::abs(pool.page_miss_bytes)) + (pool.page_miss_bytes >= 0 ? " less" : " more") +
                       " than the recorded pages, an error the predictions may carry)"
                 : "(in the pool's order, from their recorded placement)") +
            (pool.workspaces ? ", and the library calls' workspaces in " + std::to_string(pool.workspaces) +
                                   " segments counted whole as a library workspace (one request per call),"
                             : std::string()) +
            " are replayed through PyTorch's caching-allocator policy" +
            (pool.expandable ? " for expandable segments (each pool's segment grows by pages at its end)" : "") +
            (pool.approximate ? std::string("; the pages")
                              : ", which reproduces the recorded " +
                                    std::string(pool.expandable ? "pages; the pages" : "segments; the segments")) +
            " come from that replay. The trace holds no request or release "
            "of the pool: the lives are read from the placement, and a prediction can be under the peak the "
            "program reaches (measured on PyTorch samples: by up to 1.9%); 'fits' keeps the model's margin");
    else if (pool_not_reproduced(pool, model))
        result.notes.push_back(
            std::string(pool.unplaced_in_workspace
                            ? "caching pool: kernels outside the library calls used a segment counted whole as "
                              "a library workspace, tensors the pool's replay cannot place"
                            : "caching pool: PyTorch's caching-allocator policy does not reproduce the recorded "
                              "segments") +
            "; each segment is scaled and rounded up on its own, a rougher estimate" +
            (pool.batch_replay
                 ? std::string(combined ? ", except the batch changed alone or with precision or ZeRO"
                                        : ", except the batch alone") +
                       ": its requests (the tensors' released reading and the library calls' workspaces) are "
                       "replayed through PyTorch's caching-allocator policy all the same, which at the recorded "
                       "sizes reserves " +
                       batch_miss_words(pool)
                 : std::string()) +
            ": 'fits' and check --whatif allow for " + format_percent(result.fit_margin) + " error");
}

// The batch changed alone, as replayed: the pool model it used and its tensors' bytes.
struct BatchAlone {
    const PoolModel* pool = nullptr;
    std::vector<int64_t> pool_bytes;
};

// A scenario that changes the batch and more (precision, ZeRO), replayed through the pool on the same
// tensors as the batch alone, needs no more segments than segments_within gives from the batch
// alone's replay: the policy's best fit is not monotone in the requests' sizes, and a change that
// only removes bytes from the pool must not raise the prediction above the batch alone's (on
// transformer_train.py --seq 40, 128 -> 64 with bf16, the best fit reserved 10 MiB more than the
// batch alone). Returns whether the bounded replay is lower (then in `replayed`).
bool bound_by_batch_alone(const RecordedRun& run, const std::vector<int64_t>& bytes,
                          const std::vector<int64_t>& pool_bytes, const PoolModel& pool, const BatchAlone& batch,
                          Replayed& replayed, std::vector<MemoryPoint>* timeline) {
    if (batch.pool != &pool || !pool.usable || !pool.by_placement) return false;
    std::vector<MemoryPoint> bounded_timeline;
    Replayed bounded =
        whatif::replay_with_segments(run, bytes, whatif::segments_within(pool, pool_bytes, batch.pool_bytes), pool,
                                     timeline ? &bounded_timeline : nullptr);
    if (bounded.peak_bytes >= replayed.peak_bytes) return false;
    replayed = std::move(bounded);
    if (timeline) *timeline = std::move(bounded_timeline);
    return true;
}

// Each scenario but the recorded one, replayed at its bytes: with checkpointing's changed timeline,
// through the caching pool (`batch`: the pool replayed all the same, for a batch changed by a
// factor), or on the recorded timeline.
void predict_scenarios(const RecordedRun& run, const std::vector<Event>& events, const Model& model,
                       const CheckpointPlan& plan, const std::pair<const PoolModel&, const PoolModel&> pools,
                       const WhatIfOptions& options, const std::vector<ScenarioSpec>& specs, WhatIfResult& result) {
    const std::vector<Event> checkpoint_events =
        options.checkpoint ? ordered_events(plan.allocations) : std::vector<Event>{};
    BatchAlone batch_alone;
    for (const ScenarioSpec& spec : specs) {
        if (spec.name == "recorded") continue;
        // Each pool model carries the tensors its replay requests: a batch changed by a factor (alone or
        // with precision or ZeRO) may be replayed with the library calls' per-call workspaces while the
        // other scenarios keep the pool's own reading.
        const PoolModel& pool =
            pools.second.usable && whatif::changes_batch_by_factor(spec) ? pools.second : pools.first;
        std::vector<int64_t> pool_bytes;
        std::vector<int64_t> bytes = whatif::scenario_bytes(run, model, spec, pool.tensors, pool_bytes);
        std::vector<int64_t> tensor_bytes;
        if (spec.checkpoint) {
            // The re-allocations (and re-requests) take their recorded one's bytes in this scenario.
            for (size_t j = bytes.size(); j < plan.allocations.size(); ++j) bytes.push_back(bytes[plan.origin[j]]);
            for (size_t origin : plan.pool_origin) tensor_bytes.push_back(pool_bytes[origin]);
        }
        std::vector<MemoryPoint> timeline;
        std::vector<MemoryPoint>* points = options.timeline && &spec == &specs.back() ? &timeline : nullptr;
        const bool bounded_later = whatif::changes_batch_by_factor(spec) && !whatif::only_changes_batch(spec);
        const std::vector<int64_t> kept_bytes = bounded_later ? bytes : std::vector<int64_t>{};
        Replayed replayed =
            spec.checkpoint && plan.pooled ? whatif::replay_pool_tensors(run, plan.allocations, std::move(bytes),
                                                                         plan.pool_tensors, tensor_bytes, pool, points)
            : spec.checkpoint              ? whatif::replay(plan.allocations, checkpoint_events, bytes, points)
            : pool.usable ? whatif::replay_with_pool(run, events, std::move(bytes), pool_bytes, pool, points)
                          : whatif::replay(run.allocations, events, bytes, points);
        if (whatif::only_changes_batch(spec)) batch_alone = {&pool, pool_bytes};
        if (bounded_later && bound_by_batch_alone(run, kept_bytes, pool_bytes, pool, batch_alone, replayed, points))
            result.notes.push_back("caching pool: '" + spec.name +
                                   "': the pool's requests, each no larger than the batch alone's but the ones "
                                   "replayed on their own, are placed where the batch alone's replay placed them "
                                   "(the policy's best fit reserved more; the other changes remove pooled bytes)");
        result.scenarios.push_back(
            make_scenario(spec.name, replayed, run, options.device_memory_bytes, result.fit_margin));
        result.scenarios.back().timeline = std::move(timeline);
    }
}

}  // namespace

std::optional<StoragePrecision> parse_storage_precision(std::string_view text) {
    if (text == "fp32") return StoragePrecision::fp32;
    if (text == "bf16") return StoragePrecision::bf16;
    if (text == "fp16") return StoragePrecision::fp16;
    return std::nullopt;
}

const char* storage_precision_name(StoragePrecision precision) {
    switch (precision) {
        case StoragePrecision::fp32:
            return "fp32";
        case StoragePrecision::bf16:
            return "bf16";
        case StoragePrecision::fp16:
            return "fp16";
    }
    return "fp32";
}

int element_bytes(StoragePrecision precision) {
    return precision == StoragePrecision::fp32 ? 4 : 2;
}

const char* fit_verdict_name(FitVerdict verdict) {
    switch (verdict) {
        case FitVerdict::fits:
            return "fits";
        case FitVerdict::borderline:
            return "borderline";
        case FitVerdict::does_not_fit:
            return "does not fit";
        case FitVerdict::unknown:
            return "unknown";
    }
    return "unknown";
}

WhatIfResult predict_memory(const std::string& trace_path, const WhatIfOptions& options) {
    const std::optional<double> scale = whatif::check_options(options);
    RecordedRun run = whatif::read_run(trace_path, options.checkpoint);
    WhatIfResult result;
    result.fit_margin = options.fit_margin;
    result.device_name = run.device_name;
    const std::vector<Event> events = ordered_events(run.allocations);
    const Replayed recorded = whatif::replay(run.allocations, events, whatif::recorded_bytes(run.allocations));
    result.scenarios.push_back(make_scenario("recorded", recorded, run, options.device_memory_bytes, 0.0));
    if (options.device_memory_bytes) {
        result.device_memory_bytes = options.device_memory_bytes;
    } else if (!run.device_memory.empty()) {
        result.device_memory_bytes = run.device_memory.begin()->second;
    }
    Model model = whatif::read_model(run, events, recorded, options);
    result.precision_recorded = model.recorded_precision;
    result.granularity_bytes = model.granularity;
    result.cannot_predict = whatif::cannot_predict(run, recorded, options, model.recorded_precision);
    if (result.cannot_predict.empty() && !options.calibrate_path.empty())
        model.fitted = whatif::calibrate(run, options, result.cannot_predict, result.notes);
    PoolModel pool = result.cannot_predict.empty() ? whatif::pool_model(run, events, model.granularity) : PoolModel{};
    const CheckpointPlan plan = checkpoint_plan(run, pool, options, result);
    if (!result.cannot_predict.empty()) return result;
    if (pool_not_reproduced(pool, model)) result.fit_margin = std::max(options.fit_margin, kUnreproducedPoolMargin);
    const std::vector<ScenarioSpec> specs = whatif::scenario_list(options, scale);
    const PoolModel batch_pool = std::any_of(specs.begin(), specs.end(), whatif::changes_batch_by_factor)
                                     ? whatif::batch_pool_model(run, pool)
                                     : PoolModel{};
    // A replay that does not give back the recorded segments at their sizes keeps the wider margin.
    if (pool.usable && batch_pool.usable && pool.batch_miss_bytes != 0)
        result.fit_margin = std::max(result.fit_margin, kUnreproducedPoolMargin);
    const bool combined = std::any_of(specs.begin(), specs.end(), [](const ScenarioSpec& spec) {
        return whatif::changes_batch_by_factor(spec) && !whatif::only_changes_batch(spec);
    });
    add_pool_note(pool, model, combined, result);
    predict_scenarios(run, events, model, plan, {pool, batch_pool}, options, specs, result);
    whatif::add_assumption_notes(options, model, result);
    if (!run.whole_pooled.empty())
        result.notes.push_back(
            std::to_string(run.whole_pooled.size()) +
            " pooled allocations counted whole in their one category (weights, gradients or optimizer state, or "
            "together under " +
            format_percent(options.fit_margin) + " of the peak)");
    return result;
}

}  // namespace tbdprof::analyzer
