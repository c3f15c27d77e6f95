// The GPU scan: kernels in time order (id order is time order per device in a well-formed trace),
// with copies and sets, library calls and devices read first. The kernels are split into ranges of
// ids scanned at the same time on separate read-only connections (kernel_range_scan.cpp) and merged
// here in id order, so the result is exactly that of one pass (see busy_time.h for the unions).
// The ranges come in rounds of kScanRoundRows kernels, and library calls are attributed (their FLOPs
// spread over their kernels) in id order as soon as the scan has passed their kernels
// (call_tallies.h): nothing per kernel is kept in memory, and per library call only the calls of
// about one round.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>

#include "analysis_parts.h"
#include "device_peaks.h"
#include "counter_flops.h"
#include "flop_precision.h"
#include "kernel_range_scan.h"
#include "tbdprof/analyzer/units.h"
#include "tbdprof/trace/fast_scans.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

// What the trace says about a library call with FLOPs.
struct CallInfo {
    Precision precision = Precision::other;
    double flops = 0;
    int64_t begin_ns = 0;
};

// Kernels per round of the scan: the calls held at once are those of about one round.
constexpr int64_t kScanRoundRows = int64_t{1} << 18;

struct DeviceState {
    DeviceState(int64_t device_id, const BusyFrame* frame, const ActivityStretches* activities)
        : id(device_id), busy(frame, activities) {}
    int64_t id;
    std::string name;
    double fp32_peak_flops = 0;
    bool listed = false;  // in the devices table
    KernelBusy busy;
    int64_t activity_ns = 0;  // copies and sets inside the window
    bool timed = false;
    int64_t last_start = 0;
    int64_t kernels_total = 0, kernels_in_window = 0;
    double fp32_flops = 0;
};

// Small traces are not worth a second connection.
constexpr int64_t kRowsPerExtraThread = 200000;

int thread_count(const AnalysisOptions& options, int64_t rows) {
    int wanted = options.threads;
    if (wanted <= 0) {
        if (const char* text = std::getenv("TBDPROF_THREADS")) wanted = std::atoi(text);
    }
    if (wanted > 0) return std::min(wanted, 64);  // asked for: honoured even for small traces (tests)
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return rows >= kRowsPerExtraThread ? std::min(2, cores) : 1;
}

class GpuScan {
public:
    GpuScan(TraceFile& trace, const Report& report, const AnalysisOptions& options)
        : db_(trace.db), path_(trace.path), window_(report.window), options_(options) {
        inputs_.everything = report.window.used == "all";
        const int64_t run_end = std::max<int64_t>(report.run.duration_ns, 1);
        inputs_.frame.bucket_count = std::max(1, options.utilization_buckets);
        inputs_.frame.bucket_ns = std::max<int64_t>(1, (run_end + inputs_.frame.bucket_count - 1) / inputs_.frame.bucket_count);
        inputs_.frame.window_begin = window_.begin_ns;
        inputs_.frame.window_end = window_.end_ns;
        if (report.iterations.count > 0) inputs_.iterations = report.iterations.spans;
        max_function_ = db_.query_int("SELECT max(id) FROM functions");
        functions_ = IdTable<FunctionStat>(max_function_);
        inputs_.max_call_id = db_.query_int("SELECT max(id) FROM library_calls");
        if (inputs_.max_call_id >= kDenseIdLimit) {  // not from tbdprof's builder: remember which exist
            trace::ReadOptions existing;
            existing.first_id = 0;
            trace::RowReader<trace::LibraryCallRow> calls(db_, existing);
            for (trace::LibraryCallRow call; calls.next(call);) inputs_.sparse_calls.insert(call.id);
        }
        counted_ = load_counter_kernels(db_, window_.begin_ns, window_.end_ns, inputs_.everything);
        for (const CounterKernel& kernel : counted_)
            if (kernel.library_call >= 0) counted_calls_.emplace(kernel.library_call, false);
        load_devices();
        load_activities();
    }

