// The analyzer's result for one trace: plain data, filled by analyze() and read by the renderers,
// compare, diff and check. Times are nanoseconds relative to the run start, sizes are bytes.
#pragma once

#include "tbdprof/trace/categories.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::analyzer {

// Memory categories in report order; "untagged" holds allocations the tagger has not labelled yet.
inline constexpr int kCategoryCount = trace::kCategoryCount;  // trace/categories.h: the one table
using CategoryBytes = std::array<int64_t, kCategoryCount>;

struct RunInfo {
    std::string trace_path;
    std::string command_line;
    int64_t duration_ns = 0;
    bool simulated = false;
    std::string clock_source;
    int64_t host_timed_kernels = 0;  // kernels with no device interval (excluded from utilization)
    int64_t truncated_files = 0;
    int64_t dropped_events = 0;
    int format_version = 0;
};

struct Window {
    std::string requested;  // steady | iterations | all
    std::string used;       // what was actually used (falls back to "all" without iterations)
    std::string note;       // why it differs from the request, empty otherwise
    // Trace-relative ns. The window holds the host and the device work of its iterations: a steady
    // window begins once its first iteration has begun on the host and the device has finished the
    // work launched before it (a lagging device would otherwise count the previous iteration's tail),
    // and ends when the last iteration has ended on both.
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    // Host start of the window's first iteration (at or before begin_ns): iterations are counted in
    // the window from here, so a device lag at the start does not drop the first one.
    int64_t first_iteration_begin_ns = 0;
    double seconds() const { return static_cast<double>(end_ns - begin_ns) / 1e9; }
};

struct DeviceMetrics {
    int64_t id = 0;
    std::string name;
    double fp32_peak_flops = 0;
    int64_t kernel_busy_ns = 0;  // union of kernel intervals inside the window
    int64_t busy_ns = 0;         // union of kernel, copy and set intervals inside the window
    double utilization = 0;      // kernel_busy_ns / window
    double busy_utilization = 0; // busy_ns / window
    double fp32_flops = 0;
    double fp32_utilization = 0;  // fp32_flops / window / fp32_peak_flops
    int64_t kernels = 0;          // kernels starting in the window
};

// The precision FLOPs are counted in. FP32 is the FP32 pipeline; TF32, FP16, BF16 and FP8 are
// tensor-core work; FP64; other = integer or unknown.
enum class Precision : uint8_t { fp32, tf32, fp16, bf16, fp8, fp64, other };
inline constexpr int kPrecisionCount = 7;
const char* precision_name(Precision precision);  // "fp32", "tf32", ...
const char* precision_label(Precision precision);  // "FP32", "TF32 (tensor cores)", ...
inline bool is_tensor_core(Precision p) {
    return p == Precision::tf32 || p == Precision::fp16 || p == Precision::bf16 || p == Precision::fp8;
}

struct PrecisionFlops {
    double flops = 0;        // in the window
    double flops_per_s = 0;  // over the window
    double peak_flops = 0;   // sum over devices with kernels of their peak in this precision; 0: unknown
    double utilization = 0;  // flops_per_s / peak_flops (0 when the peak is unknown)
    std::optional<double> per_iteration;  // as fp32_flops_per_iteration
    double counter_flops = 0;  // the part of `flops` from hardware counters (the rest: library shapes)
};

// Where the FLOP figures came from when the trace has hardware counters (`--metrics flops`). Library
// shapes stay the figure for kernels of library calls with FLOPs; counters give the figure for every
// other kernel they could count. Where both exist they are compared, never added twice.
struct CounterFlopSources {
    bool collected = false;          // the trace has kernel_metrics rows
    int64_t kernels_counted = 0;     // window kernels with every FLOP metric available
    int64_t kernels_not_available = 0;
    int64_t kernels_added = 0;       // counted kernels outside library calls with FLOPs
    double added_flops = 0;          // their FLOPs, now in the figures
    int64_t calls_compared = 0;      // library calls with FLOPs whose window kernels were all counted
    double compared_library_flops = 0;  // those calls' FLOPs from their shapes (window share)
    double compared_counter_flops = 0;  // the same kernels' counter FLOPs
};

