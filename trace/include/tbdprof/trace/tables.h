// Typed readers for the trace's tables: the one way the tagger, the analyzer, the exporter and the
// viewer read rows. Each reader streams one table in id order (or time order), one row at a time,
// into a row struct of plain integers; text columns are string_views into SQLite's own buffer, valid
// until the next call to next(), so no string is built per row unless the caller copies one.
// Columns that older traces of the same format version lack (added at the end of a table, see
// docs/trace-format.md) read as absent (std::nullopt / empty); tables such traces lack read as empty.
#pragma once

#include "tbdprof/trace/memory_kinds.h"
#include "tbdprof/trace/sqlite_handle.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tbdprof::trace {

using OptionalInt = std::optional<int64_t>;

struct KernelRow {
    int64_t id = 0, process = 0, device = 0, function = 0;
    OptionalInt thread, stream;
    int64_t start_ns = 0;
    OptionalInt duration_ns;  // absent: host-timed (no device record)
    OptionalInt queued_ns;
    OptionalInt grid, block, shared_bytes;  // grid and block packed as in schemas/trace.sql
    OptionalInt correlation, library_call, graph_launch;
    int64_t end_ns() const { return start_ns + duration_ns.value_or(0); }
};

// copies.kind, in the enum's order: 'default' is cudaMemcpyDefault (direction from the addresses).
enum class CopyKind : uint8_t { htod, dtoh, dtod, htoh, default_direction, unknown };
inline constexpr const char* kCopyKindNames[] = {"htod", "dtoh", "dtod", "htoh", "default", "unknown"};
constexpr const char* copy_kind_name(CopyKind kind) {
    return kCopyKindNames[static_cast<int>(kind)];
}
constexpr CopyKind copy_kind_from_text(std::string_view text) {
    for (int i = 0; i < static_cast<int>(CopyKind::unknown); ++i)
        if (text == kCopyKindNames[i]) return static_cast<CopyKind>(i);
    return CopyKind::unknown;
}

struct CopyRow {
    int64_t id = 0, process = 0, device = 0;
    OptionalInt thread, stream;
    CopyKind kind = CopyKind::unknown;
    int64_t bytes = 0;
    OptionalInt src, dst;
    int64_t start_ns = 0;
    OptionalInt duration_ns, queued_ns;
    bool async = false;
    OptionalInt correlation;
    OptionalInt src_allocation, dst_allocation;  // the allocation each address fell in (the builder's)
};

struct SetRow {
    int64_t id = 0, process = 0, device = 0;
    OptionalInt thread, stream;
    OptionalInt value;
    int64_t bytes = 0;
    OptionalInt dst;
    int64_t start_ns = 0;
    OptionalInt duration_ns, queued_ns;
    bool async = false;
    OptionalInt correlation;
    OptionalInt dst_allocation;  // the allocation dst fell in (the builder's)
};

// An allocation with its tag (allocation_categories), when tagging has run.
struct AllocationRow {
    int64_t id = 0, process = 0, device = 0;
    OptionalInt thread;
    int64_t address = 0, bytes = 0, alloc_ns = 0;
    OptionalInt free_ns;  // absent: never freed while recording
    MemoryKind kind = MemoryKind::unknown;
    OptionalInt stream, stack, free_thread;
    std::string_view category;  // empty: untagged
    std::optional<double> confidence;
    std::string_view rule, reason, evidence;
};

struct SubrangeRow {
    int64_t id = 0, allocation = 0, offset = 0, bytes = 0, begin_ns = 0, end_ns = 0;
    std::string_view category;
    std::optional<double> confidence;
    std::string_view rule, reason, evidence;
};

// kernel_allocations: one pointer argument word of a kernel that fell inside an allocation.
struct KernelEdgeRow {
    int64_t kernel = 0, param = 0, param_word = 0, allocation = 0, offset = 0;
    bool read_only = false;
};

struct LibraryCallRow {
    int64_t id = 0, process = 0;
    OptionalInt thread;
    std::string_view name, op;
    int64_t begin_ns = 0, end_ns = 0;
    OptionalInt stream, m, n, k, batch, a_type, b_type, c_type, compute_type, transa, transb;
    std::optional<double> flops;
    OptionalInt a, b, c, workspace, workspace_bytes, math_mode;
    std::string_view precision;
    OptionalInt a_bytes, b_bytes, c_bytes;
    OptionalInt a_allocation, b_allocation, c_allocation, workspace_allocation;  // the builder's resolution
};

// library_call_operands: an operand of a library call beyond a, b, c and workspace (none in older traces).
struct LibraryOperandRow {
    int64_t library_call = 0, process = 0;
    std::string_view role, access;  // access: 'read', 'write', 'read_write'
    int64_t address = 0;
    OptionalInt bytes, allocation;
};

struct RangeRow {
    int64_t id = 0, process = 0;
    OptionalInt thread;
    int64_t begin_ns = 0;
    OptionalInt end_ns;  // absent: never closed
    std::string_view name, domain;
};

// NVTX memory extension (schemas/trace.sql): a heap a sub-allocator registered, and one extent of a
// region inside it over time. Empty in traces of programs that registered nothing, and older ones.
struct MemoryHeapRow {
    int64_t id = 0, process = 0;
    OptionalInt thread;
    int64_t handle = 0, address = 0, bytes = 0;
    OptionalInt allocation, device;
    std::string_view usage, name, domain;
    int64_t register_ns = 0;
    OptionalInt unregister_ns;  // absent: still registered at the end
};