    enum class Outcome { done, out_of_order, seam_unresolved, calls_unordered };
    // threads 0: as options and TBDPROF_THREADS say. `one_round`: every kernel in one round (every
    // call held until the end), for traces whose calls' kernels lie far apart.
    Outcome scan(int threads, bool sorted, bool one_round, Progress& progress);
    void finish(Report& report);
    // The functions some kernel row runs, ascending.
    std::vector<int64_t> functions_run() const {
        std::vector<int64_t> ids;
        functions_.for_each_in_order([&](int64_t id, const FunctionStat& stat) {
            if (stat.rows > 0) ids.push_back(id);
        });
        return ids;
    }

private:
    DeviceState& device(int64_t id) {
        auto [it, inserted] = slot_of_.try_emplace(id, devices_.size());
        if (inserted) {
            auto activities = inputs_.activities.find(id);
            devices_.emplace_back(id, &inputs_.frame, activities == inputs_.activities.end() ? nullptr : &activities->second);
        }
        return devices_[it->second];
    }
    void load_devices();
    void load_activities();
    // One round: the kernels with ids in [first, last] split into `threads` ranges scanned at once.
    Outcome scan_round(int64_t first, int64_t last, int threads, bool sorted, ScanControl& control);
    Outcome merge(std::vector<PartResult>& parts);
    // Library calls below `bound`, in id order, each with its kernels' tally.
    bool peek_call();
    void attribute_calls_below(int64_t bound);
    void attribute_call(const trace::CallFlops& row);
    // After the last round: the calls not attributed yet.
    void attribute_remaining_calls();
    // After the calls: hardware counter FLOPs.
    void add_counter_flops(FlopMetrics& flops, const std::vector<CounterKernel>& kernels);
    void per_iteration_figures(Report& report) const;
    // finish's steps: per-device figures (returns the summed kernel-busy ns of the used devices),
    // throughput rates, kernel counts with their notes, and the top kernels.
    double device_figures(Report& report, double window_ns);
    void rates(FlopMetrics& flops, double window_ns, double busy_sum) const;
    void kernel_counts(Report& report) const;
    void top_kernels(Report& report);

    trace::Database& db_;
    const std::string& path_;  // for the other parts' connections
    Window window_;
    const AnalysisOptions& options_;
    ScanInputs inputs_;
    int64_t max_function_ = 0;
    std::vector<DeviceState> devices_;  // devices table, then copies and sets, then kernels: first seen first
    std::unordered_map<int64_t, size_t> slot_of_;
    std::vector<trace::Database> connections_;  // the extra parts' own, kept over the rounds
    std::vector<double> part_seconds_;
    IdTable<FunctionStat> functions_{-1};
    int64_t total_kernels_ = 0, host_timed_ = 0, kernels_in_window_ = 0, absurd_kernels_ = 0;
    int64_t kernel_time_ns_ = 0, no_flop_ns_ = 0;
    int64_t outside_iterations_ = 0, outside_iterations_ns_ = 0;
    // Library calls: read in id order on a connection of their own while the rounds go on.
    OpenCalls open_calls_;
    std::optional<trace::Database> calls_db_;
    std::optional<trace::CallFlopsReader> calls_;
    std::optional<trace::CallFlops> next_call_;
    FlopMetrics flops_;  // what the calls add: FLOPs by precision and the calls counted
    std::map<std::pair<int64_t, int64_t>, double> mixed_flops_;  // (call, function): added in this order
    int64_t flop_ns_ = 0;                                        // in-window time of kernels in calls with FLOPs
    // Kernels with hardware counter FLOPs, the calls they name, and of those the ones with FLOPs:
    // their window FLOPs and kernels.
    std::vector<CounterKernel> counted_;
    std::unordered_map<int64_t, bool> counted_calls_;  // true: the call exists and has FLOPs
    std::unordered_map<int64_t, std::pair<double, int64_t>> call_window_;
    bool timing_ = std::getenv("TBDPROF_ANALYZER_TIMING") != nullptr;
};

void GpuScan::load_devices() {
    trace::RowReader<trace::DeviceRow> rows(db_);
    for (trace::DeviceRow row; rows.next(row);) {
        DeviceState& state = device(row.id);
        state.name = row.name;
        state.fp32_peak_flops = std::max(0.0, row.fp32_peak_flops);
        state.listed = true;
    }
}

