// Turns decoded raw processes into a TraceModel: assigns ids, joins host events with CUPTI device
// records, matches frees to allocations and resolves pointer arguments into kernel -> allocation
// edges. Internal to the builder; split over build_*.cpp by table group.
#pragma once

#include "elf_symbols.h"

#include "raw_process.h"
#include "trace_model.h"

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
    std::unordered_map<uint64_t, uint32_t> launch_of_sequence;
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
};

struct BuildCounters {
    uint64_t events = 0;            // raw records turned into rows
    uint64_t unmatched_frees = 0;   // frees of addresses with no live allocation
    uint64_t reused_addresses = 0;  // allocations at an address still live (its free was missed)
    uint64_t orphan_device_records = 0;  // CUPTI records with no host launch/copy/set
};

class ModelBuilder {
public:
    ModelBuilder(TraceModel& model, std::vector<RawProcess>& processes);

    void build_processes_and_threads();
    void build_devices();
    void build_library_calls();
    void build_kernels();
    void build_copies_and_sets();
    void build_api_calls_and_ranges();
    void build_stacks_and_frames();
    void build_allocations_and_edges();
    void build_samples_and_drops();
    void finish_run_row();

    const BuildCounters& counters() const { return counters_; }
    uint64_t run_start_ns() const { return run_start_; }

private:
    int64_t rel(uint64_t monotonic_ns) const { return static_cast<int64_t>(monotonic_ns - run_start_); }
    int64_t thread_id(ProcessContext& p, uint32_t tid);
    int64_t stream_id(ProcessContext& p, uint64_t handle, int32_t device);
    int64_t function_id(std::string_view mangled);
    Opt library_call_of(const ProcessContext& p, uint32_t tid, uint64_t sequence) const;
    int64_t string_id(const ProcessContext& p, uint64_t raw_string);

    TraceModel& model_;
    std::vector<ProcessContext> contexts_;
    uint64_t run_start_ = 0;
    // Keys view the mapped raw files, which outlive the builder.
    std::unordered_map<std::string_view, int64_t> function_of_mangled_;
    std::map<std::pair<int64_t, uint64_t>, int64_t> frame_ids_;  // (process, ip) -> frames.id
    ElfSymbolizer symbolizer_;  // names for frames the collector could not symbolize
    BuildCounters counters_;
    int64_t device_timed_ = 0;  // kernels, copies and sets with a device record
    int64_t host_timed_ = 0;    // ... without
};

std::optional<std::string_view> api_name_of(raw::ApiPath api);

// Packs launch dimensions as the kernels table stores them: x + (y-1)*2^32 + (z-1)*2^48.
int64_t pack_dimensions(const uint32_t dims[3]);

}  // namespace tbdprof::trace::detail
