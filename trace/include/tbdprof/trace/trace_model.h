// The trace as rows, in memory, before SQLite: the builder (from a run's raw files) and the importer
// (from Kineto / Chrome JSON) fill it, the one writer (trace_writer.h) stores it. Times are ns
// relative to the run start; ids start at 1. Optional text columns are NULL when not engaged.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tbdprof::trace::detail {

using Opt = std::optional<int64_t>;

// A nullable integer column of the kernels table in 8 bytes where std::optional<int64_t> takes 16:
// the build holds one row per kernel until it writes them. INT64_MIN stands for NULL; no kernel
// column takes it (ids, times and durations, packed dimensions, sizes, CUPTI's 32-bit correlation
// ids). Reads and writes like an Opt.
class CompactOpt {
public:
    constexpr CompactOpt() = default;
    constexpr CompactOpt(std::nullopt_t) {}
    constexpr CompactOpt(int64_t value) : value_(value) {}
    constexpr CompactOpt(const Opt& value) : value_(value ? *value : kNull) {}
    constexpr operator Opt() const { return has_value() ? Opt(value_) : Opt(); }

    constexpr bool has_value() const { return value_ != kNull; }
    constexpr explicit operator bool() const { return has_value(); }
    constexpr int64_t operator*() const { return value_; }
    constexpr int64_t value_or(int64_t fallback) const { return has_value() ? value_ : fallback; }
    constexpr bool operator==(const CompactOpt&) const = default;

private:
    static constexpr int64_t kNull = INT64_MIN;
    int64_t value_ = kNull;
};

struct StringTable {
    std::vector<std::string> texts;  // id = index + 1
    std::unordered_map<std::string, int64_t> ids;
    int64_t intern(std::string_view text) {
        auto [it, inserted] = ids.try_emplace(std::string(text), static_cast<int64_t>(texts.size()) + 1);
        if (inserted) texts.emplace_back(text);
        return it->second;
    }
    const std::string& text(int64_t id) const { return texts[static_cast<size_t>(id - 1)]; }
};

struct RunRow {
    std::string command_line;
    std::optional<std::string> host = std::string();  // NULL: an import that names no host
    std::string tool_version, clock_source;
    int64_t start_unix_ns = 0, start_monotonic_ns = 0, duration_ns = 0;
    bool simulated_device = false;
    int64_t host_timed_kernels = 0;
    Opt exit_status, crash_signal;
    int64_t truncated_files = 0;
};

struct ProcessRow {
    int64_t id, pid;
    Opt parent_pid;
    std::optional<std::string> command_line, executable;  // NULL: not recorded (imports)
    int64_t start_ns;
    Opt end_ns;
    bool truncated;
};

struct ThreadRow {
    int64_t id, process, tid;
    std::optional<std::string> name;
    Opt first_seen_ns;
};

struct DeviceRow {
    int64_t id;
    std::string name;
    int64_t cc_major, cc_minor, sm_count, memory_bytes, clock_khz, fp32_lanes_per_sm;
    double fp32_peak_flops;
    bool simulated;
};

struct StreamRow {
    int64_t id, process;
    Opt device;
    int64_t handle;
};

struct FunctionRow {
    int64_t id, name, mangled;
};

struct KernelRow {
    int64_t id = 0, process = 0;
    CompactOpt thread;
    int64_t device = 0;
    CompactOpt stream;
    int64_t function = 0;
    int64_t start_ns = 0;
    CompactOpt duration_ns, queued_ns, grid, block, shared_bytes, correlation, library_call;
    CompactOpt graph_launch;  // graph_launches.id when a graph replay ran it
};
static_assert(sizeof(KernelRow) == 15 * 8, "kernels rows are held in memory until written: keep them dense");

struct CopyRow {
    int64_t id = 0, process = 0;
    Opt thread;
    int64_t device = 0;
    Opt stream;
    std::string_view kind;
    int64_t bytes = 0;
    Opt src, dst;
    int64_t start_ns = 0;
    Opt duration_ns, queued_ns, async;
    std::optional<std::string_view> api;
    Opt correlation;
    Opt src_allocation = {}, dst_allocation = {};  // allocations.id src and dst point into (the builder's sweep)
};

struct SetRow {
    int64_t id = 0, process = 0;
    Opt thread;
    int64_t device = 0;
    Opt stream, value;
    int64_t bytes = 0;
    Opt dst;
    int64_t start_ns = 0;
    Opt duration_ns, queued_ns, async;
    std::optional<std::string_view> api;
    Opt correlation;
    Opt dst_allocation = {};
};

struct GraphLaunchRow {
    int64_t id = 0, process = 0;
    Opt thread, stream;
    int64_t launch_ns = 0;
    int64_t graph_exec = 0;  // CUgraphExec handle
    Opt graph;               // CUgraph it was instantiated from, when the instantiation was recorded
    int64_t kernels = 0;     // kernel rows this replay ran
};

struct ApiCallRow {
    int64_t id, process;
    Opt thread;
    std::string_view kind;
    int64_t begin_ns, end_ns;
    Opt handle;  // NULL: not recorded (Kineto's synchronisations)
};

struct StackRow {
    int64_t id, process, depth;
};
struct FrameRow {
    int64_t id, process, ip;
    Opt symbol, module, offset;
};
struct StackFrameRow {
    int64_t stack, position, frame;
};

struct AllocationRow {
    int64_t id = 0, process = 0;
    Opt thread;
    int64_t device = 0, address = 0, bytes = 0, alloc_ns = 0;
    Opt free_ns;
    std::string_view kind;
    std::optional<std::string_view> api;
    Opt stream, stack, free_thread;
};

