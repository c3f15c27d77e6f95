// One part of the GPU scan: the kernels with ids in [first_id, last_id], read on the part's own
// connection, accumulated into partial results that gpu_scan.cpp merges in id order. Parts share
// only read-only inputs (window, library calls, copy/set unions), so they can run on threads.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "busy_time.h"
#include "call_tallies.h"
#include "id_table.h"
#include "progress.h"
#include "tbdprof/trace/sqlite_handle.h"

namespace tbdprof::analyzer {

// Inputs every part reads and none writes. Library calls are read while the parts run: a part
// tallies kernels per call id and the merge decides what each call is.
struct ScanInputs {
    BusyFrame frame;
    bool everything = false;                                    // window "all": every kernel counts as in the window
    int64_t max_call_id = -1;                                   // library_calls ids up to this one are tallied densely
    std::unordered_set<int64_t> sparse_calls;                   // existing call ids outside the dense range
    // Calls below this id are attributed already (the scan passed their kernels): a kernel naming
    // one marks its part `late_call`, and the scan starts over holding every call.
    int64_t calls_attributed_below = INT64_MIN;
    std::unordered_map<int64_t, ActivityStretches> activities;  // by device id
    // The iterations counted in the window, sorted and disjoint: kernels of the window that start
    // outside all of them are tallied (per-iteration figures are only meaningful without any).
    std::vector<std::pair<int64_t, int64_t>> iterations;
};

struct FunctionStat {
    int64_t rows = 0;   // kernel rows of the function, in the window or not, damaged ones too
    int64_t count = 0;  // kernels in the window (the rest is theirs)
    int64_t total_ns = 0;
    double flops = 0;
    int64_t min_ns = 0;  // shortest and longest instance (valid when count > 0)
    int64_t max_ns = 0;
};

struct PartDevice {
    PartDevice(int64_t device_id, const BusyFrame* frame, const ActivityStretches* activities)
        : id(device_id), busy(frame, activities) {}
    int64_t id;
    KernelBusy busy;
    bool timed = false;  // has a kernel with a device interval
    int64_t first_start = 0, last_start = 0;
    int64_t kernels_total = 0, kernels_in_window = 0;
};

struct PartResult {
    PartResult(int64_t max_function, int64_t rows) : functions(max_function), calls(rows) {}
    bool out_of_order = false;        // a device's kernels went back in time: sort and scan again
    bool late_call = false;           // a kernel of a call attributed already (see ScanInputs)
    std::vector<PartDevice> devices;  // in order of first kernel
    IdTable<FunctionStat> functions;
    CallTallies calls;
    MixedShares mixed;                // (call, function), for mixed calls
    int64_t lowest_call = INT64_MAX;  // the lowest call id tallied
    int64_t kernels = 0, host_timed = 0, in_window = 0;
    int64_t kernel_time_ns = 0;
    int64_t outside_iterations = 0, outside_iterations_ns = 0;  // window kernels outside counted iterations
    // Rows no real run has (a start before the trace, a negative duration or one over kMaxKernelNs): reported,
    // never summed, so that totals cannot overflow.
    int64_t absurd = 0;
    double seconds = 0;  // how long the part took (TBDPROF_ANALYZER_TIMING)
};

// Longer than any kernel runs (about 13 days): a row saying so is damaged or made up.
inline constexpr int64_t kMaxKernelNs = int64_t{1} << 50;

struct PartRange {
    int64_t first_id = 0, last_id = -1;
    bool sorted = false;  // read in start order (ORDER BY start_ns) instead of id order
};

// Shared between parts: rows read so far (for progress) and a request to stop early.
struct ScanControl {
    std::atomic<int64_t> rows_read{0};
    std::atomic<bool> stop{false};
    int64_t rows_expected = 0;
    Progress* progress = nullptr;  // updated only by the part that runs on the calling thread
};

void scan_kernel_range(const trace::Database& db, const ScanInputs& inputs, const PartRange& range,
                       ScanControl& control, bool reports_progress, PartResult& result);

}  // namespace tbdprof::analyzer
