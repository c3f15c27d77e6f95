// A foreign trace's events as the parsers read them: absolute nanoseconds in the source's clock,
// host threads as (pid, tid), GPU work not yet joined to its launch, memory as signed events.
// import_model.cpp turns them into the one trace model (tbdprof/trace/trace_model.h), which the
// trace library's writer stores.
#pragma once

#include "tbdprof/trace/trace_model.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::interop {

// Host-side threads are (pid, tid); Kineto sometimes writes tids as strings ("25738").
struct HostThread {
    int64_t pid = 0;
    int64_t tid = 0;
};

enum class GpuOpKind : uint8_t { kernel, copy, set };

struct GpuOp {
    GpuOpKind kind = GpuOpKind::kernel;
    int64_t start_ns = 0;
    int64_t duration_ns = 0;
    int32_t device = 0;
    int64_t stream = 0;
    std::optional<int64_t> correlation;
    int64_t name = 0;   // ForeignTrace::strings
    int64_t bytes = 0;  // copies and sets
    int64_t grid[3] = {0, 0, 0};
    int64_t block[3] = {0, 0, 0};
    std::optional<int64_t> shared_bytes;
};

// Where a host-side or GPU-side range came from; stored as ranges.domain (docs/interop.md).
enum class RangeDomain : uint8_t {
    cpu_op,
    user_annotation,
    gpu_user_annotation,
    python_function,
    cuda_runtime,
    cuda_driver
};
const char* domain_name(RangeDomain domain);

struct Range {
    RangeDomain domain = RangeDomain::cpu_op;
    int64_t begin_ns = 0;
    std::optional<int64_t> end_ns;
    HostThread thread;                   // unused for gpu_user_annotation
    bool on_gpu = false;                 // gpu_user_annotation: drawn on a stream, no host thread
    int64_t name = 0;                    // ForeignTrace::strings
    std::optional<int64_t> correlation;  // CUDA runtime / driver calls
};

struct MemoryEvent {
    int64_t time_ns = 0;  // when it happened, in the source's clock
    HostThread thread;
    int32_t device_type = 0;  // Kineto: 0 CPU, 1 CUDA
    int32_t device_id = -1;
    std::optional<int64_t> address;
    int64_t bytes = 0;  // signed: > 0 allocation, < 0 free
    std::optional<int64_t> total_allocated;
    std::optional<int64_t> total_reserved;
    // Memory-timeline imports only: the category torch.profiler inferred (already tbdprof's name).
    std::optional<std::string> category;
};

struct ForeignTrace {
    std::string format;
    trace::detail::StringTable strings;  // names of GPU work and ranges
    std::vector<GpuOp> gpu_ops;
    std::vector<Range> ranges;
    std::vector<MemoryEvent> memory;
    std::vector<trace::detail::DeviceRow> devices;  // Kineto's deviceProperties: id, name, cc, SMs, memory
    std::map<int64_t, std::string> process_names;   // pid -> name
    std::map<std::pair<int64_t, int64_t>, std::string> thread_names;  // (pid, tid) -> name
    std::vector<std::pair<std::string, std::string>> notes;           // run_notes rows
    std::optional<std::string> host;
    std::optional<int64_t> span_begin_ns, span_end_ns;  // the profiler's own "Trace" span
    uint64_t events = 0;
    uint64_t json_bytes = 0;
    std::map<std::string, uint64_t> skipped, unknown, warnings;
};

// Texts longer than this (names of kernels, ranges, processes, threads, devices, notes) are cut at
// import, on a UTF-8 boundary, and end in "... [N bytes cut]"; each cut is counted in the warnings
// (so in the summary and the trace's import.warning note). A 300 MB kernel name imported with exit
// 0, and then no command could read the trace (SQLite's cap on one string is 256 MiB).
constexpr size_t kMaxImportedTextBytes = 64 * 1024;
std::string imported_text(std::string_view text, ForeignTrace& trace);

// Event times an import keeps: |ts| at most 2^62 ns (146 years from the epoch) and durations at
// most 2^61 ns, so that ts + dur and the span of a trace never leave int64. Kineto timestamps near
// the int64 limit wrapped ("-9223372036.854 s"); events beyond these are skipped and counted.
constexpr int64_t kMaxImportedTimeNs = int64_t{1} << 62;
constexpr int64_t kMaxImportedDurationNs = int64_t{1} << 61;

}  // namespace tbdprof::interop