void GpuScan::load_activities() {
    // Copies and sets with a device interval, merged in start order (copies first at equal starts).
    trace::ReadOptions by_time;
    by_time.by_time = true;
    trace::RowReader<trace::CopyRow> copies(db_, by_time);
    trace::RowReader<trace::SetRow> sets(db_, by_time);
    trace::CopyRow copy;
    trace::SetRow set;
    bool more_copies = copies.next(copy), more_sets = sets.next(set);
    while (more_copies || more_sets) {
        const bool take_copy = more_copies && (!more_sets || copy.start_ns <= set.start_ns);
        const int64_t id = take_copy ? copy.device : set.device, start = take_copy ? copy.start_ns : set.start_ns;
        const std::optional<int64_t> duration = take_copy ? copy.duration_ns : set.duration_ns;
        (take_copy ? more_copies : more_sets) = take_copy ? copies.next(copy) : sets.next(set);
        if (!duration || *duration < 0) continue;
        int64_t end = 0;
        if (__builtin_add_overflow(start, *duration, &end)) end = INT64_MAX;
        device(id);  // listed in order of first copy or set, after the devices table
        inputs_.activities[id].add_sorted(start, end);
    }
    for (auto& [id, stretches] : inputs_.activities) stretches.finish();
    for (DeviceState& state : devices_) {
        auto it = inputs_.activities.find(state.id);
        if (it != inputs_.activities.end()) state.activity_ns = it->second.measure(window_.begin_ns, window_.end_ns);
        state.busy = KernelBusy(&inputs_.frame, it == inputs_.activities.end() ? nullptr : &it->second);
    }
}

GpuScan::Outcome GpuScan::scan(int threads, bool sorted, bool one_round, Progress& progress) {
    // Two queries: SQLite answers a lone min() or max() of the key from the b-tree's edge, but
    // both in one SELECT with a full scan.
    const int64_t first = db_.query_int("SELECT min(id) FROM kernels");
    const int64_t last = db_.query_int("SELECT max(id) FROM kernels");
    const bool empty = db_.query_int("SELECT count(*) FROM (SELECT 1 FROM kernels LIMIT 1)") == 0;
    const int64_t rows = empty ? 0 : last - first + 1;
    if (threads <= 0) threads = thread_count(options_, rows);
    if (sorted || rows < threads) threads = 1;
    // A trace out of time order is read sorted by start, which only one range over every id can be.
    const int64_t round_rows = sorted || one_round || rows == 0 ? std::max<int64_t>(rows, 1)
                               : options_.scan_round_rows > 0   ? options_.scan_round_rows
                                                                : kScanRoundRows;
    ScanControl control;
    control.rows_expected = rows;
    control.progress = &progress;
    // Calls read between rounds need a connection of their own: the kernel scan registers its
    // function on the main one, which SQLite refuses while another statement is open there.
    if (round_rows < rows) calls_db_.emplace(trace::open_trace(path_));
    for (int64_t round_first = first;;) {
        // The last round ends at the last id (and an empty table gives one empty round).
        const int64_t round_last = rows - (round_first - first) <= round_rows ? last : round_first + round_rows - 1;
        const Outcome outcome = scan_round(round_first, round_last, threads, sorted, control);
        if (outcome != Outcome::done) return outcome;
        if (round_last == last) break;
        round_first = round_last + 1;
    }
    progress.finish();
    if (timing_) {
        for (size_t i = 0; i < part_seconds_.size(); ++i)
            std::fprintf(stderr, "tbdprof analyzer:   kernel part %zu: %.3f s\n", i, part_seconds_[i]);
    }
    for (DeviceState& state : devices_) state.busy.close();
    attribute_remaining_calls();
    return Outcome::done;
}