// One per pointer argument inside an allocation (four or more per kernel in a training step), so kept
// at 32 bytes: parameter index and word offset fit the raw format's 16 bits.
struct EdgeRow {
    int64_t kernel = 0, allocation = 0, offset = 0;
    uint16_t param = 0, param_word = 0;
    uint8_t read_only = 0;
};

struct LibraryCallRow {
    int64_t id, process;
    Opt thread;
    std::string name;
    std::string_view op;
    int64_t begin_ns, end_ns, stream, m, n, k, batch;
    int64_t a_type, b_type, c_type, compute_type, transa, transb;
    double flops;
    int64_t a, b, c, workspace, workspace_bytes;
    Opt math_mode;                              // cublasMath_t at the call; NULL when not recorded
    std::optional<std::string_view> precision;  // 'fp32', 'tf32', ...; NULL when not recorded
    Opt a_bytes, b_bytes, c_bytes;              // bytes each operand spans; NULL when not known
    Opt a_allocation = {}, b_allocation = {}, c_allocation = {}, workspace_allocation = {};  // as CopyRow's
};

struct ProcessRankRow {
    int64_t process, rank, local_rank, world_size;
};

// An operand of a library call beyond a, b, c and the workspace (raw::RawLibraryOperand).
struct LibraryOperandRow {
    int64_t library_call, process;
    std::string_view role, access;  // 'bias', 'reserve', ...; 'read', 'write', 'read_write'
    int64_t address;
    Opt bytes;            // NULL when not known
    Opt allocation = {};  // as CopyRow's src_allocation
};

struct NcclCallRow {
    int64_t library_call, process;
    std::string_view op;
    int64_t communicator;
    Opt rank, nranks;
    int64_t count;
    std::string_view datatype;
    int64_t bytes;
    std::optional<std::string_view> reduction;
    Opt peer, root;
    int64_t stream;
    Opt communicator_identity;  // the same on every rank of the communicator; none: not recorded
};

struct RangeRow {
    int64_t id, process;
    Opt thread;
    int64_t begin_ns;
    Opt end_ns;
    std::string name;
    std::optional<std::string> domain;  // NULL: NVTX's default domain
};

// One hardware counter metric of one kernel (`tbdprof record --metrics`); value NULL: not available.
struct KernelMetricRow {
    int64_t kernel = 0;
    int64_t metric = 0;  // strings.id of the metric name
    std::optional<double> value;
};

// A category decided before tagging: an import whose source categorized its memory (torch.profiler's
// memory timeline). The builder leaves the table to the tagger.
struct AllocationCategoryRow {
    int64_t allocation = 0;
    std::string category;
    double confidence = 0;
    std::string_view rule, reason;  // static texts
};

struct CpuSampleRow {
    int64_t process, ts_ns, user_ns, system_ns;
};
struct DroppedRow {
    int64_t process;
    std::string_view cause;
    int64_t count;
};

// A capture window (tbdprof record --capture-range, --delay/--duration, --steps).
struct CaptureWindowRow {
    int64_t process, begin_ns, end_ns;
    std::string reason;
};

// NVTX memory extension (build_memory_regions.cpp): a heap and one extent of a region over time.
struct MemoryHeapRow {
    int64_t id = 0, process = 0;
    Opt thread;
    int64_t handle = 0, address = 0, bytes = 0;
    Opt allocation, device;
    std::string usage;
    std::optional<std::string> name, domain;
    int64_t register_ns = 0;
    Opt unregister_ns;
};

struct MemoryRegionRow {
    int64_t id = 0, process = 0;
    Opt heap;
    int64_t address = 0, bytes = 0;
    Opt allocation, device;
    std::optional<std::string> name;
    int64_t register_ns = 0;
    Opt unregister_ns;
    std::optional<std::string_view> end_reason;  // static texts
};

class KernelStage;  // trace/kernel_stage.h

struct TraceModel {
    RunRow run;
    std::vector<std::pair<std::string, std::string>> notes;
    StringTable strings;
    std::vector<ProcessRow> processes;
    std::vector<ThreadRow> threads;
    std::vector<DeviceRow> devices;
    std::vector<StreamRow> streams;
    std::vector<FunctionRow> functions;
    std::vector<KernelRow> kernels;
    // The builder's kernel rows and edges, kept on disk until written (trace/kernel_stage.h); they
    // follow `kernels` and `edges`, which the builder leaves empty. Null for an import.
    std::shared_ptr<KernelStage> kernel_stage;
    std::vector<GraphLaunchRow> graph_launches;
    std::vector<CopyRow> copies;
    std::vector<SetRow> sets;
    std::vector<ApiCallRow> api_calls;
    std::vector<StackRow> stacks;
    std::vector<FrameRow> frames;
    std::vector<StackFrameRow> stack_frames;
    std::vector<AllocationRow> allocations;
    std::vector<AllocationCategoryRow> allocation_categories;
    std::vector<EdgeRow> edges;
    std::vector<LibraryCallRow> library_calls;
    std::vector<NcclCallRow> nccl_calls;
    std::vector<LibraryOperandRow> library_operands;
    std::vector<ProcessRankRow> process_ranks;
    std::vector<RangeRow> ranges;
    std::vector<CpuSampleRow> cpu_samples;
    std::vector<KernelMetricRow> kernel_metrics;
    std::vector<DroppedRow> dropped;
    std::vector<CaptureWindowRow> capture_windows;
    std::vector<MemoryHeapRow> memory_heaps;
    std::vector<MemoryRegionRow> memory_regions;
};

}  // namespace tbdprof::trace::detail
