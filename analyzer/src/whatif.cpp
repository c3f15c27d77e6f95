// Memory what-if (docs/whatif.md): the recorded timeline of device allocations and frees, the same
// one the report replays (memory_allocations.h), replayed again with each allocation's bytes
// transformed by a scenario. A scenario is a factor per category (batch, precision, ZeRO), or for
// the batch, with a second recorded run, a line a + b * batch fitted per allocation.
#include "tbdprof/analyzer/whatif.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "analysis_parts.h"
#include "memory_allocations.h"
#include "tbdprof/analyzer/units.h"
#include "tbdprof/trace/tables.h"
#include "whatif_checkpoint.h"
#include "whatif_pool.h"
#include "whatif_pool_tensors.h"

namespace tbdprof::analyzer {
namespace {

constexpr int kWeights = static_cast<int>(trace::Category::weights);
constexpr int kGradients = static_cast<int>(trace::Category::gradients);
constexpr int kOptimizer = static_cast<int>(trace::Category::optimizer_state);
constexpr int kActivations = static_cast<int>(trace::Category::activations);
constexpr int kWorkspace = static_cast<int>(trace::Category::workspace);
constexpr int kInput = static_cast<int>(trace::Category::input);

// Bytes of one segment (an allocation counted by its sub-ranges) by which categories' tensors were
// ever placed there; `mask` bit c: category c. Bytes no tensor covered have mask 0.
struct CoverageSpan {
    int64_t bytes = 0;
    unsigned mask = 0;
};

// Everything read from one trace that the scenarios need.
struct RecordedRun {
    std::vector<Allocation> allocations;  // real ones first (id order), then sub-range pieces
    size_t real_count = 0;
    std::unordered_map<size_t, std::vector<CoverageSpan>> coverage;  // by segment index
    size_t master_copy_index = 0;              // a zero-byte optimizer_state allocation a precision change may fill
    size_t comm_buffer_index = 0;              // a zero-byte 'other' allocation ZeRO's buffers fill
    std::map<int64_t, int64_t> device_memory;  // device -> bytes (devices table)
    std::string device_name;
    size_t iterations = 0;
    std::vector<int64_t> whole_pooled;               // ids of segments counted whole (no tensors recovered)
    std::vector<PoolTensor> pool_tensors;            // segments' tensors in the pool's order (for the pool replay)
    std::optional<StoragePrecision> gemm_precision;  // from the GEMM operand types
    TagCheckFacts tag_facts;                         // for the report's plausibility rules (tag_plausibility.h)
    CheckpointFacts checkpoint_facts;                // phases and accesses (read with --checkpoint only)
};

// Per-category factors, with library workspaces (cuBLAS/cuDNN handles) held fixed whatever the scenario.
struct Factors {
    std::array<double, kCategoryCount> by_category;
    Factors() { by_category.fill(1.0); }
};

bool library_workspace(const Allocation& a) {
    return a.listed_category == kWorkspace && (a.rule == "library-workspace" || a.rule == "library-handle-workspace");
}

double factor_of(const Factors& factors, const Allocation& a, int category) {
    if (category == kWorkspace && library_workspace(a)) return 1.0;
    return factors.by_category[static_cast<size_t>(category)];
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
    trace::RowReader<trace::SubrangeRow> rows(trace.db);
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

RecordedRun read_run(const std::string& path, bool for_checkpoint) {
    return read_trace(path, [for_checkpoint](TraceFile& trace) {
        RecordedRun run;
        int64_t absurd = 0;
        run.allocations = read_device_allocations(trace, std::nullopt, absurd);
        run.real_count = run.allocations.size();
        add_subranges(trace, run.allocations);
        read_coverage(trace, run);
        run.pool_tensors = read_pool_tensors(trace, run.allocations, run.real_count);
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
        run.master_copy_index = run.allocations.size();
        run.allocations.push_back(master);
        Allocation buffers = master;  // ZeRO's communication buffers, from the weights' first allocation on
        buffers.category = buffers.listed_category = static_cast<int>(trace::Category::other);
        run.comm_buffer_index = run.allocations.size();
        run.allocations.push_back(buffers);
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

struct Replayed {
    int64_t peak_bytes = 0, peak_ns = 0;
    CategoryBytes at_peak{}, category_max{};
    std::map<int64_t, int64_t> device_peaks;
};

// The report's replay (memory_scan.cpp) with other bytes: states read only once every event of one
// instant and order is applied; the peak is the first moment the highest total is reached.
Replayed replay(const std::vector<Allocation>& allocations, const std::vector<Event>& events,
                const std::vector<int64_t>& bytes, std::vector<MemoryPoint>* timeline = nullptr) {
    Replayed out;
    CategoryBytes live{};
    int64_t total = 0;
    std::map<int64_t, std::pair<int64_t, int64_t>> device_live;
    for (size_t position = 0; position < events.size(); ++position) {
        const Event& event = events[position];
        const Allocation& a = allocations[event.index];
        const int64_t delta = event.is_alloc() ? bytes[event.index] : -bytes[event.index];
        live[static_cast<size_t>(a.category)] += delta;
        total += delta;
        device_live[a.device].first += delta;
        if (position + 1 < events.size() && events[position + 1].time == event.time &&
            events[position + 1].order == event.order)
            continue;
        for (auto& [device, state] : device_live) state.second = std::max(state.second, state.first);
        for (int c = 0; c < kCategoryCount; ++c) out.category_max[c] = std::max(out.category_max[c], live[c]);
        if (timeline) timeline->push_back({event.time, live});
        if (total > out.peak_bytes) {
            out.peak_bytes = total;
            out.peak_ns = event.time;
            out.at_peak = live;
        }
    }
    for (const auto& [device, state] : device_live) out.device_peaks[device] = state.second;
    return out;
}

std::vector<int64_t> recorded_bytes(const std::vector<Allocation>& allocations) {
    std::vector<int64_t> bytes;
    bytes.reserve(allocations.size());
    for (const Allocation& a : allocations) bytes.push_back(a.bytes);
    return bytes;
}

// The allocation granularity the recorded sizes show: 2 MiB when every device allocation is a
// multiple of it (a caching allocator's segments), 512 B when every one is a multiple of that
// (cudaMalloc-style rounding), otherwise none. A run of a few allocations shows nothing.
int64_t granularity_of(const RecordedRun& run) {
    if (run.real_count < 4) return 1;
    for (int64_t g : {int64_t{2} << 20, int64_t{512}}) {
        bool all = true;
        for (size_t i = 0; i < run.real_count && all; ++i) all = run.allocations[i].bytes % g == 0;
        if (all) return g;
    }
    return 1;
}

int64_t round_up(double bytes, int64_t granularity) {
    const int64_t whole = static_cast<int64_t>(std::llround(std::max(0.0, bytes)));
    return granularity > 1 ? (whole + granularity - 1) / granularity * granularity : whole;
}

}  // namespace

namespace {

// One column of the output: which changes a scenario makes.
struct ScenarioSpec {
    std::string name;
    std::optional<double> batch_scale;  // the factor when not calibrated
    bool calibrated = false;            // the batch by the fitted lines instead
    std::optional<StoragePrecision> precision;
    int zero_stage = 0;
    bool checkpoint = false;
};

// What the scenarios share: read once from the recorded run (and the calibration run).
struct Model {
    int64_t granularity = 1;
    std::optional<StoragePrecision> recorded_precision;
    double parameters = 0;        // weights bytes at their largest / recorded element size
    int64_t optimizer_bytes = 0;  // optimizer state at its largest
    std::vector<double> fitted;   // per real allocation: bytes at the new batch (a + b * batch)
    int64_t ranks = 1;
    int64_t bucket_bytes = 0;        // ZeRO's reduce-scatter and all-gather bucket
    double weights_bytes = 0;        // at their largest
    double gradients_bytes = 0;      // at their largest
    double largest_weight_bytes = 0;  // the largest weights tensor (allocation or sub-range)
};

// ZeRO's communication buffers per rank (docs/whatif.md, "ZeRO"): a reduce-scatter bucket of
// gradients and an all-gather bucket of updated weights, each at most the bucket size and at most
// what it carries; stage 3 also holds one layer's weights gathered whole (the largest tensor).
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

// Precision and ZeRO as factors per category; the FP32 master copy a change to mixed precision
// needs where the run had no optimizer state to grow (bytes in `master_bytes`).
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

// Input, activations and temporaries grow with the batch; library workspaces do not (factor_of).
Factors with_batch(Factors f, double scale) {
    for (int c : {kInput, kActivations, kWorkspace}) f.by_category[static_cast<size_t>(c)] *= scale;
    return f;
}

// Each allocation's bytes in the scenario (indices as in run.allocations), and each pooled
// segment's tensor's (as run.pool_tensors) in `pool_bytes`.
std::vector<int64_t> scenario_bytes(const RecordedRun& run, const Model& model, const ScenarioSpec& spec,
                                    std::vector<int64_t>& pool_bytes) {
    double master = 0;
    const Factors non_batch = precision_zero_factors(spec, model, master);
    const Factors factors = spec.batch_scale && !spec.calibrated ? with_batch(non_batch, *spec.batch_scale) : non_batch;
    const auto& all = run.allocations;
    std::vector<double> segment_ratio(run.real_count, 1.0);  // calibrated bytes / recorded, per real allocation
    std::vector<int64_t> bytes(all.size(), 0);
    for (size_t i = 0; i < run.real_count; ++i) {
        const Allocation& a = all[i];
        const double base = spec.calibrated ? model.fitted[i] : static_cast<double>(a.bytes);
        segment_ratio[i] = base / static_cast<double>(a.bytes);
        const auto spans = run.coverage.find(i);
        const double f =
            spans != run.coverage.end() ? segment_factor(factors, a, spans->second) : factor_of(factors, a, a.category);
        bytes[i] = base == static_cast<double>(a.bytes) && f == 1.0 ? a.bytes : round_up(base * f, model.granularity);
    }
    for (size_t j = run.real_count; j < all.size(); ++j) {
        const Allocation& piece = all[j];
        if (j == run.master_copy_index) {
            bytes[j] = round_up(master, model.granularity);
            continue;
        }
        if (j == run.comm_buffer_index) {
            bytes[j] = round_up(comm_buffer_bytes(spec, model), model.granularity);
            continue;
        }
        const size_t segment = static_cast<size_t>(piece.segment);
        // add_subranges appends each tensor then the space it takes (negative, untagged): the space
        // scales as its tensor does.
        const int category = piece.bytes < 0 ? all[j - 1].category : piece.category;
        const double f = segment_ratio[segment] * factor_of(factors, all[segment], category);
        bytes[j] = f == 1.0 ? piece.bytes : std::llround(static_cast<double>(piece.bytes) * f);
    }
    // A tensor whose extent is only the tagger's bound (its size unknown) asks the pool for the least
    // it serves: a bound taken as a size would reserve a segment the program never needed.
    pool_bytes.clear();
    for (const PoolTensor& t : run.pool_tensors) {
        const double f = segment_ratio[t.segment] * factor_of(factors, all[t.segment], t.category);
        pool_bytes.push_back(t.bound ? 1 : f == 1.0 ? t.bytes : std::llround(static_cast<double>(t.bytes) * f));
    }
    return bytes;
}

std::string batch_name(const WhatIfOptions& options, double scale) {
    if (options.batch_size) return "batch " + std::to_string(*options.batch_size);
    return "batch x" + format_number(scale);
}

std::vector<ScenarioSpec> scenario_list(const WhatIfOptions& options, std::optional<double> scale) {
    std::vector<ScenarioSpec> specs{{"recorded", std::nullopt, false, std::nullopt, 0}};
    ScenarioSpec all{"", std::nullopt, false, std::nullopt, 0};
    std::vector<std::string> parts;
    if (scale) {
        const bool calibrated = !options.calibrate_path.empty();
        const std::string name = batch_name(options, *scale) + (calibrated ? " (calibrated)" : "");
        specs.push_back({name, scale, calibrated, std::nullopt, 0});
        all.batch_scale = scale;
        all.calibrated = calibrated;
        parts.push_back(name);
    }
    if (options.precision) {
        specs.push_back({storage_precision_name(*options.precision), std::nullopt, false, options.precision, 0});
        all.precision = options.precision;
        parts.push_back(storage_precision_name(*options.precision));
    }
    if (options.zero_stage > 0) {
        const std::string name =
            "ZeRO-" + std::to_string(options.zero_stage) + " x" + std::to_string(options.ranks) + " ranks";
        specs.push_back({name, std::nullopt, false, std::nullopt, options.zero_stage});
        all.zero_stage = options.zero_stage;
        parts.push_back(name);
    }
    if (options.checkpoint) {
        const std::string name = options.checkpoint_every_layers > 0
                                     ? "checkpoint every " + std::to_string(options.checkpoint_every_layers) + " layers"
                                     : "checkpoint sqrt";
        ScenarioSpec spec{name, std::nullopt, false, std::nullopt, 0};
        spec.checkpoint = true;
        specs.push_back(spec);
        all.checkpoint = true;
        parts.push_back(name);
    }
    if (parts.size() > 1) {
        for (size_t i = 0; i < parts.size(); ++i) all.name += (i ? ", " : "") + parts[i];
        specs.push_back(all);
    }
    return specs;
}

}  // namespace

namespace {

// The batch factor the options give (new / recorded), or none; throws for options that contradict.
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
    if (o.device_memory_bytes && *o.device_memory_bytes <= 0) bad("--device-memory must be positive");
    if (o.checkpoint_every_layers < 0) bad("--checkpoint: the layer count must be positive");
    if (o.batch_scale) return o.batch_scale;
    if (o.batch_size) return static_cast<double>(*o.batch_size) / static_cast<double>(*o.batch_size_recorded);
    return std::nullopt;
}

// Why the recorded run cannot carry a prediction, or empty.
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

// Per real allocation, its bytes at the new batch from a line through the two runs' sizes. Empty
// with `why` set when the runs' allocations do not match one to one.
std::vector<double> calibrate(const RecordedRun& run, const WhatIfOptions& options, std::string& why,
                              std::vector<std::string>& notes) {
    const RecordedRun other = read_run(options.calibrate_path, false);
    if (other.real_count != run.real_count) {
        why = "the calibration run has " + std::to_string(other.real_count) + " device allocations, the recorded " +
              std::to_string(run.real_count) + ": they cannot be matched in order (same program and iterations?)";
        return {};
    }
    const double m1 = static_cast<double>(*options.batch_size_recorded);
    const double m2 = static_cast<double>(*options.calibrate_batch_size);
    const double n = static_cast<double>(*options.batch_size);
    std::vector<double> fitted(run.real_count);
    size_t differing = 0;
    for (size_t i = 0; i < run.real_count; ++i) {
        const double y1 = static_cast<double>(run.allocations[i].bytes);
        const double y2 = static_cast<double>(other.allocations[i].bytes);
        const double slope = (y2 - y1) / (m2 - m1);
        fitted[i] = std::max(0.0, y1 + slope * (n - m1));
        if (run.allocations[i].listed_category != other.allocations[i].listed_category) ++differing;
    }
    if (differing > 0)
        notes.push_back(std::to_string(differing) +
                        " allocations matched in order carry different tags in the two runs; the recorded run's "
                        "tags are used");
    return fitted;
}

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
    s.peak_ns = replayed.peak_ns;
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

namespace {

void add_assumption_notes(const WhatIfOptions& options, const Model& model, WhatIfResult& result) {
    if (options.batch_scale || options.batch_size) {
        result.notes.push_back(
            options.calibrate_path.empty()
                ? "batch: input, activations and temporaries scale in proportion; weights, gradients, optimizer "
                  "state, library workspaces, 'other' and untagged bytes stay fixed"
                : "batch: each allocation's bytes fitted as a + b x batch through the two recorded runs");
    }
    if (model.granularity > 1)
        result.notes.push_back("changed allocation sizes rounded up to " + format_bytes(model.granularity) +
                               ", the granularity every recorded size shows");
    if (options.precision && model.recorded_precision)
        result.notes.push_back(std::string("precision: recorded ") + storage_precision_name(*model.recorded_precision) +
                               (options.precision_recorded ? " (as given)" : " (from the GEMM operand types)") +
                               "; weights, gradients and activations scale by element size, input and workspace "
                               "stay; mixed-precision Adam keeps an FP32 master copy (4 B per parameter) in the "
                               "optimizer state");
    if (result.checkpoint && result.checkpoint->recomputed_bytes == 0)
        result.notes.push_back("checkpointing: no activation saved for backward lies in a segment but the last (" +
                               std::to_string(result.checkpoint->layers) + " layers in segments of " +
                               std::to_string(result.checkpoint->segment_layers) +
                               "): nothing is recomputed, the timeline is the recorded one");
    else if (result.checkpoint)
        result.notes.push_back(
            "checkpointing: a layer is a forward GEMM with a weights operand and the kernels up to the next; " +
            std::to_string(result.checkpoint->layers) + " layers in segments of " +
            std::to_string(result.checkpoint->segment_layers) + "; the last segment runs as recorded, the others keep "
            "their output and recompute the rest in backward: " + format_bytes(result.checkpoint->recomputed_bytes) +
            " of activations per step, " + format_number(result.checkpoint->extra_forward_ns_per_step / 1e6) +
            " ms more forward per step (" +
            (result.checkpoint->step_ns > 0
                 ? format_percent(result.checkpoint->extra_forward_ns_per_step / result.checkpoint->step_ns)
                 : std::string("?")) +
            " of the recorded step)");
    if (options.zero_stage > 0)
        result.notes.push_back(
            "ZeRO: per rank; communication buffers added (category other): a reduce-scatter and an all-gather "
            "bucket of " + format_bytes(options.zero_bucket_bytes) + " each (at most the gradients' and weights' "
            "bytes)" + (options.zero_stage >= 3 ? ", and the largest weights tensor gathered whole" : ""));
}

}  // namespace

namespace {

// A run whose device allocations are a caching pool's segments (2 MiB granularity, tensors inside):
// the pool's policy (whatif_pool.h) replayed on the tensors gives the segments at other sizes. Only
// used when replaying the recorded sizes gives the recorded segments back.
struct PoolModel {
    bool usable = false;
    // The tensors in the pool's order (run.pool_tensors) give back the recorded segments; otherwise
    // the replay's pieces do (as the report replays them: overlaps resolved, lives as recovered).
    bool by_placement = false;
    std::vector<size_t> segments;  // indices of the recorded segments counted by their tensors
    std::vector<bool> pooled;      // per real allocation
};

// The pooled segments' pieces (the report's replay) as requests and releases at `bytes`.
std::vector<PoolEvent> piece_events(const RecordedRun& run, const std::vector<Event>& events,
                                    const std::vector<int64_t>& bytes, const PoolModel& pool) {
    std::vector<PoolEvent> out;
    for (const Event& e : events) {
        const Allocation& a = run.allocations[e.index];
        if (a.real || a.bytes <= 0 || a.segment < 0 || !pool.pooled[static_cast<size_t>(a.segment)]) continue;
        out.push_back({e.time, e.is_alloc(), static_cast<int64_t>(e.index), bytes[e.index]});
    }
    return out;
}

// The pooled segments' tensors' requests and releases at `bytes` (as run.pool_tensors), in the
// replay's order: releases before requests at one instant, releases of zero-length lives after.
std::vector<PoolEvent> pool_events(const RecordedRun& run, const std::vector<int64_t>& bytes) {
    struct Ordered {
        PoolEvent event;
        int order;
    };
    std::vector<Ordered> ordered;
    for (size_t i = 0; i < run.pool_tensors.size(); ++i) {
        const PoolTensor& t = run.pool_tensors[i];
        const int64_t tensor = static_cast<int64_t>(i);
        ordered.push_back({{t.begin_ns, true, tensor, bytes[i]}, 1});
        ordered.push_back({{t.end_ns, false, tensor, 0}, t.end_ns == t.begin_ns ? 2 : 0});
    }
    std::stable_sort(ordered.begin(), ordered.end(), [](const Ordered& x, const Ordered& y) {
        if (x.event.time_ns != y.event.time_ns) return x.event.time_ns < y.event.time_ns;
        return x.order < y.order;
    });
    std::vector<PoolEvent> out;
    out.reserve(ordered.size());
    for (const Ordered& o : ordered) out.push_back(o.event);
    return out;
}

std::vector<int64_t> sorted_sizes(const std::vector<PoolSegment>& segments) {
    std::vector<int64_t> sizes;
    for (const PoolSegment& s : segments) sizes.push_back(s.bytes);
    std::sort(sizes.begin(), sizes.end());
    return sizes;
}

PoolModel pool_model(const RecordedRun& run, const std::vector<Event>& events, int64_t granularity) {
    PoolModel pool;
    pool.pooled.assign(run.real_count, false);
    if (granularity != (int64_t{2} << 20)) return pool;
    std::vector<int64_t> recorded;
    for (size_t i = 0; i < run.real_count; ++i)
        if (run.allocations[i].by_subrange) {
            pool.segments.push_back(i);
            pool.pooled[i] = true;
            recorded.push_back(run.allocations[i].bytes);
        }
    if (pool.segments.empty()) return pool;
    std::sort(recorded.begin(), recorded.end());
    std::vector<int64_t> tensor_bytes;
    for (const PoolTensor& t : run.pool_tensors) tensor_bytes.push_back(t.bound ? 1 : t.bytes);
    pool.by_placement = sorted_sizes(simulate_caching_pool(pool_events(run, tensor_bytes))) == recorded;
    pool.usable = pool.by_placement || sorted_sizes(simulate_caching_pool(piece_events(
                                           run, events, recorded_bytes(run.allocations), pool))) == recorded;
    return pool;
}

// The scenario's replay with the recorded pooled segments replaced by those the pool would reserve
// for the tensors at their new sizes.
Replayed replay_with_pool(const RecordedRun& run, const std::vector<Event>& events, std::vector<int64_t> bytes,
                          const std::vector<int64_t>& pool_bytes, const PoolModel& pool,
                          std::vector<MemoryPoint>* timeline) {
    const std::vector<PoolEvent> requests =
        pool.by_placement ? pool_events(run, pool_bytes) : piece_events(run, events, bytes, pool);
    std::vector<Allocation> all = run.allocations;
    Allocation segment = run.allocations[pool.segments.front()];
    for (size_t index : pool.segments) {
        const Allocation& a = run.allocations[index];
        segment.freed = segment.freed && a.freed;
        segment.free_ns = std::max(segment.free_ns, a.free_ns);
        bytes[index] = 0;
    }
    for (const PoolSegment& s : simulate_caching_pool(requests)) {
        segment.alloc_ns = s.alloc_ns;
        all.push_back(segment);
        all.back().free_ns = std::max(segment.free_ns, s.alloc_ns);
        bytes.push_back(s.bytes);
    }
    return replay(all, ordered_events(all), bytes, timeline);
}

}  // namespace

namespace {

// What the scenarios share, from the recorded run and its replay (the calibration lines are added
// by predict_memory once the run is known to carry a prediction).
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

}  // namespace

WhatIfResult predict_memory(const std::string& trace_path, const WhatIfOptions& options) {
    const std::optional<double> scale = check_options(options);
    RecordedRun run = read_run(trace_path, options.checkpoint);
    WhatIfResult result;
    result.device_name = run.device_name;
    const std::vector<Event> events = ordered_events(run.allocations);
    const Replayed recorded = replay(run.allocations, events, recorded_bytes(run.allocations));
    result.scenarios.push_back(make_scenario("recorded", recorded, run, options.device_memory_bytes, 0.0));
    if (options.device_memory_bytes) {
        result.device_memory_bytes = options.device_memory_bytes;
    } else if (!run.device_memory.empty()) {
        result.device_memory_bytes = run.device_memory.begin()->second;
    }
    Model model = read_model(run, recorded, options);
    result.precision_recorded = model.recorded_precision;
    result.granularity_bytes = model.granularity;
    result.cannot_predict = cannot_predict(run, recorded, options, model.recorded_precision);
    if (result.cannot_predict.empty() && !options.calibrate_path.empty())
        model.fitted = calibrate(run, options, result.cannot_predict, result.notes);
    CheckpointPlan plan;
    if (result.cannot_predict.empty() && options.checkpoint) {
        plan = plan_checkpointing(run.checkpoint_facts, run.allocations, run.real_count,
                                  options.checkpoint_every_layers);
        if (!plan.cannot_predict.empty()) result.cannot_predict = "checkpointing: " + plan.cannot_predict;
        result.checkpoint = CheckpointSummary{plan.layers,           plan.segment_layers,
                                              plan.segments,         plan.recomputed_bytes,
                                              plan.extra_forward_ns_per_step, plan.step_ns};
    }
    if (!result.cannot_predict.empty()) return result;
    const std::vector<Event> checkpoint_events =
        options.checkpoint ? ordered_events(plan.allocations) : std::vector<Event>{};
    const PoolModel pool = pool_model(run, events, model.granularity);
    if (pool.usable)
        result.notes.push_back("caching pool: the tensors in " + std::to_string(pool.segments.size()) +
                               " pooled segments " +
                               (pool.by_placement ? "(in the pool's order, from their recorded placement)"
                                                  : "(as recovered, overlaps resolved)") +
                               " are replayed through PyTorch's caching-allocator policy, which reproduces the "
                               "recorded segments; the segments come from that replay");
    else if (!pool.segments.empty() && model.granularity > 1)
        result.notes.push_back("caching pool: PyTorch's caching-allocator policy does not reproduce the recorded "
                               "segments; each segment is scaled and rounded up on its own");
    const std::vector<ScenarioSpec> specs = scenario_list(options, scale);
    for (const ScenarioSpec& spec : specs) {
        if (spec.name == "recorded") continue;
        std::vector<int64_t> pool_bytes;
        std::vector<int64_t> bytes = scenario_bytes(run, model, spec, pool_bytes);
        if (spec.checkpoint) {
            // The re-allocations take their recorded allocation's bytes in this scenario.
            for (size_t j = bytes.size(); j < plan.allocations.size(); ++j) bytes.push_back(bytes[plan.origin[j]]);
        }
        std::vector<MemoryPoint> timeline;
        std::vector<MemoryPoint>* points = options.timeline && &spec == &specs.back() ? &timeline : nullptr;
        const Replayed replayed = spec.checkpoint ? replay(plan.allocations, checkpoint_events, bytes, points)
                                  : pool.usable
                                      ? replay_with_pool(run, events, std::move(bytes), pool_bytes, pool, points)
                                      : replay(run.allocations, events, bytes, points);
        result.scenarios.push_back(
            make_scenario(spec.name, replayed, run, options.device_memory_bytes, options.fit_margin));
        result.scenarios.back().timeline = std::move(timeline);
    }
    add_assumption_notes(options, model, result);
    if (!run.whole_pooled.empty())
        result.notes.push_back(
            std::to_string(run.whole_pooled.size()) +
            " pooled allocations counted whole in their one category (weights, gradients or optimizer state, or "
            "together under " +
            format_percent(options.fit_margin) + " of the peak)");
    return result;
}

}  // namespace tbdprof::analyzer
