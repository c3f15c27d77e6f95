// The GPU scan: kernels in time order (id order is time order per device in a well-formed trace),
// with copies and sets, library calls and devices read first. The kernels are split into ranges of
// ids scanned at the same time on separate read-only connections (kernel_range_scan.cpp) and merged
// here in id order, so the result is exactly that of one pass (see busy_time.h for the unions).
// Nothing per kernel is kept in memory.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <thread>

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

// What the trace says about a library call.
struct CallInfo {
    bool exists = false;
    bool has_flops = false;
    Precision precision = Precision::other;
    double flops = 0;
    int64_t begin_ns = 0;
};

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
        inputs_.max_call_id = db_.query_int("SELECT max(id) FROM library_calls");
        if (inputs_.max_call_id >= kDenseIdLimit) {  // not from tbdprof's builder: remember which exist
            trace::ReadOptions existing;
            existing.first_id = 0;
            trace::RowReader<trace::LibraryCallRow> calls(db_, existing);
            for (trace::LibraryCallRow call; calls.next(call);) inputs_.sparse_calls.insert(call.id);
        }
        load_devices();
        load_activities();
    }

    enum class Outcome { done, out_of_order, seam_unresolved };
    // threads 0: as options and TBDPROF_THREADS say.
    Outcome scan(int threads, bool sorted, Progress& progress);
    void finish(Report& report);

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
    void load_library_calls(const trace::Database& db);
    void load_activities();
    Outcome merge(std::vector<PartResult>& parts);
    // `keep_windows`: remember each call's window FLOPs for the counter comparison (only when the
    // trace has counted kernels: a table the size of the library calls otherwise).
    void combine_calls(FlopMetrics& flops, bool keep_windows);
    // After combine_calls: hardware counter FLOPs.
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
    std::vector<PartResult> parts_;
    IdTable<FunctionStat> functions_{-1};
    int64_t total_kernels_ = 0, host_timed_ = 0, kernels_in_window_ = 0, absurd_kernels_ = 0;
    int64_t kernel_time_ns_ = 0, no_flop_ns_ = 0;
    int64_t outside_iterations_ = 0, outside_iterations_ns_ = 0;
    IdTable<CallInfo> calls_{-1};
    std::unordered_map<int64_t, std::pair<double, int64_t>> call_window_;  // call -> (FLOPs, kernels) in window
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

