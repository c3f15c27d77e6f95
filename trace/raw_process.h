// Everything one process's raw file holds, decoded into plain vectors (internal to the builder).
#pragma once

#include "sorted_index.h"
#include "tbdprof/trace/raw_reader.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tbdprof::trace::detail {

// Each decoded event keeps its thread and its position in the file (ties at equal timestamps are
// broken by file order, which is the order one thread did things).
template <class T>
struct Event {
    T record;
    uint32_t tid;
    uint64_t file_offset;  // where its record starts: orders the events of one file as the file does
};

// A launch's index into its process's LaunchRecords (and a device kernel record's into
// RawProcess::device_kernels): 4 B in the per-kernel lists the pairing holds; decoding refuses a
// process with more than 2^32 - 1 of either (a raw file of some 800 GB).
using LaunchIndex = uint32_t;
using KernelIndex = uint32_t;  // into RawProcess::device_kernels

// A kernel launch as read back from the mapped file (LaunchRecords), with its pointer candidates.
struct LaunchEvent {
    raw::RawLaunch record;  // candidate_count: as many as the record holds (a cut record may hold fewer)
    uint32_t tid;
    uint64_t file_offset;
    const std::byte* candidate_bytes;  // record.candidate_count RawPointerCandidates in the mapping

    raw::RawPointerCandidate candidate(uint32_t c) const {
        raw::RawPointerCandidate value;
        std::memcpy(&value, candidate_bytes + size_t{c} * sizeof value, sizeof value);
        return value;
    }
};

// One process's launches, kept as the offsets of their records and decoded from the mapped file
// whenever a step reads one: decoded copies of a launch and its pointer candidates (about 170 B with
// four pointer arguments) would be held for the whole build. An offset takes 4 B: its low 32 bits,
// with the first launch of each further 4 GiB of the file noted apart (launches are added in file
// order). The pages read back are dropped from the resident set every kResidentBytes of the file
// read (docs/benchmarks.md, "Trace build memory").
class LaunchRecords {
public:
    void reserve(size_t n) { low_.reserve(n); }
    void add(size_t file_offset) {
        const uint64_t high = uint64_t{file_offset} >> 32;
        if (high != (high_starts_.empty() ? 0 : high_starts_.back().second))
            high_starts_.emplace_back(low_.size(), high);
        low_.push_back(static_cast<uint32_t>(file_offset));
    }
    void shrink_to_fit() { low_.shrink_to_fit(); }
    void release() {
        std::vector<uint32_t>().swap(low_);
        high_starts_.clear();
    }
    // The file the offsets point into; set once the process's RawFile is where it stays (a RawFile
    // keeps its mapping when moved).
    void read_from(const RawFile& file) { file_ = &file; }
    size_t size() const { return low_.size(); }
    bool empty() const { return low_.empty(); }
    LaunchEvent operator[](size_t i) const;
    // Where launch i's record starts in the file.
    uint64_t offset(size_t i) const;

private:
    void note_read(size_t begin, size_t end) const;

    const RawFile* file_ = nullptr;
    std::vector<uint32_t> low_;
    std::vector<std::pair<size_t, uint64_t>> high_starts_;  // (first launch, high 32 bits) where they change
    // The file's range read back since its pages were last dropped, and how much it may have made
    // resident (a read fault maps up to kFaultBytes around the page).
    mutable size_t read_begin_ = SIZE_MAX, read_end_ = 0, resident_bytes_ = 0, last_chunk_ = SIZE_MAX;
};

// A CUPTI kernel record as the build keeps it: the fields it reads, 48 B where the raw record takes
// 64 (header, bytes and copy kind are not a kernel's), held for every kernel until its row is made.
struct DeviceKernel {
    uint64_t start_host_ns, end_host_ns;
    uint64_t correlation_id;  // CUPTI's
    uint64_t name_string;
    uint32_t stream_id;  // CUPTI's
    int32_t device;
    uint32_t context_id;
    // The launching thread when CUPTI tied the record to it (raw::kThreadCorrelationTag), set by the
    // pairing once it has taken the record's correlation out of the index (in what was padding).
    uint32_t thread = 0;
};
static_assert(sizeof(DeviceKernel) == 48, "held for every kernel: docs/benchmarks.md, Trace build memory");

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
    LaunchRecords launches;  // read from `file`
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
    std::vector<DeviceKernel> device_kernels;
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
