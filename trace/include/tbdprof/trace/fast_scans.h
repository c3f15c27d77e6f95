// Fast paths through the two largest tables for scans of every row (the report's GPU scan): only the
// columns such a scan needs, without the per-row cost of the full typed readers (tables.h). On a
// trace of 10 M kernels and 2.5 M library calls, a report read through RowReader<KernelRow> and
// RowReader<LibraryCallRow> took 2.5 times the CPU time (6.0 s against 2.4 s).
#pragma once

#include "tbdprof/trace/sqlite_handle.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace tbdprof::trace {

struct KernelInterval {
    int64_t id = 0, device = 0, function = 0, start_ns = 0;
    int64_t stream = -1;  // -1: NULL
    // kNoDuration: NULL (host-timed, no device interval); other values as stored, a damaged file's
    // negative ones too (they were taken for NULL when -1 marked it, and reported as host-timed).
    static constexpr int64_t kNoDuration = INT64_MIN;
    int64_t duration_ns = kNoDuration;
    int64_t library_call = -1;  // -1: NULL (launched outside any library call)
    bool graph = false;         // run by a CUDA graph replay
};

// Calls `on_kernel` for each kernel with id in [first_id, last_id], in id order, until it returns
// false; returns false when it stopped the scan. The rows never leave SQLite's loop: they are fed to
// an aggregate function registered on `db` for the call (SQLITE_DIRECTONLY: the file's own schema
// can never call it), which saves the step and column calls per row. A damaged file throws
// SqliteError; an exception thrown by `on_kernel` stops the scan and is rethrown. One scan at a time
// per connection.
bool for_each_kernel_interval(const Database& db, int64_t first_id, int64_t last_id,
                              const std::function<bool(const KernelInterval&)>& on_kernel);

// What the tagger needs of a kernel: when it was launched and ran, and what it was.
struct KernelLaunch {
    int64_t id = 0, process = 0, function = 0, start_ns = 0;
    int64_t queued_ns = 0;      // 0: NULL
    int64_t duration_ns = 0;    // 0: NULL (host-timed)
    int64_t library_call = -1;  // -1: NULL
};

// Calls `on_kernel` for every kernel, in id order, reading only those seven columns (the full
// RowReader<KernelRow> reads fifteen). The number of kernels, for sizing what the caller keeps,
// is kernel_count().
void for_each_kernel_launch(const Database& db, const std::function<void(const KernelLaunch&)>& on_kernel);
int64_t kernel_count(const Database& db);

// What a library call says about its FLOPs.
struct CallFlops {
    int64_t id = 0, begin_ns = 0;
    std::optional<double> flops;
    std::optional<int64_t> compute_type, a_type;
    std::string_view name;       // only when compute_type and a_type are both NULL, else empty
    std::string_view precision;  // library_calls.precision; empty: NULL, or a trace without the column
};

// The library calls with ids in [first_id, last_id], in id order, one at a time, for a reader that
// takes them between other work (the report attributes FLOPs while it still scans kernels).
class CallFlopsReader {
public:
    CallFlopsReader(const Database& db, int64_t first_id, int64_t last_id);
    // False after the last row; the views are valid until the next call.
    bool next(CallFlops& call);

private:
    std::optional<Statement> query_;  // none: the trace has no library_calls table
};

}  // namespace tbdprof::trace
