// Everything one process's raw file holds, decoded into plain vectors (internal to the builder).
#pragma once

#include "sorted_index.h"
#include "tbdprof/trace/raw_reader.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tbdprof::trace::detail {

// Each decoded event keeps its thread and its position in the file (ties at equal timestamps are
// broken by file order, which is the order one thread did things).
template <class T>
struct Event {
    T record;
    uint32_t tid;
    uint64_t ordinal;
};

struct LaunchEvent {
    raw::RawLaunch record;
    uint32_t tid;
    uint64_t ordinal;
    uint32_t first_candidate;  // index into RawProcess::candidates
};

struct StackEvent {
    uint64_t id;
    uint32_t first_ip;  // index into RawProcess::stack_ips
    uint32_t depth;
};

struct RawProcess {
    RawFile file;
    RawFileEnd end = RawFileEnd::Clean;
    size_t end_offset = 0;
    uint64_t unknown_records = 0;

    std::unordered_map<uint64_t, std::string_view> strings;  // views into the mapped file
    bool has_info = false;
    raw::RawProcessInfo info{};
    std::vector<Event<raw::RawThreadInfo>> threads;
    std::vector<raw::RawDeviceInfo> devices;
    std::vector<Event<raw::RawAlloc>> allocs;
    std::vector<Event<raw::RawFree>> frees;
    std::vector<LaunchEvent> launches;
    std::vector<raw::RawPointerCandidate> candidates;
    std::vector<Event<raw::RawCopy>> copies;
    std::vector<Event<raw::RawSet>> sets;
    std::vector<Event<raw::RawSync>> syncs;
    std::vector<Event<raw::RawLibraryCall>> library_calls;
    std::vector<Event<raw::RawLibraryOperand>> library_operands;  // joined to calls by tid and begin_host_ns
    std::vector<Event<raw::RawRange>> ranges;
    std::vector<Event<raw::RawMemRegion>> memory_regions;  // NVTX memory extension, file order
    std::vector<Event<raw::RawNcclComm>> nccl_comms;       // communicators created, file order
    std::vector<Event<raw::RawGraphCapture>> graph_captures;
    std::vector<Event<raw::RawGraphInstantiate>> graph_instantiations;
    std::vector<Event<raw::RawGraphLaunch>> graph_launches;
    std::vector<StackEvent> stacks;
    std::vector<uint64_t> stack_ips;
    std::vector<raw::RawFrame> frames;
    std::vector<raw::RawDeviceActivity> device_kernels;
    std::vector<raw::RawDeviceActivity> device_copies;
    std::vector<raw::RawDeviceActivity> device_sets;
    std::vector<raw::RawKernelMetric> kernel_metrics;  // --metrics runs only
    SortedIndex<uint64_t> sequence_of_correlation;     // CUPTI id -> our sequence (finished after decoding)
    std::vector<raw::RawCpuSample> cpu_samples;
    std::vector<raw::RawDropped> dropped;
    std::vector<raw::RawCaptureWindow> capture_windows;  // opened/closed, in file order
    bool has_end = false;                                // a RawProcessEnd: the collector's last flush ran
    raw::EndReason end_reason{};
    raw::RawProcessEnd end_record{};  // back-pressure totals (zero in files written before them)
    bool has_clock_source = false;
    raw::RawClockSource clock_source{};
    uint64_t last_host_ns = 0;  // latest timestamp of any event

    std::string_view string(uint64_t id) const {
        auto it = strings.find(id);
        return it == strings.end() ? std::string_view{} : it->second;
    }
};

// Decodes every whole record of an opened raw file.
void decode_raw_process(RawProcess& process);

}  // namespace tbdprof::trace::detail