struct FlopMetrics {
    double fp32_flops = 0;
    double fp32_flops_per_s = 0;       // over the window
    double fp32_flops_per_busy_s = 0;  // over GPU-busy time (union of kernel intervals)
    double fp32_peak_flops = 0;        // sum of the peaks of the devices in the report
    double fp32_utilization = 0;       // fp32_flops_per_s / fp32_peak_flops
    double tensor_flops = 0;           // TF32 / FP16 / BF16 / FP8 tensor-core work, never FP32
    double tensor_flops_per_s = 0;
    double other_flops = 0;            // FP64, integer, unknown precision
    int64_t kernel_time_ns = 0;        // sum of durations of kernels in the window
    int64_t kernel_time_without_flops_ns = 0;
    double no_flop_info_share = 0;     // kernel_time_without_flops_ns / kernel_time_ns
    int64_t library_calls = 0;         // library calls with FLOPs that reach the window
    // Window totals / iterations counted in the window; empty without iterations, or when the window
    // has room for uncounted iterations and kernels ran there (docs/analyzer.md).
    std::optional<double> fp32_flops_per_iteration;
    std::optional<double> tensor_flops_per_iteration;
    // Every precision apart, against its own peak (device_peaks.cpp); by_precision[fp32] repeats the
    // FP32 figures above, tensor_flops is the sum of the tensor-core ones, other_flops FP64 + other.
    std::array<PrecisionFlops, kPrecisionCount> by_precision{};
    CounterFlopSources counters;
};

struct LargeAllocation {
    int64_t id = 0;
    int64_t device = 0;
    int64_t bytes = 0;
    int64_t alloc_ns = 0;
    std::optional<int64_t> free_ns;
    int category = 0;                // for an allocation counted by sub-range: its largest share at the peak
    std::vector<std::string> stack;  // innermost first; empty when stacks were off
    int tag_category = 0;            // the allocation's own tag (allocation_categories.category)
    std::string rule;                // allocation_categories.rule of the tag; empty when none
    std::optional<double> confidence;  // allocation_categories.confidence (0..1)
    // Bytes per category at the peak moment, largest first: one entry for an allocation counted
    // whole, several for a segment counted by its sub-ranges ('untagged' = no tensor covered them).
    std::vector<std::pair<int, int64_t>> at_peak;
    bool by_subrange = false;
};

struct MemoryPoint {
    int64_t trace_ns = 0;
    CategoryBytes bytes{};
};

// Whether the memory tags agree with what any training run has (analyzer/src/tag_plausibility.cpp;
// rules and thresholds in docs/analyzer.md, "Plausibility of the memory tags").
enum class TagVerdict { not_checked, plausible, implausible };

struct TagPlausibility {
    TagVerdict verdict = TagVerdict::not_checked;  // not_checked: no tags, or no device allocations
    std::string summary;                // one line: the verdict in words, for the top of a breakdown
    std::vector<std::string> warnings;  // why the breakdown is unreliable, one sentence each (implausible)
    std::vector<std::string> remarks;   // what the check could not look at, and why
};

// One process's own memory peak: its allocations replayed alone (a rank of a multi-process run).
struct ProcessMemory {
    int64_t process = 0;
    std::optional<int64_t> rank;  // recorded rank (process_ranks); none: unknown
    int64_t peak_bytes = 0;
    int64_t peak_trace_ns = 0;
    CategoryBytes at_peak{};  // its live bytes per category at its own peak; they sum to peak_bytes
};

// "rank 0 (process 1)", or "process 1" when no rank is recorded: how every format names a process's
// own peak (process_ranks.cpp).
std::string process_memory_label(const ProcessMemory& process);