GpuScan::Outcome GpuScan::scan_round(int64_t first, int64_t last, int threads, bool sorted, ScanControl& control) {
    const int64_t rows = last - first + 1;
    if (rows < threads) threads = 1;
    std::vector<PartResult> parts;
    std::vector<PartRange> ranges;
    for (int i = 0; i < threads; ++i) {
        // Equal id ranges; the last one ends at the round's last id.
        PartRange range;
        range.first_id = first + rows / threads * i;
        range.last_id = i + 1 == threads ? last : first + rows / threads * (i + 1) - 1;
        range.sorted = sorted;
        ranges.push_back(range);
        parts.emplace_back(max_function_, std::max<int64_t>(rows / threads, 1024));
    }
    while (connections_.size() + 1 < ranges.size()) connections_.push_back(trace::open_trace(path_));
    std::vector<std::exception_ptr> errors(ranges.size());
    auto run_part = [&](size_t i, const trace::Database& db) {
        try {
            scan_kernel_range(db, inputs_, ranges[i], control, i == 0, parts[i]);
        } catch (...) {
            errors[i] = std::current_exception();
            control.stop = true;
        }
    };
    std::vector<std::thread> workers;
    // Each extra part on its own connection, opened with the same defensive settings as the first.
    for (size_t i = 1; i < ranges.size(); ++i) workers.emplace_back([&, i] { run_part(i, connections_[i - 1]); });
    // Meanwhile, on the calls' own connection: no kernel after the previous rounds may name a call
    // below the lowest one they named (a part that finds one says so), so those are attributed.
    std::exception_ptr calls_error;
    if (calls_db_) {
        workers.emplace_back([&] {
            try {
                attribute_calls_below(inputs_.calls_attributed_below);
            } catch (...) {
                calls_error = std::current_exception();
                control.stop = true;
            }
        });
    }
    run_part(0, db_);
    for (std::thread& worker : workers) worker.join();
    if (calls_error) std::rethrow_exception(calls_error);
    for (const std::exception_ptr& error : errors) {
        if (error) std::rethrow_exception(error);
    }
    part_seconds_.resize(std::max(part_seconds_.size(), parts.size()), 0.0);
    for (size_t i = 0; i < parts.size(); ++i) part_seconds_[i] += parts[i].seconds;
    int64_t lowest_call = INT64_MAX;
    for (const PartResult& part : parts) {
        if (part.out_of_order) return Outcome::out_of_order;
        if (part.late_call) return Outcome::calls_unordered;
        lowest_call = std::min(lowest_call, part.lowest_call);
    }
    const Outcome outcome = merge(parts);
    if (outcome != Outcome::done) return outcome;
    for (const PartResult& part : parts) open_calls_.add(part.calls, part.mixed);
    if (lowest_call != INT64_MAX)
        inputs_.calls_attributed_below = std::max(inputs_.calls_attributed_below, lowest_call);
    return Outcome::done;
}

// Joins a round's parts in id order: devices first seen in a later part come after those of earlier
// ones, exactly as one pass would list them.
GpuScan::Outcome GpuScan::merge(std::vector<PartResult>& parts) {
    for (PartResult& part : parts) {
        for (PartDevice& piece : part.devices) {
            DeviceState& state = device(piece.id);
            if (piece.timed) {
                // The seam is in time order only if this part starts where the previous ones ended.
                if (state.timed && piece.first_start < state.last_start) return Outcome::out_of_order;
                state.timed = true;
                state.last_start = piece.last_start;
            }
            if (!state.busy.absorb(std::move(piece.busy))) return Outcome::seam_unresolved;
            state.kernels_total += piece.kernels_total;
            state.kernels_in_window += piece.kernels_in_window;
        }
        part.functions.for_each([&](int64_t id, FunctionStat& stat) {
            if (stat.rows == 0) return;
            FunctionStat& total = functions_[id];
            total.rows += stat.rows;
            if (stat.count == 0) return;
            total.min_ns = total.count == 0 ? stat.min_ns : std::min(total.min_ns, stat.min_ns);
            total.max_ns = total.count == 0 ? stat.max_ns : std::max(total.max_ns, stat.max_ns);
            total.count += stat.count;
            add_saturating(total.total_ns, stat.total_ns);
        });
        total_kernels_ += part.kernels;
        host_timed_ += part.host_timed;
        absurd_kernels_ += part.absurd;
        kernels_in_window_ += part.in_window;
        add_saturating(kernel_time_ns_, part.kernel_time_ns);
        outside_iterations_ += part.outside_iterations;
        outside_iterations_ns_ += part.outside_iterations_ns;
    }
    return Outcome::done;
}

