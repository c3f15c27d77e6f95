// A scenario's bytes per allocation (whatif_sizes.h).
#include "whatif_sizes.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "whatif_autocast.h"

namespace tbdprof::analyzer::whatif {

namespace {

bool is_library_workspace(const std::string& rule) {
    return rule == "library-workspace" || rule == "library-handle-workspace";
}

// A segment's bytes after the transform: each byte takes, of the factors of the categories ever
// placed on it, the one farthest from 1 (a byte a batch-sized tensor used moves with the batch, up or
// down, even if a fixed-size tensor used it at another time); bytes no tensor covered keep the factor
// of the segment's own tag.
double segment_factor(const Factors& factors, const Allocation& segment, const std::vector<CoverageSpan>& spans) {
    double bytes = 0, total = 0;
    for (const CoverageSpan& span : spans) {
        double f = span.mask == 0 ? factor_of(factors, segment, segment.listed_category) : 0.0;
        for (int c = 0; c < kCategoryCount; ++c) {
            const double g = factor_of(factors, segment, c);
            if ((span.mask & (1u << c)) && (f == 0.0 || std::abs(g - 1.0) > std::abs(f - 1.0))) f = g;
        }
        bytes += static_cast<double>(span.bytes) * f;
        total += static_cast<double>(span.bytes);
    }
    return total > 0 ? bytes / total : factor_of(factors, segment, segment.listed_category);
}

// ZeRO shards the update too: each rank updates only its share of the parameters, so the update's own
// temporaries (made in the optimizer phase and released before the next step: an Adam's
// denominators, one tensor per parameter it updates) shrink with the share, as the optimizer state
// does. Library workspaces keep their size (factor_of).
double update_share(const RecordedRun& run, const Model& model, const ScenarioSpec& spec, int category,
                    const std::string& rule, int64_t process, int64_t begin_ns, int64_t end_ns) {
    if (spec.zero_stage < 1 || model.ranks <= 1 || (category != kActivations && category != kWorkspace)) return 1.0;
    if (is_library_workspace(rule)) return 1.0;
    return is_update_temporary(run, process, begin_ns, end_ns) ? shard_share(model) : 1.0;
}

// Autocast's multiplier per real allocation (whatif_autocast.h), 1 where it does not apply. A segment
// counted by its tensors takes the mean of its tensors' (released reading), weighted by their bytes:
// which of its bytes a tensor a GEMM wrote or read takes at the peak is not known.
std::vector<double> autocast_multipliers(const RecordedRun& run, const Model& model, const ScenarioSpec& spec) {
    std::vector<double> out(run.real_count, 1.0);
    if (!autocast_applies(spec, model)) return out;
    const double ratio = static_cast<double>(element_bytes(*spec.precision)) /
                         static_cast<double>(element_bytes(*model.recorded_precision));
    std::vector<std::pair<double, double>> sums(run.real_count, {0.0, 0.0});  // bytes x multiplier, bytes
    for (const PoolTensor& t : run.pool_readings.released) {
        if (t.segment >= run.real_count) continue;
        const double bytes = static_cast<double>(t.bytes);
        sums[t.segment].first += bytes * autocast_multiplier(t.category, t.library_workspace, t.gemm_role, ratio);
        sums[t.segment].second += bytes;
    }
    for (size_t i = 0; i < run.real_count; ++i) {
        const Allocation& a = run.allocations[i];
        out[i] = a.by_subrange ? (sums[i].second > 0 ? sums[i].first / sums[i].second : 1.0)
                               : autocast_multiplier(a.category, is_library_workspace(a.rule),
                                                     i < run.gemm_roles.size() ? run.gemm_roles[i] : 0, ratio);
    }
    return out;
}

// Under autocast the pieces take their segment's mean factor (autocast_multipliers) while the
// segment is rounded up: rounded down, each tensor and the space it takes stay within it (rounded to
// nearest they exceeded it by a few bytes, shown as negative untagged bytes).
int64_t rounded_down(int64_t bytes, double f) {
    const int64_t magnitude = static_cast<int64_t>(std::floor(static_cast<double>(std::abs(bytes)) * f));
    return bytes < 0 ? -magnitude : magnitude;
}

int64_t round_up(double bytes, int64_t granularity) {
    const int64_t whole = static_cast<int64_t>(std::llround(std::max(0.0, bytes)));
    return granularity > 1 ? (whole + granularity - 1) / granularity * granularity : whole;
}

}  // namespace

std::vector<int64_t> scenario_bytes(const RecordedRun& run, const Model& model, const ScenarioSpec& spec,
                                    const std::vector<PoolTensor>& pool_tensors, std::vector<int64_t>& pool_bytes) {
    const Factors non_batch = precision_zero_factors(spec, model);
    const Factors factors = spec.batch_scale && !spec.calibrated ? with_batch(non_batch, *spec.batch_scale) : non_batch;
    const auto& all = run.allocations;
    std::vector<double> segment_ratio(run.real_count, 1.0);  // calibrated bytes / recorded, per real allocation
    std::vector<int64_t> bytes(all.size(), 0);
    const std::vector<double> autocast = autocast_multipliers(run, model, spec);
    const bool per_tensor = autocast_applies(spec, model);
    const double ratio = per_tensor ? static_cast<double>(element_bytes(*spec.precision)) /
                                          static_cast<double>(element_bytes(*model.recorded_precision))
                                    : 1.0;
    for (size_t i = 0; i < run.real_count; ++i) {
        const Allocation& a = all[i];
        const double base = spec.calibrated ? model.fitted[i] : static_cast<double>(a.bytes);
        segment_ratio[i] = base / static_cast<double>(a.bytes);
        const auto spans = run.coverage.find(i);
        const double f =
            autocast[i] * (spans != run.coverage.end()
                               ? segment_factor(factors, a, spans->second)
                               : factor_of(factors, a, a.category) * update_share(run, model, spec, a.category, a.rule,
                                                                                  a.process, a.alloc_ns, a.free_ns));
        bytes[i] = base == static_cast<double>(a.bytes) && f == 1.0 ? a.bytes : round_up(base * f, model.granularity);
    }
    for (size_t j = run.real_count; j < all.size(); ++j) {
        const Allocation& piece = all[j];
        if (std::find(run.master_copy_indices.begin(), run.master_copy_indices.end(), j) !=
            run.master_copy_indices.end()) {
            const auto rank = run.master_copy_per_rank ? std::optional(piece.process) : std::nullopt;
            bytes[j] = round_up(master_copy_bytes(spec, model, rank), model.granularity);
            continue;
        }
        if (std::find(run.comm_buffer_indices.begin(), run.comm_buffer_indices.end(), j) !=
            run.comm_buffer_indices.end()) {
            bytes[j] = round_up(comm_buffer_bytes(spec, model, piece.process), model.granularity);
            continue;
        }
        const size_t segment = static_cast<size_t>(piece.segment);
        // add_subranges appends each tensor then the space it takes (negative, untagged): the space
        // scales as its tensor does.
        const Allocation& tensor = piece.bytes < 0 ? all[j - 1] : piece;
        const int category = tensor.category;
        const double f =
            segment_ratio[segment] * autocast[segment] * factor_of(factors, all[segment], category) *
            update_share(run, model, spec, category, tensor.rule, tensor.process, tensor.alloc_ns, tensor.free_ns);
        bytes[j] = f == 1.0     ? piece.bytes
                   : per_tensor ? rounded_down(piece.bytes, f)
                                : std::llround(static_cast<double>(piece.bytes) * f);
    }
    // A tensor whose extent is only the tagger's bound (its size unknown) asks the pool for the least
    // it serves (least_request_bytes: more than 1 MiB in a large-pool segment): a bound taken as a
    // size would reserve a segment the program never needed. Under autocast the least is scaled as
    // the tensor is (a lower-precision tensor's least is half of it: more than 512 KiB, which the
    // small pool may serve); a bound kept at the recorded least is a large-pool request the run at
    // the lower precision need not make (transformer_train.py --layers 7, batch 64: an attention's
    // BF16 output took 1 MiB of the first 32 MiB segment, and the next call's workspace reserved a
    // second one). The batch alone keeps the recorded least (its rows as measured before).
    pool_bytes.clear();
    for (const PoolTensor& t : pool_tensors) {
        // A library call's workspace keeps its size in every scenario, as library workspaces do (factor_of).
        const double f =
            t.library_workspace
                ? 1.0
                : segment_ratio[t.segment] * factor_of(factors, all[t.segment], t.category) *
                      (per_tensor ? autocast_request_multiplier(t.category, false, t.gemm_role, ratio) : 1.0) *
                      update_share(run, model, spec, t.category, {}, all[t.segment].process, t.begin_ns, t.end_ns);
        const int64_t least = per_tensor && f != 1.0
                                  ? std::max<int64_t>(1, std::llround(static_cast<double>(t.least_bytes) * f))
                                  : t.least_bytes;
        pool_bytes.push_back(t.bound ? least : f == 1.0 ? t.bytes : std::llround(static_cast<double>(t.bytes) * f));
    }
    return bytes;
}

}  // namespace tbdprof::analyzer::whatif