struct MemoryMetrics {
    int64_t allocations = 0;          // device allocations (kinds device, device_async, managed)
    int64_t peak_bytes = 0;           // peak of live device bytes, all devices together
    int64_t peak_trace_ns = 0;        // the first moment the peak is reached
    CategoryBytes at_peak{};          // live bytes per category at that moment; they sum to peak_bytes
    CategoryBytes category_max{};     // each category's own maximum over the run
    std::vector<std::pair<int64_t, int64_t>> device_peaks;  // (device, peak bytes)
    bool tagged = false;              // some allocation has a category
    std::vector<MemoryPoint> timeline;  // step series, at most a few hundred points
    std::vector<LargeAllocation> largest_at_peak;
    // Of at_peak, the bytes whose tag has a confidence below kLowTagConfidence (or none recorded):
    // per category, never above at_peak; 0 for 'untagged'.
    CategoryBytes low_confidence_at_peak{};
    TagPlausibility tags;
    // Each process's own peak, when two or more processes allocate device memory: the figures above
    // are the trace's, every process's allocations together (all ranks of a torchrun recording).
    std::vector<ProcessMemory> processes;
};

// Device memory a framework's own tools cannot see (framework_unseen.cpp; definitions in
// docs/analyzer.md, "Memory the framework cannot see"). Present when the trace shows a framework's
// own allocator (PyTorch's caching allocator, or any pool whose tensors the tagger or NVTX found).
struct UnseenMemoryItem {
    std::string kind;                  // library_workspace_in_pool, library_own, nccl, outside_pools
    int64_t at_peak_bytes = 0;         // live at MemoryMetrics::peak_trace_ns
    int64_t total_bytes = 0;           // every distinct allocation (or workspace range) of the run, summed
    int64_t count = 0;                 // allocations, or distinct workspace ranges
    std::vector<std::string> sources;  // libraries or modules it came from, as far as the trace says
};

struct FrameworkUnseenMemory {
    bool present = false;
    std::string allocator;              // what was found: "PyTorch's CUDA caching allocator", "a pool allocator"
    std::vector<std::string> evidence;  // why, one phrase each
    int64_t pool_allocations = 0, pool_at_peak_bytes = 0, pool_total_bytes = 0;
    std::vector<UnseenMemoryItem> items;         // in a fixed order, all four kinds
    int64_t at_peak_bytes = 0, total_bytes = 0;  // the items summed
};

struct IterationMetrics {
    std::string source;        // 'iterations' table, range name family, or empty when none
    int64_t detected = 0;      // all detected iterations
    int64_t count = 0;         // iterations inside the window
    int64_t set_apart = 0;     // stored spans set apart as not training (validation, checkpoint saves)
    double mean_s = 0, median_s = 0, p95_s = 0, min_s = 0, max_s = 0;
    double per_s = 0;          // count / window
    std::optional<double> samples_per_s;  // with --batch-size
    std::vector<std::pair<int64_t, int64_t>> spans;  // (begin, end) of iterations in the window
    int64_t kernels_outside = 0;  // kernels starting in the window but in none of its iterations
    std::optional<double> kernels_per_iteration;         // kernels in the window / count
    std::optional<double> kernel_time_per_iteration_ns;  // kernel time in the window / count
};

struct CpuProcess {
    int64_t process = 0;
    double utilization = 0;  // CPU seconds per second (1.0 = one core busy)
    // What the samples allow: the readings are cumulative times rounded down to a clock tick and
    // taken every few tens of ms, so a window shorter than that is only bounded, not measured.
    double utilization_low = 0, utilization_high = 0;
};

struct CpuMetrics {
    bool available = false;
    double utilization = 0;  // all traced processes together, in cores
    double utilization_low = 0, utilization_high = 0;  // the sums of the processes' bounds
    bool coarse = false;  // the bounds are more than kCoarseCpuBoundsCores apart: the figure is a guess
    int64_t sample_interval_ns = 0, tick_ns = 0;  // median gap between samples; the readings' unit
    std::vector<CpuProcess> processes;
};

// Width of the CPU bounds (in cores) beyond which the report calls its CPU figure coarse.
inline constexpr double kCoarseCpuBoundsCores = 0.1;

struct KernelStat {
    std::string name;
    int64_t count = 0;
    int64_t total_ns = 0;
    double mean_ns = 0;
    double flops = 0;  // all precisions
    double share = 0;  // total_ns / kernel time in the window
    int64_t min_ns = 0;  // shortest and longest instance in the window
    int64_t max_ns = 0;
};

struct KernelMetrics {
    int64_t count = 0;    // kernels starting in the window (device-timed and host-timed)
    int64_t total = 0;    // all kernels in the trace
    int64_t host_timed = 0;
    std::vector<KernelStat> top;
};