// Calls in ascending id order, the order the sums below were always taken in (FLOPs are doubles: a
// different order could change the last digit). With tbdprof's builder's ids (0 up to the dense
// limit) calls with negative ids, which no kernel is tallied against, come after all others.
bool GpuScan::peek_call() {
    if (next_call_) return true;
    if (!calls_) {
        const bool dense_calls = inputs_.max_call_id >= 0 && inputs_.max_call_id < kDenseIdLimit;
        calls_.emplace(calls_db_ ? *calls_db_ : db_, dense_calls ? 0 : INT64_MIN, INT64_MAX);
    }
    next_call_.emplace();
    if (calls_->next(*next_call_)) return true;
    next_call_.reset();
    return false;
}

void GpuScan::attribute_calls_below(int64_t bound) {
    for (; peek_call() && next_call_->id < bound; next_call_.reset()) attribute_call(*next_call_);
    open_calls_.drop_below(bound);
}

void GpuScan::attribute_remaining_calls() {
    for (; peek_call(); next_call_.reset()) attribute_call(*next_call_);
    if (inputs_.max_call_id >= 0 && inputs_.max_call_id < kDenseIdLimit) {
        calls_.emplace(calls_db_ ? *calls_db_ : db_, INT64_MIN, -1);
        for (trace::CallFlops row; calls_->next(row);) attribute_call(row);
    }
    calls_.reset();
    calls_db_.reset();
    for (const auto& [key, value] : mixed_flops_) functions_[key.second].flops += value;
    // Every other kernel in the window is one without FLOP information.
    no_flop_ns_ = kernel_time_ns_ - flop_ns_;
}

// A call's FLOPs spread over its kernels by duration (by count when durations are unknown).
void GpuScan::attribute_call(const trace::CallFlops& row) {
    const double call_flops = row.flops.value_or(0.0);
    if (!(call_flops > 0) || call_flops > 1e30) return;  // no FLOP information (or nonsense)
    if (auto counted = counted_calls_.find(row.id); counted != counted_calls_.end()) counted->second = true;
    CallInfo info;
    info.begin_ns = row.begin_ns;
    info.flops = call_flops;
    // The collector's precision (it knows the handle's math mode) when the trace has it; else
    // the types, else the name (legacy entry points name their type).
    info.precision = row.precision.empty() ? classify_flops(row.name, row.compute_type, row.a_type)
                                           : precision_from_name(row.precision);
    auto share_of = [](const CallTally& call, int64_t window_ns, int64_t window_count) {
        if (call.total_ns > 0) return static_cast<double>(window_ns) / static_cast<double>(call.total_ns);
        return call.count > 0 ? static_cast<double>(window_count) / static_cast<double>(call.count) : 0.0;
    };
    const int64_t id = row.id;
    const CallTally* tally = id >= 0 ? open_calls_.take(id) : nullptr;
    const CallTally call = tally != nullptr ? *tally : CallTally{};
    if (call.count > 0 && call.mixed) {
        const MixedShares& shares = open_calls_.shares();
        for (auto it = shares.lower_bound({id, INT64_MIN}); it != shares.end() && it->first.first == id; ++it)
            mixed_flops_[{id, it->first.second}] =
                info.flops * share_of(call, it->second.window_ns, it->second.window_count);
    }
    add_saturating(flop_ns_, call.window_ns);
    double in_window = 0;
    if (call.count > 0) {
        in_window = info.flops * share_of(call, call.window_ns, call.window_count);
    } else if (inputs_.everything || (info.begin_ns >= window_.begin_ns && info.begin_ns < window_.end_ns)) {
        in_window = info.flops;  // no kernel recorded for it: attribute to the call itself
    }
    if (in_window <= 0) return;
    if (counted_calls_.count(id) != 0) call_window_[id] = {in_window, call.window_count};  // see add_counter_flops
    ++flops_.library_calls;
    flops_.by_precision[static_cast<size_t>(info.precision)].flops += in_window;
    if (info.precision == Precision::fp32) {
        flops_.fp32_flops += in_window;
        if (call.count > 0) device(call.device).fp32_flops += in_window;
    } else if (is_tensor_core(info.precision)) {
        flops_.tensor_flops += in_window;
    } else {
        flops_.other_flops += in_window;
    }
    if (call.count > 0 && !call.mixed) functions_[call.function].flops += in_window;
}