void GpuScan::load_library_calls(const trace::Database& db) {
    calls_ = IdTable<CallInfo>(inputs_.max_call_id);
    trace::for_each_call_flops(db, [&](const trace::CallFlops& row) {
        CallInfo& call = calls_[row.id];
        call.exists = true;
        call.begin_ns = row.begin_ns;
        const double flops = row.flops.value_or(0.0);
        if (!(flops > 0) || flops > 1e30) return;  // no FLOP information (or nonsense)
        call.flops = flops;
        call.has_flops = true;
        // The collector's precision (it knows the handle's math mode) when the trace has it; else
        // the types, else the name (legacy entry points name their type).
        call.precision = row.precision.empty() ? classify_flops(row.name, row.compute_type, row.a_type)
                                               : precision_from_name(row.precision);
    });
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

GpuScan::Outcome GpuScan::scan(int threads, bool sorted, Progress& progress) {
    // Two queries: SQLite answers a lone min() or max() of the key from the b-tree's edge, but
    // both in one SELECT with a full scan.
    const int64_t first = db_.query_int("SELECT min(id) FROM kernels");
    const int64_t last = db_.query_int("SELECT max(id) FROM kernels");
    const bool empty = db_.query_int("SELECT count(*) FROM (SELECT 1 FROM kernels LIMIT 1)") == 0;
    const int64_t rows = empty ? 0 : last - first + 1;
    if (threads <= 0) threads = thread_count(options_, rows);
    if (sorted || rows < threads) threads = 1;
    ScanControl control;
    control.rows_expected = rows;
    control.progress = &progress;
    parts_.clear();
    std::vector<PartRange> ranges;
    for (int i = 0; i < threads; ++i) {
        // Equal id ranges; the last one ends at the last id (and an empty table gives one empty part).
        PartRange range;
        range.first_id = first + rows / threads * i;
        range.last_id = i + 1 == threads ? last : first + rows / threads * (i + 1) - 1;
        range.sorted = sorted;
        ranges.push_back(range);
        parts_.emplace_back(max_function_, inputs_.max_call_id);
    }
    std::vector<std::exception_ptr> errors(ranges.size());
    auto run_part = [&](size_t i, const trace::Database& db) {
        try {
            scan_kernel_range(db, inputs_, ranges[i], control, i == 0, parts_[i]);
        } catch (...) {
            errors[i] = std::current_exception();
            control.stop = true;
        }
    };
    std::vector<std::thread> workers;
    std::exception_ptr calls_error;
    if (threads > 1) {
        // Library calls are needed only at the merge: read them meanwhile, on a connection of their own.
        workers.emplace_back([&] {
            try {
                load_library_calls(trace::open_trace(path_));
            } catch (...) {
                calls_error = std::current_exception();
                control.stop = true;
            }
        });
    } else {
        load_library_calls(db_);
    }
    for (size_t i = 1; i < ranges.size(); ++i) {
        workers.emplace_back([&, i] {
            try {
                // Its own connection, opened with the same defensive settings as the first.
                run_part(i, trace::open_trace(path_));
            } catch (...) {
                errors[i] = std::current_exception();
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
    if (timing_) {
        for (size_t i = 0; i < parts_.size(); ++i) {
            std::fprintf(stderr, "tbdprof analyzer:   kernels %lld..%lld: %.3f s\n", static_cast<long long>(ranges[i].first_id),
                         static_cast<long long>(ranges[i].last_id), parts_[i].seconds);
        }
    }
    progress.finish();
    for (const PartResult& part : parts_) {
        if (part.out_of_order) return Outcome::out_of_order;
    }
    return merge(parts_);
}

// Joins the parts in id order: devices first seen in a later part come after those of earlier ones,
// exactly as one pass would list them.
GpuScan::Outcome GpuScan::merge(std::vector<PartResult>& parts) {
    functions_ = IdTable<FunctionStat>(max_function_);
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
            if (stat.count == 0) return;
            FunctionStat& total = functions_[id];
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
    for (DeviceState& state : devices_) state.busy.close();
    return Outcome::done;
}

// Each call's FLOPs spread over its kernels by duration (by count when durations are unknown), with
// the parts' tallies of the call added up first.
void GpuScan::combine_calls(FlopMetrics& flops, bool keep_windows) {
    auto share_of = [](const CallTally& call, int64_t window_ns, int64_t window_count) {
        if (call.total_ns > 0) return static_cast<double>(window_ns) / static_cast<double>(call.total_ns);
        return call.count > 0 ? static_cast<double>(window_count) / static_cast<double>(call.count) : 0.0;
    };
    std::map<std::pair<int64_t, int64_t>, double> mixed_flops;  // (call, function): added in this order
    std::map<int64_t, MixedShare> shares;                       // of the call at hand, by function
    int64_t flop_ns = 0;  // in-window time of kernels in calls with FLOPs
    calls_.for_each_in_order([&](int64_t id, const CallInfo& info) {
        if (!info.exists || !info.has_flops) return;
        CallTally call{};
        bool has_function = false, has_device = false;
        for (const PartResult& part : parts_) {
            const CallTally* piece = part.calls.find(id);
            if (piece == nullptr || piece->count == 0) continue;
            if (!has_device) call.device = piece->device;
            has_device = true;
            call.count += piece->count;
            add_saturating(call.total_ns, piece->total_ns);
            add_saturating(call.window_ns, piece->window_ns);
            call.window_count += piece->window_count;
            if (piece->mixed || (has_function && piece->function != call.function)) call.mixed = true;
            if (!has_function) call.function = piece->function;
            has_function = true;
        }
        if (call.mixed) {
            shares.clear();
            for (const PartResult& part : parts_) {
                const CallTally* piece = part.calls.find(id);
                if (piece == nullptr || piece->count == 0) continue;
                if (!piece->mixed) {
                    add_saturating(shares[piece->function].window_ns, piece->window_ns);
                    shares[piece->function].window_count += piece->window_count;
                    continue;
                }
                for (auto it = part.mixed.lower_bound({id, INT64_MIN}); it != part.mixed.end() && it->first.first == id; ++it) {
                    add_saturating(shares[it->first.second].window_ns, it->second.window_ns);
                    shares[it->first.second].window_count += it->second.window_count;
                }
            }
            for (const auto& [function, share] : shares) {
                mixed_flops[{id, function}] = info.flops * share_of(call, share.window_ns, share.window_count);
            }
        }
        add_saturating(flop_ns, call.window_ns);
        double in_window = 0;
        if (call.count > 0) {
            in_window = info.flops * share_of(call, call.window_ns, call.window_count);
        } else if (inputs_.everything || (info.begin_ns >= window_.begin_ns && info.begin_ns < window_.end_ns)) {
            in_window = info.flops;  // no kernel recorded for it: attribute to the call itself
        }
        if (in_window <= 0) return;
        if (keep_windows) call_window_[id] = {in_window, call.window_count};
        ++flops.library_calls;
        flops.by_precision[static_cast<size_t>(info.precision)].flops += in_window;
        if (info.precision == Precision::fp32) {
            flops.fp32_flops += in_window;
            if (has_device) device(call.device).fp32_flops += in_window;
        } else if (is_tensor_core(info.precision)) {
            flops.tensor_flops += in_window;
        } else {
            flops.other_flops += in_window;
        }
        if (has_function && !call.mixed) functions_[call.function].flops += in_window;
    });
    for (const auto& [key, value] : mixed_flops) functions_[key.second].flops += value;
    // Every other kernel in the window is one without FLOP information.
    no_flop_ns_ = kernel_time_ns_ - flop_ns;
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
        const CallInfo* call = kernel.library_call >= 0 ? calls_.find(kernel.library_call) : nullptr;
        if (call != nullptr && call->exists && call->has_flops) {
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
        covered += end - begin;
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
    const std::vector<CounterKernel> counted =
        load_counter_kernels(db_, window_.begin_ns, window_.end_ns, inputs_.everything);
    combine_calls(report.flops, !counted.empty());
    add_counter_flops(report.flops, counted);
    // Ratios of integer nanoseconds stay exact where they can (0.4, not 0.39999999999999997).
    const double window_ns = static_cast<double>(report.window.end_ns - report.window.begin_ns);
    const double busy_sum = device_figures(report, window_ns);
    rates(report.flops, window_ns, busy_sum);
    per_iteration_figures(report);
    kernel_counts(report);
    top_kernels(report);
}

}  // namespace

void scan_gpu(TraceFile& trace, const AnalysisOptions& options, Progress& progress, Report& report) {
    using Outcome = GpuScan::Outcome;
    Outcome outcome;
    {
        GpuScan scan(trace, report, options);
        outcome = scan.scan(0, false, progress);
        if (outcome == Outcome::done) return scan.finish(report);
    }
    if (outcome == Outcome::seam_unresolved) {
        // A kernel of one part outlasts thousands of busy stretches of the next: one pass instead.
        GpuScan scan(trace, report, options);
        outcome = scan.scan(1, false, progress);
        if (outcome == Outcome::done) return scan.finish(report);
    }
    // Kernels out of time order (not written by tbdprof's builder): let SQLite sort them.
    report.notes.push_back("kernels were not stored in time order; sorted them first");
    GpuScan sorted(trace, report, options);
    sorted.scan(1, true, progress);
    sorted.finish(report);
}

}  // namespace tbdprof::analyzer
