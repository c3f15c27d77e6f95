// Turns decoded raw processes into a TraceModel: assigns ids, joins host events with CUPTI device
// records, matches frees to allocations and resolves pointer arguments into kernel -> allocation
// edges. Internal to the builder; split over build_*.cpp by table group.
#pragma once

#include "elf_symbols.h"

#include "raw_process.h"
#include "sorted_index.h"
#include "tbdprof/trace/trace_model.h"

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace tbdprof::trace::detail {

struct ProcessContext {
    RawProcess* raw = nullptr;
    int64_t id = 0;
    std::unordered_map<uint32_t, int64_t> thread_ids;        // tid -> threads.id
    std::unordered_map<uint64_t, int64_t> stream_ids;        // CUstream handle -> streams.id
    std::unordered_map<uint64_t, int64_t> stream_of_cupti;   // CUPTI stream id -> streams.id
    SortedIndex<uint32_t> launch_of_sequence;                // sequence -> raw.launches index
    std::vector<int64_t> kernel_of_launch;                   // per launch, kernels.id
    std::vector<int64_t> allocation_ids;                     // per alloc record, allocations.id
    std::unordered_map<uint64_t, int64_t> stack_ids;         // raw stack id -> stacks.id
    // Per thread: (first_sequence, last_sequence, library_calls.id), sorted by first_sequence. A
    // call's span covers only launches its own thread made.
    struct CallSpan {
        uint64_t first, last;
        int64_t id;
    };
    std::unordered_map<uint32_t, std::vector<CallSpan>> library_spans;
    // CUDA graphs (build_graphs.cpp): per raw graph launch its graph_launches.id and the captured
    // launches (raw.launches indices, capture order) its replays run; kernels replays ran, for edges.
    std::unordered_map<uint64_t, uint32_t> graph_launch_of_sequence;  // sequence -> raw.graph_launches index
    std::vector<int64_t> graph_launch_ids;
    struct GraphTemplate {
        std::vector<uint32_t> launches, copies, sets;  // raw indices of the captured work, capture order
    };
    std::vector<GraphTemplate> graph_launch_templates;
    struct ReplayedKernel {
        uint64_t host_ns, file_offset;  // the graph launch's host time and where its record starts
        int64_t template_launch;        // raw.launches index of the matching captured launch, -1: none
        int64_t kernel;                 // kernels.id
    };
    std::vector<ReplayedKernel> replayed_kernels;
};

struct BuildCounters {
    uint64_t events = 0;            // raw records turned into rows
    uint64_t unmatched_frees = 0;   // frees of addresses with no live allocation
    uint64_t reused_addresses = 0;  // allocations at an address still live (its free was missed)
    uint64_t orphan_device_records = 0;  // CUPTI records with no host launch/copy/set
    uint64_t graph_launches = 0;          // graph replays (cuGraphLaunch)
    uint64_t captured_launches = 0;       // launches recorded into graphs by stream capture (did not run)
    uint64_t captured_transfers = 0;      // copies and sets likewise
    // Device records whose correlation record was lost, paired with their host call by order
    // (thread_order_pairing.h): without that pairing each would have been stored twice.
    uint64_t paired_without_correlation = 0;
};

struct KernelPairing;  // build_activity.cpp

// A staged kernel row's origin (kernel_stage.h): a launch index (>= 0), KernelStage::kNoOrigin, or
// graph replay r as kReplayOrigin - r.
constexpr int64_t kReplayOrigin = -2;

class ModelBuilder {
public:
    ModelBuilder(TraceModel& model, std::vector<RawProcess>& processes);

    void build_processes_and_threads();
    void build_devices();
    void build_library_calls();
    void build_graph_launches();
    void build_kernels();
    void build_copies_and_sets();
    void build_api_calls_and_ranges();
    void build_stacks_and_frames();
    void build_allocations_and_edges();
    void build_samples_and_drops();
    void build_memory_regions();  // after build_allocations_and_edges: regions lie in allocations
    void build_capture_windows(ProcessContext& p);
    // Run notes: how long the collector held the process (back-pressure), and where drops happened.
    void note_holds_and_drops(const ProcessContext& p);
    void build_kernel_metrics();  // after build_kernels: pairs counter ranges with kernel rows
    void finish_run_row();

    const BuildCounters& counters() const { return counters_; }
    const std::vector<std::pair<std::string, std::string>>& recording_notes() const { return recording_notes_; }

private:
    int64_t rel(uint64_t monotonic_ns) const { return static_cast<int64_t>(monotonic_ns - run_start_); }
    int64_t thread_id(ProcessContext& p, uint32_t tid);
    // build_allocations_and_edges's steps (build_memory.cpp): ids by allocation time, then one
    // process's sweep over its allocs, frees and launches in time order.
    void number_allocations();
    void sweep_allocations(ProcessContext& p);
    // build_kernels's steps (build_activity.cpp): one process's device records sorted out against its
    // launches, then its rows (each with the launch or replay it came from).
    void index_launches_by_sequence(ProcessContext& p);
    std::vector<bool> find_thread_tied_kernels(ProcessContext& p);
    KernelPairing pair_kernels(ProcessContext& p);
    void add_kernel_rows(ProcessContext& p, KernelPairing& pairing);
    // build_copies_and_sets's rows of one process's recorded copies and sets (build_activity.cpp),
    // each with the device record paired to it (nullptr: host-timed).
    void build_copies(ProcessContext& p, const std::vector<const raw::RawDeviceActivity*>& device_of_copy);
    void build_sets(ProcessContext& p, const std::vector<const raw::RawDeviceActivity*>& device_of_set);
    int64_t stream_id(ProcessContext& p, uint64_t handle, int32_t device);
    int64_t function_id(std::string_view mangled);
    Opt library_call_of(const ProcessContext& p, uint32_t tid, uint64_t sequence) const;
    int64_t string_id(const ProcessContext& p, uint64_t raw_string);
    // A kernels row for a recorded launch, timed by the host (it starts when it was launched).
    KernelRow launch_row(ProcessContext& p, const LaunchEvent& l);
    // Takes device, times and correlation from CUPTI's record of the kernel; queued_ns counts from
    // `launch_ns` when given. A row with a stream teaches the CUPTI stream id -> stream mapping; a
    // row without one (a device record no launch claims) takes its stream from that mapping.
    void take_device_record(ProcessContext& p, KernelRow& row, const DeviceKernel& d,
                            std::optional<uint64_t> launch_ns);
    // Kernel rows for the device records each graph launch's replay produced (build_graphs.cpp).
    // Stages them (origin: their index in p.replayed_kernels) and appends to p.replayed_kernels.
    void add_replayed_kernels(ProcessContext& p,
                              const std::map<uint32_t, std::vector<const DeviceKernel*>>& by_graph_launch);
    // Copy and set rows for the orphan device records a graph replay produced, matched in order to
    // the graph's captured copies and sets; removes them from the orphan lists, returns how many.
    size_t add_replayed_transfers(ProcessContext& p, std::vector<const raw::RawDeviceActivity*>& copies,
                                  std::vector<const raw::RawDeviceActivity*>& sets);
    // The graph launch (raw.graph_launches index) CUPTI tied a device record to, or -1.
    int64_t graph_launch_of(const ProcessContext& p, uint64_t correlation_id) const;

    TraceModel& model_;
    std::vector<ProcessContext> contexts_;
    uint64_t run_start_ = 0;
    // Keys view the mapped raw files, which outlive the builder.
    std::unordered_map<std::string_view, int64_t> function_of_mangled_;
    std::map<std::pair<int64_t, uint64_t>, int64_t> frame_ids_;  // (process, ip) -> frames.id
    ElfSymbolizer symbolizer_;  // names for frames the collector could not symbolize
    BuildCounters counters_;
    std::vector<std::pair<std::string, std::string>> recording_notes_;
    int64_t device_timed_ = 0;  // kernels, copies and sets with a device record
    int64_t host_timed_ = 0;    // ... without
};

// Frees a vector's memory (clear() keeps its capacity): the steps hand back what no later step reads,
// so the raw events and the rows made from them are not all in memory at once.
template <class T>
void release(std::vector<T>& v) {
    std::vector<T>().swap(v);
}

std::optional<std::string_view> api_name_of(raw::ApiPath api);
std::string_view copy_kind_name_of(uint8_t kind);  // 'htod', ... for a raw::CopyKind value

// Packs launch dimensions as the kernels table stores them: x + (y-1)*2^32 + (z-1)*2^48.
int64_t pack_dimensions(const uint32_t dims[3]);

}  // namespace tbdprof::trace::detail