// Kernels with counter FLOPs: those outside library calls with FLOPs are added to the figures (and
// stop counting as kernels without FLOP information); those inside are compared with their call's
// shape FLOPs, call by call, when every window kernel of the call was counted.
void GpuScan::add_counter_flops(FlopMetrics& flops, const std::vector<CounterKernel>& kernels) {
    CounterFlopSources& sources = flops.counters;
    sources.collected = !kernels.empty();
    std::unordered_map<int64_t, std::pair<double, int64_t>> counted_in_call;  // call -> (FLOPs, kernels)
    for (const CounterKernel& kernel : kernels) {
        if (!kernel.available) {
            ++sources.kernels_not_available;
            continue;
        }
        ++sources.kernels_counted;
        double total = 0;
        for (double value : kernel.flops) total += value;
        const auto call = kernel.library_call >= 0 ? counted_calls_.find(kernel.library_call) : counted_calls_.end();
        if (call != counted_calls_.end() && call->second) {
            auto& [call_flops, call_kernels] = counted_in_call[kernel.library_call];
            call_flops += total;
            ++call_kernels;
            continue;
        }
        ++sources.kernels_added;
        sources.added_flops += total;
        no_flop_ns_ -= kernel.duration_ns;
        functions_[kernel.function].flops += total;
        for (int p = 0; p < kPrecisionCount; ++p) {
            const double value = kernel.flops[static_cast<size_t>(p)];
            if (value == 0) continue;
            PrecisionFlops& precision = flops.by_precision[static_cast<size_t>(p)];
            precision.flops += value;
            precision.counter_flops += value;
            if (static_cast<Precision>(p) == Precision::fp32) {
                flops.fp32_flops += value;
                device(kernel.device).fp32_flops += value;
            } else if (is_tensor_core(static_cast<Precision>(p))) {
                flops.tensor_flops += value;
            } else {
                flops.other_flops += value;
            }
        }
    }
    for (const auto& [call, counted] : counted_in_call) {
        const auto window = call_window_.find(call);
        if (window == call_window_.end() || window->second.second != counted.second) continue;
        ++sources.calls_compared;
        sources.compared_library_flops += window->second.first;
        sources.compared_counter_flops += counted.first;
    }
}

// Per-iteration figures are window totals divided by the iterations counted in the window. They
// are withheld when the window has room for iterations that were not counted (the time outside the
// counted ones is at least the shortest of them) and kernels ran there: the reader left out
// overlapping spans, and the division would not be a step's work. Kernels that start just outside
// host-timed step ranges (device work lags the host) do not count against it.
void GpuScan::per_iteration_figures(Report& report) const {
    const int64_t count = report.iterations.count;
    if (count <= 0) return;
    IterationMetrics& it = report.iterations;
    it.kernels_outside = outside_iterations_;
    int64_t covered = 0, shortest = INT64_MAX;
    for (const auto& [begin, end] : it.spans) {
        // The first may have begun on the host before the window did (a lagging device).
        covered += end - std::max(begin, report.window.begin_ns);
        shortest = std::min(shortest, end - begin);
    }
    const int64_t uncovered = (report.window.end_ns - report.window.begin_ns) - covered;
    if (outside_iterations_ > 0 && uncovered >= shortest) {
        report.notes.push_back(std::to_string(outside_iterations_) + " kernels of the window (" +
                               format_duration_ns(static_cast<double>(outside_iterations_ns_)) +
                               " of kernel time) start outside the " + std::to_string(count) +
                               " iterations counted in it, which leave " +
                               format_duration_ns(static_cast<double>(uncovered)) +
                               " of the window uncovered: no per-iteration figures are given");
        return;
    }
    const double n = static_cast<double>(count);
    FlopMetrics& flops = report.flops;
    flops.fp32_flops_per_iteration = flops.fp32_flops / n;
    flops.tensor_flops_per_iteration = flops.tensor_flops / n;
    for (PrecisionFlops& p : flops.by_precision) p.per_iteration = p.flops / n;
    it.kernels_per_iteration = static_cast<double>(kernels_in_window_) / n;
    it.kernel_time_per_iteration_ns = static_cast<double>(kernel_time_ns_) / n;
}