// GPU utilization over the whole run, in equal buckets, per device (chart data).
struct UtilizationSeries {
    int64_t bucket_ns = 0;
    std::vector<std::pair<int64_t, std::vector<double>>> devices;  // (device, fraction per bucket)
};

// A capture window of a run recorded with capture control (trace table capture_windows).
struct CaptureWindowInfo {
    int64_t begin_ns = 0, end_ns = 0;
    std::string reason;
};

// Communication (NCCL kernels) against computation (every other kernel) over the window, per rank
// and over ranks (communication.cpp; definitions in docs/analyzer.md, "Communication").
struct CommunicationFigures {
    int64_t communication_ns = 0;  // |C|: union of communication kernel intervals
    int64_t computation_ns = 0;    // |P|: union of the other kernels' intervals (copies and sets not)
    int64_t overlapped_ns = 0;     // |C ∩ P|
    int64_t exposed_ns = 0;        // |C| - |C ∩ P|: only communication runs
    int64_t idle_ns = 0;           // span - |C ∪ P|
    int64_t kernels = 0;           // communication kernels starting in the span
    double overlap_fraction() const {
        return communication_ns > 0 ? static_cast<double>(overlapped_ns) / static_cast<double>(communication_ns) : 0.0;
    }
    void add(const CommunicationFigures& other);
};

// A communicator as every rank of it can name it (communication_identity.cpp): ranks of several
// traces share no handle, so it is known by its size and its first launches (docs/fleet.md).
struct CommunicatorInfo {
    std::string key;  // 16 hex digits: a hash of nranks and the operation, bytes and root of its first 8 launches
    std::optional<int64_t> nranks, rank;  // ncclCommCount, ncclCommUserRank; none: not asked
};

// A collective's place on its communicator: the rank's `communicators` index and the launch's
// number on it since the trace began (0: the first), the same on every rank of that communicator.
struct CollectiveIdentity {
    int64_t communicator = 0, sequence = 0;
};

struct RankCommunication {
    std::optional<int64_t> rank;  // recorded rank (process_ranks, or Kineto's distributedInfo); none: unknown
    int64_t process = 0, device = 0;
    CommunicationFigures figures;                   // over the window
    std::vector<CommunicationFigures> iterations;   // per iteration of the window, in order
    // Time spent inside collectives waiting for the other ranks of the trace (collectives matched as
    // CommunicationMetrics::waits says); empty when the trace holds one rank or none of this rank's
    // collectives could be matched.
    std::optional<int64_t> wait_ns;
    // Durations of its communication kernels starting in the window, in start order (as they ran, not
    // clipped); only when AnalysisOptions::collective_durations asks for them (docs/fleet.md).
    std::optional<std::vector<int64_t>> collective_durations_ns;
    // With them, what each of those kernels was (none: no NCCL call recorded for it, as in an imported
    // trace) and the communicators they name; empty when the kernels could not be told.
    std::vector<std::optional<CollectiveIdentity>> collective_identities;
    std::vector<CommunicatorInfo> communicators;
};

// One gradient bucket's collective on one rank (communication_buckets.cpp; docs/analyzer.md, "Gradient
// buckets (P3)"): an all-reduce or reduce-scatter whose input buffer holds gradients, in device times.
struct GradientBucket {
    std::optional<int64_t> rank;
    int64_t process = 0, device = 0;
    int64_t round = 0;                 // the rank's reduction round: a new one begins when a buffer repeats
    int64_t position = 0;              // the bucket's place in its round (0: reduced first)
    std::optional<int64_t> iteration;  // index of the window's iteration holding the start; none: outside
    std::string op;                    // all_reduce, reduce_scatter
    int64_t bytes = 0;                 // the input buffer's extent
    std::string identified_by;         // "gradients tag" or "copies of gradients"
    std::optional<int64_t> first_gradient_write_end_ns, last_gradient_write_end_ns;  // none: no write seen
    int64_t start_ns = 0, end_ns = 0;                                                // the collective's kernel
    int64_t exposed_ns = 0;                     // of [start, end): no other kernel ran
    std::optional<int64_t> next_use_start_ns;   // the first kernel or copy using the buffer after the collective
    std::optional<int64_t> next_use_waited_ns;  // how long that use waited for the collective's end
    // Inside the collective, waiting for the trace's other ranks to arrive (the same round and place on
    // every rank; the last one's start); none with one rank or when the ranks' buckets do not match.
    std::optional<int64_t> wait_ns;
};

