// What the viewer holds of one trace, in the stages it is loaded: the overview (rows, host calls,
// NVTX, copies, iterations, allocations; small), the analyzer's report (every number shown), and the
// kernels (large; with their level-of-detail summaries). Each stage is immutable once handed over.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "interval_lod.h"
#include "item_row.h"
#include "memory_series.h"
#include "tbdprof/analyzer/report.h"
#include "whatif_series.h"

namespace tbdprof::viewer {

// communication: a rank's NCCL time, exposed or overlapped (communication_rows.h).
enum class RowKind { kernels, communication, transfers, host_calls, nvtx };

struct TimelineRow {
    std::string title;  // "GPU 0 · stream 7"
    RowKind kind = RowKind::kernels;
    int64_t device = -1;  // kernels and transfers
    int64_t stream = -1;  // streams.id
    int64_t thread = -1;  // threads.id, host rows
    int depth = 0;        // NVTX nesting depth
    ItemRow items;
    IntervalMipmap lod;
    std::shared_ptr<const std::vector<std::string>> labels;  // item label -> text
    const std::string& label_of(size_t item) const { return (*labels)[items.label(item)]; }
};

struct Band {
    int64_t begin = 0, end = 0;
    std::string label;  // "iteration 3", "forward"
};

struct AllocationInfo {
    int64_t id = 0, device = 0, bytes = 0, alloc_ns = 0;
    int64_t free_ns = INT64_MAX;  // INT64_MAX: never freed while recording
    int category = analyzer::kUntagged;
    double confidence = -1;  // -1: none recorded
    std::string rule, reason, kind;
    int64_t stack = -1;
    // This allocation's tensors recovered by tagging (Overview::subranges[first, first + count)),
    // when it is a pooled segment; zero when none.
    size_t subrange_first = 0, subrange_count = 0;
};

// A tensor inside a pooled segment (allocation_subranges), with its own category and lifetime.
struct SubRangeInfo {
    int64_t id = 0, allocation = 0, offset = 0, bytes = 0, begin_ns = 0, end_ns = 0;
    int category = analyzer::kUntagged;
    double confidence = -1;
    std::string rule, reason;
};

struct Overview {
    std::string path;
    int64_t duration_ns = 0;
    std::string command_line;
    std::vector<TimelineRow> rows;  // transfers, NVTX
    std::vector<Band> iterations;   // host time: the steps of the process with the most of them
    // Forward, backward, optimizer of those steps, in device time where the trace has it (the span of
    // the work each launched, so the band lines up with the kernel rows), else host time.
    std::vector<Band> phases;
    bool phases_in_device_time = false;
    std::vector<AllocationInfo> allocations;               // device allocations, by alloc_ns
    std::vector<SubRangeInfo> subranges;                   // grouped by allocation, by begin_ns
    std::vector<std::pair<int64_t, std::string>> devices;  // (id, name)
    int64_t kernel_estimate = 0;  // id span of the kernels table (their number in traces tbdprof writes)
};

// One device's live memory (the analyzer's replay of its allocations alone).
struct DeviceMemory {
    int64_t device = 0;
    int64_t peak_bytes = 0;  // the report's device peak
    MemorySeries series;
};

struct ReportData {
    analyzer::Report report;  // with the full memory timeline
    MemorySeries memory;
    std::vector<DeviceMemory> devices;  // a lane each when the trace has two or more devices; else empty
    std::optional<PredictedMemory> predicted;  // with what-if options (the viewer's --whatif)
};

struct KernelDetail {
    // kernels per device and stream, communication per rank, then host calls per thread
    std::vector<TimelineRow> rows;
    std::shared_ptr<const std::vector<std::string>> names;  // kernel label -> demangled name
    bool complete = true;                                   // false: loading was cancelled part-way
};

}  // namespace tbdprof::viewer