DeviceMetrics device_metrics(const DeviceState& state, double window_ns) {
    DeviceMetrics device;
    device.id = state.id;
    device.name = state.name.empty() ? "device " + std::to_string(state.id) : state.name;
    device.fp32_peak_flops = state.fp32_peak_flops;
    device.kernel_busy_ns = state.busy.window_ns();
    // |kernels ∪ copies and sets| = |kernels| + |copies and sets| - |both|.
    device.busy_ns = device.kernel_busy_ns + state.activity_ns - state.busy.activity_overlap_ns();
    device.utilization = static_cast<double>(device.kernel_busy_ns) / window_ns;
    device.busy_utilization = static_cast<double>(device.busy_ns) / window_ns;
    device.fp32_flops = state.fp32_flops;
    device.fp32_utilization =
        state.fp32_peak_flops > 0 ? state.fp32_flops * 1e9 / window_ns / state.fp32_peak_flops : 0;
    device.kernels = state.kernels_in_window;
    return device;
}

double GpuScan::device_figures(Report& report, double window_ns) {
    FlopMetrics& flops = report.flops;
    const double bucket_ns = static_cast<double>(inputs_.frame.bucket_ns);
    double busy_sum = 0, utilization_sum = 0, busy_utilization_sum = 0;
    int used_devices = 0;
    for (DeviceState& state : devices_) {
        if (!state.listed && state.kernels_total == 0) continue;
        DeviceMetrics device = device_metrics(state, window_ns);
        if (state.kernels_total > 0) {
            ++used_devices;
            utilization_sum += device.utilization;
            busy_utilization_sum += device.busy_utilization;
            busy_sum += static_cast<double>(device.kernel_busy_ns);
            flops.fp32_peak_flops += state.fp32_peak_flops;
            const PeakRatios ratios = peak_ratios(state.name);
            for (int p = 0; p < kPrecisionCount; ++p) {
                flops.by_precision[static_cast<size_t>(p)].peak_flops += state.fp32_peak_flops * ratios[static_cast<size_t>(p)];
            }
            const std::vector<int64_t>& buckets = state.busy.buckets();
            std::vector<double> fractions(buckets.size());
            for (size_t i = 0; i < fractions.size(); ++i) fractions[i] = static_cast<double>(buckets[i]) / bucket_ns;
            report.utilization_series.devices.emplace_back(state.id, std::move(fractions));
        }
        report.devices.push_back(std::move(device));
    }
    report.utilization_series.bucket_ns = inputs_.frame.bucket_ns;
    if (used_devices > 0) {
        report.gpu_utilization = utilization_sum / used_devices;
        report.busy_utilization = busy_utilization_sum / used_devices;
    } else {
        report.notes.push_back("the trace has no kernels: utilization and FLOPs are zero");
    }
    return busy_sum;
}

void GpuScan::rates(FlopMetrics& flops, double window_ns, double busy_sum) const {
    flops.fp32_flops_per_s = flops.fp32_flops * 1e9 / window_ns;
    flops.fp32_flops_per_busy_s = busy_sum > 0 ? flops.fp32_flops * 1e9 / busy_sum : 0;
    flops.fp32_utilization = flops.fp32_peak_flops > 0 ? flops.fp32_flops_per_s / flops.fp32_peak_flops : 0;
    flops.tensor_flops_per_s = flops.tensor_flops * 1e9 / window_ns;
    for (PrecisionFlops& p : flops.by_precision) {
        p.flops_per_s = p.flops * 1e9 / window_ns;
        p.utilization = p.peak_flops > 0 ? p.flops_per_s / p.peak_flops : 0;
    }
    flops.kernel_time_ns = kernel_time_ns_;
    flops.kernel_time_without_flops_ns = no_flop_ns_;
    flops.no_flop_info_share = kernel_time_ns_ > 0 ? static_cast<double>(no_flop_ns_) / static_cast<double>(kernel_time_ns_) : 0;
}

