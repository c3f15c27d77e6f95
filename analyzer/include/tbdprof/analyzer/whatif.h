// Memory what-if: from one recorded, tagged run, the peak device memory of the same program at
// another batch size, another precision, or with ZeRO sharding, by replaying the recorded timeline
// of allocations and frees with each allocation's bytes transformed (docs/whatif.md). The predicted
// peak is the peak of that replayed timeline, not a sum of per-category maxima.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbdprof/analyzer/render.h"
#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// Element types a what-if can change weights, gradients and activations to.
enum class StoragePrecision { fp32, bf16, fp16 };
std::optional<StoragePrecision> parse_storage_precision(std::string_view text);
const char* storage_precision_name(StoragePrecision precision);
int element_bytes(StoragePrecision precision);

struct WhatIfOptions {
    // Batch: a scale factor, or the sizes (new, recorded); the factor is new / recorded.
    std::optional<double> batch_scale;
    std::optional<int64_t> batch_size, batch_size_recorded;
    // Calibration: the same program recorded at `calibrate_batch_size`; each allocation's bytes are
    // fitted as a + b * batch over the two runs (needs batch_size and batch_size_recorded).
    std::string calibrate_path;
    std::optional<int64_t> calibrate_batch_size;
    std::optional<StoragePrecision> precision;           // the what-if precision
    // How `precision` (bf16 or fp16) is run: true (`--precision bf16`), autocast-style mixed precision
    // (FP32 weights, gradients and optimizer state; GEMMs on half-size copies, half-size outputs);
    // false (`--precision bf16-pure`), weights, gradients and activations stored at it, with an FP32
    // master copy in the optimizer state.
    bool precision_autocast = false;
    std::optional<StoragePrecision> precision_recorded;  // empty: inferred from the GEMM operand types
    int zero_stage = 0;                                  // 0: no sharding; 1, 2 or 3
    int64_t ranks = 1;
    // ZeRO's reduce-scatter and all-gather buckets, each; default PyTorch DDP's bucket_cap_mb (25 MiB).
    int64_t zero_bucket_bytes = int64_t{25} << 20;
    // How the state is partitioned: false, evenly (1/N of every byte: the ZeRO paper, DeepSpeed, FSDP's
    // flat parameters); true, by whole parameter tensors, largest first to the rank with the least so
    // far (PyTorch's ZeroRedundancyOptimizer): the busiest rank's share, from the trace's weights tensors.
    bool zero_partition_tensors = false;
    // Activation checkpointing: one checkpoint per `checkpoint_every_layers` layers (0: the square
    // root of the layer count); `checkpoint` false: none.
    bool checkpoint = false;
    int checkpoint_every_layers = 0;
    std::optional<int64_t> device_memory_bytes;  // empty: the trace's device memory
    // What "fits" keeps in reserve: the model's stated error. A prediction within this fraction
    // below the device memory is "borderline", never "fits".
    double fit_margin = 0.03;
    // Fill the last scenario's (every change applied) `timeline`, every step of its replay: for the
    // viewer's predicted series (one scenario, so a long run's points are held once).
    bool timeline = false;
};

enum class FitVerdict { fits, borderline, does_not_fit, unknown };
const char* fit_verdict_name(FitVerdict verdict);

struct WhatIfScenario {
    std::string name;                       // "recorded", "batch 64", "bf16", "ZeRO-2 x8", "batch 64, bf16"
    int64_t peak_bytes = 0;                 // peak of the replayed timeline (all devices, as the report counts it)
    int64_t peak_trace_ns = 0;              // when, on the recorded time base
    CategoryBytes at_peak{};                // live bytes per category at that moment; they sum to peak_bytes
    int64_t device_peak_bytes = 0;          // the highest single-device peak (what must fit on one GPU)
    std::optional<int64_t> headroom_bytes;  // device memory - device_peak_bytes
    FitVerdict verdict = FitVerdict::unknown;
    // The last scenario, with WhatIfOptions::timeline: live bytes per category after every instant of
    // its replay, on the recorded time base (as Report::memory's full timeline), the peak among them.
    std::vector<MemoryPoint> timeline;
};

// What activation checkpointing would do (docs/whatif.md, "Checkpointing").
struct CheckpointSummary {
    int layers = 0;          // forward library calls with a weights operand, per iteration
    int segment_layers = 0;  // K: layers per segment, one checkpoint per segment
    int segments = 0;
    int64_t recomputed_bytes = 0;          // activations freed after forward and recomputed, per iteration
    double extra_forward_ns_per_step = 0;  // recorded device time of the forward kernels recomputed
    double iteration_duration_ns = 0;      // mean recorded training iteration
};

struct WhatIfResult {
    std::vector<WhatIfScenario> scenarios;  // the recorded run first
    std::optional<int64_t> device_memory_bytes;
    std::string device_name;
    std::optional<StoragePrecision> precision_recorded;
    int64_t granularity_bytes = 1;                // allocation sizes rounded up to this (from the recorded sizes)
    std::optional<CheckpointSummary> checkpoint;  // with --checkpoint
    // Non-empty: the what-if scenarios could not be predicted (only "recorded" is given), and why.
    std::string cannot_predict;
    std::vector<std::string> notes;  // assumptions the figures rest on
    // The error 'fits' and `check --whatif` allow for: options.fit_margin, or more where the model's
    // own check failed (a caching pool whose replay does not give back the recorded segments).
    double fit_margin = 0.03;
};

// Throws TraceError for a trace that cannot be read (as analyze_trace does) and std::invalid_argument
// for options that contradict each other (one sentence).
WhatIfResult predict_memory(const std::string& trace_path, const WhatIfOptions& options);

// The scenarios as a table (text, markdown), an HTML page or JSON (scenarios[] with name,
// peak_bytes, by_category, fits); strings from the trace are not yet made safe for the output.
std::string render_whatif(const WhatIfResult& result, Format format);

// The what-if options as `tbdprof whatif` takes them ("--batch-size 64 --batch-size-recorded 32
// --checkpoint sqrt", also --name=value), split at spaces (no quoting: paths with spaces cannot be
// given); returns an error sentence (empty on success). For `check --whatif` and the viewer's --whatif.
std::string parse_whatif_words(const std::string& text, WhatIfOptions& options);

// The one home of the what-if options' meaning: their names, and one option's value applied to
// `options` (an error sentence naming the option, empty on success). `tbdprof whatif`'s option table
// (help, usage) is the CLI's and hands each given option here.
const std::vector<std::string_view>& whatif_option_names();
std::string apply_whatif_option(std::string_view name, const std::string& value, WhatIfOptions& options);

}  // namespace tbdprof::analyzer