struct MemoryRegionRow {
    int64_t id = 0, process = 0;
    OptionalInt heap;
    int64_t address = 0, bytes = 0;
    OptionalInt allocation, device;  // absent: in no recorded allocation
    std::string_view name;           // empty: never named
    int64_t register_ns = 0;
    OptionalInt unregister_ns;  // absent: still registered at the end
    std::string_view end_reason;
};

struct IterationRow {
    int64_t id = 0, process = 0, index = 0, begin_ns = 0, end_ns = 0;
    std::string_view source;  // 'nvtx', 'repetition', 'import'
    OptionalInt device_begin_ns, device_end_ns;
    std::string_view kind;  // 'training', 'non_training' (a validation pass or checkpoint set apart)
    // Empty kind (older traces, imports) means training.
    bool training() const { return kind != "non_training"; }
};

struct PhaseRow {
    int64_t iteration = 0;
    std::string_view kind;  // 'forward', 'backward', 'optimizer'
    int64_t begin_ns = 0, end_ns = 0;            // host time
    OptionalInt device_begin_ns, device_end_ns;  // the device work launched in it; absent in older traces
};

struct DeviceRow {
    int64_t id = 0;
    std::string_view name;
    int64_t cc_major = 0, cc_minor = 0, sm_count = 0, memory_bytes = 0, clock_khz = 0, fp32_lanes_per_sm = 0;
    double fp32_peak_flops = 0;
    bool simulated = false;
};

struct ProcessRow {
    int64_t id = 0, pid = 0;
    OptionalInt parent_pid;
    std::string_view command_line, executable;
    int64_t start_ns = 0;
    OptionalInt end_ns;
    bool truncated = false;
};

struct ThreadRow {
    int64_t id = 0, process = 0, tid = 0;
    std::string_view name;
    OptionalInt first_seen_ns;
};

struct StreamRow {
    int64_t id = 0, process = 0;
    OptionalInt device;
    int64_t handle = 0;
};

struct ApiCallRow {
    int64_t id = 0, process = 0;
    OptionalInt thread;
    std::string_view kind;  // 'device_sync', 'stream_sync', 'event_sync', 'stream_wait_event', 'implicit_sync'
    int64_t begin_ns = 0, end_ns = 0;
    OptionalInt handle;
};

struct CpuSampleRow {
    int64_t process = 0, ts_ns = 0, user_ns = 0, system_ns = 0;
};

struct CaptureWindowRow {
    int64_t process = 0, begin_ns = 0, end_ns = 0;
    std::string_view reason;
};

// kernel_metrics joined with the metric's name.
struct KernelMetricRow {
    int64_t kernel = 0;
    std::string_view metric;
    std::optional<double> value;  // absent: CUPTI could not count it
};

struct ReadOptions {
    int64_t first_id = std::numeric_limits<int64_t>::min();  // inclusive id range (tables with an id)
    int64_t last_id = std::numeric_limits<int64_t>::max();
    bool by_time = false;  // order by the row's start time instead of its id (ties by id)
    // false: a tag's reason and evidence (allocations, sub-ranges) are left empty, not looked up in
    // `strings` for every row: about half the cost of reading the allocations of a tagged import.
    bool tag_texts = true;
    // false: an allocation's whole tag (category, confidence, rule, reason, evidence) is left empty
    // and allocation_categories is not joined, a third of the cost of reading an allocation, for
    // readers that use no tag (the tagger, about to replace them; the framework-unseen estimate).
    bool tags = true;
};

// Streams one table. Usage: `RowReader<KernelRow> kernels(db); KernelRow k; while (kernels.next(k)) ...`.
// A corrupt file throws SqliteError from next(); a statement that cannot be prepared throws from
// the constructor. Instantiated in tables.cpp for the row types above.
template <class Row>
class RowReader {
public:
    explicit RowReader(const Database& db, const ReadOptions& options = {});
    bool next(Row& row);

private:
    Statement statement_;
};

// Whole small tables and single values.
struct RunRow {
    std::string command_line, tool_version, clock_source;
    int64_t duration_ns = 0, host_timed_kernels = 0, truncated_files = 0, start_monotonic_ns = 0;
    bool simulated_device = false;
    OptionalInt exit_status, crash_signal;
};
RunRow read_run(const Database& db);  // throws SqliteError when the run row is missing

std::optional<std::string> read_note(const Database& db, std::string_view key);
std::vector<std::pair<std::string, std::string>> read_notes_with_prefix(const Database& db, std::string_view prefix);
int64_t dropped_event_count(const Database& db);

// functions.id -> its demangled name (or mangled name, for `mangled` true).
std::unordered_map<int64_t, std::string> read_function_names(const Database& db, bool mangled = false);

struct StackFrame {
    std::string symbol, module;  // empty when unknown
    int64_t ip = 0;
    OptionalInt offset;  // ip - module load address
    // How reports and the viewer show it: "symbol (module)", with the module's file name only, and
    // the address in hex where the symbol is unknown.
    std::string text() const;
};
// Frames of one stack, innermost first, at most `limit`.
std::vector<StackFrame> read_stack(const Database& db, int64_t stack, int limit = 64);

// What the file has, for code that must tell an older trace from a newer one. Readers above already
// treat missing columns and tables as absent.
bool has_table(const Database& db, std::string_view table);
bool has_column(const Database& db, std::string_view table, std::string_view column);

}  // namespace tbdprof::trace