void GpuScan::kernel_counts(Report& report) const {
    report.kernels.total = total_kernels_;
    report.kernels.count = kernels_in_window_;
    report.kernels.host_timed = host_timed_;
    if (absurd_kernels_ > 0) {
        report.notes.push_back(std::to_string(absurd_kernels_) +
                               " kernel rows have impossible times (a start before the trace, a negative duration, or "
                               "longer than 13 days): left out of every figure");
    }
    if (host_timed_ > 0) {
        report.notes.push_back(std::to_string(host_timed_) +
                               " kernels have no device timestamps (host-timed): they are left out of utilization");
    }
}

// Top kernels by total time.
void GpuScan::top_kernels(Report& report) {
    std::vector<std::pair<int64_t, FunctionStat>> ranked;
    functions_.for_each([&](int64_t id, FunctionStat& stat) {
        if (stat.count > 0) ranked.emplace_back(id, stat);
    });
    const size_t top = std::min(ranked.size(), static_cast<size_t>(std::max(0, options_.top_kernels)));
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(top), ranked.end(),
                      [](const auto& a, const auto& b) {
                          return a.second.total_ns != b.second.total_ns ? a.second.total_ns > b.second.total_ns
                                                                        : a.first < b.first;
                      });
    const std::unordered_map<int64_t, std::string> names = top > 0 ? trace::read_function_names(db_)
                                                                   : std::unordered_map<int64_t, std::string>{};
    for (size_t i = 0; i < top; ++i) {
        const auto& [id, stat] = ranked[i];
        KernelStat kernel;
        const auto name = names.find(id);
        kernel.name = name != names.end() ? name->second : "function " + std::to_string(id);
        kernel.count = stat.count;
        kernel.total_ns = stat.total_ns;
        kernel.mean_ns = static_cast<double>(stat.total_ns) / static_cast<double>(stat.count);
        kernel.flops = stat.flops;
        kernel.min_ns = stat.min_ns;
        kernel.max_ns = stat.max_ns;
        kernel.share = kernel_time_ns_ > 0 ? static_cast<double>(stat.total_ns) / static_cast<double>(kernel_time_ns_) : 0;
        report.kernels.top.push_back(std::move(kernel));
    }
}

void GpuScan::finish(Report& report) {
    report.flops = flops_;  // the calls' FLOPs, attributed during the scan
    add_counter_flops(report.flops, counted_);
    // Ratios of integer nanoseconds stay exact where they can (0.4, not 0.39999999999999997).
    const double window_ns = static_cast<double>(report.window.end_ns - report.window.begin_ns);
    const double busy_sum = device_figures(report, window_ns);
    rates(report.flops, window_ns, busy_sum);
    per_iteration_figures(report);
    kernel_counts(report);
    top_kernels(report);
}

}  // namespace

std::vector<int64_t> scan_gpu(TraceFile& trace, const AnalysisOptions& options, Progress& progress, Report& report) {
    using Outcome = GpuScan::Outcome;
    const auto finish = [&](GpuScan& scan) {
        scan.finish(report);
        return scan.functions_run();
    };
    Outcome outcome;
    {
        GpuScan scan(trace, report, options);
        outcome = scan.scan(0, false, false, progress);
        if (outcome == Outcome::done) return finish(scan);
    }
    if (outcome == Outcome::seam_unresolved || outcome == Outcome::calls_unordered) {
        // A kernel of one part outlasts thousands of busy stretches of the next, or a call's kernels
        // lie rounds apart: one pass over all kernels, every call held to the end.
        if (std::getenv("TBDPROF_ANALYZER_TIMING"))
            std::fprintf(
                stderr, "tbdprof analyzer: kernels scanned again in one pass (%s)\n",
                outcome == Outcome::seam_unresolved ? "a seam left unresolved" : "a call's kernels rounds apart");
        GpuScan scan(trace, report, options);
        outcome = scan.scan(1, false, true, progress);
        if (outcome == Outcome::done) return finish(scan);
    }
    // Kernels out of time order (not written by tbdprof's builder): let SQLite sort them.
    report.notes.push_back("kernels were not stored in time order; sorted them first");
    GpuScan sorted(trace, report, options);
    sorted.scan(1, true, true, progress);
    return finish(sorted);
}

}  // namespace tbdprof::analyzer