// One reduction round of one rank: every bucket reduced once (one training step in a DDP program).
struct BucketRound {
    std::optional<int64_t> rank;
    int64_t process = 0, device = 0, round = 0, buckets = 0;
    std::optional<int64_t> first_gradient_write_end_ns, last_gradient_write_end_ns;
    int64_t exposed_ns = 0;                // |union of the round's collectives| not overlapped by computation
    int64_t exposed_after_arrival_ns = 0;  // the same, from each collective's last arrival on (waits left out)
    int64_t spare_computation_ns = 0;  // computation between the first and last gradient write not hiding communication
    int64_t savings_bound_ns = 0;      // min(exposed after arrival, spare): at most what perfect overlap would save
};

// How the ranks' collectives were matched for their waits (docs/analyzer.md, "Waited in
// collectives"): by communicator and launch number where the trace names them (the NCCL calls
// recorded), else by order within the window. Empty `matched_by`: not compared (one rank).
struct CollectiveMatching {
    std::string matched_by;                   // "communicator and launch number" or "order"
    std::optional<int64_t> collectives;       // matched (distinct; by order: per rank); none: not matched
    std::optional<int64_t> communicators;     // held whole by the ranks (by identity only)
    std::map<std::string, int64_t> left_out;  // why -> collectives left out (by identity only)
};

struct CommunicationMetrics {
    bool present = false;            // the window holds communication kernels
    CommunicationFigures total;      // sums over ranks
    std::vector<RankCommunication> ranks;
    std::optional<int64_t> world_size;  // as recorded
    // Across ranks, from computation time per iteration (the work a rank must finish before the
    // collectives can complete): the rank with the most, and max / median. One rank: empty.
    std::optional<size_t> slowest;   // index into ranks
    std::optional<double> imbalance;
    // The rank the others waited for: the one that waited least inside collectives, when the waits
    // differ by more than a tenth of the longest. A rank slowed outside its kernels (host work, input
    // loading) does not compute more, so it is found here and not as `slowest`. Empty otherwise.
    std::optional<size_t> waited_for;  // index into ranks
    CollectiveMatching waits;
    // Gradient buckets (P3): collectives starting in the window whose input holds gradients, in start
    // order per rank; their rounds; and the all-reduces and reduce-scatters the tags did not identify.
    std::vector<GradientBucket> buckets;
    std::vector<BucketRound> bucket_rounds;
    int64_t unidentified_collectives = 0;
};

struct Report {
    RunInfo run;
    Window window;
    std::vector<DeviceMetrics> devices;
    double gpu_utilization = 0;   // mean over devices with kernels
    double busy_utilization = 0;  // same, with copies and sets
    FlopMetrics flops;
    MemoryMetrics memory;
    FrameworkUnseenMemory unseen;  // empty (present false) without a framework allocator
    IterationMetrics iterations;
    CpuMetrics cpu;
    KernelMetrics kernels;
    CommunicationMetrics communication;
    UtilizationSeries utilization_series;
    std::vector<std::string> notes;  // facts a reader needs (fallbacks, missing data)
    std::vector<CaptureWindowInfo> capture_windows;  // empty: the whole run was recorded
};

// "Captured: ..." for a run recorded with capture control, empty otherwise (capture_windows.cpp).
std::string capture_sentence(const Report& report);

inline const char* category_name(int index) {
    return index >= 0 && index < kCategoryCount ? trace::kCategoryNames[index] : "other";
}
// Index of a category name; unknown names map to "other" and empty/NULL to "untagged".
inline int category_index(std::string_view name) { return static_cast<int>(trace::category_from_text(name)); }
inline constexpr int kUntagged = static_cast<int>(trace::Category::untagged);

}  // namespace tbdprof::analyzer
