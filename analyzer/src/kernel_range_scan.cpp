#include "kernel_range_scan.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>

#include "tbdprof/trace/fast_scans.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

int64_t saturating_end(int64_t start, int64_t duration) {
    int64_t end = 0;
    return __builtin_add_overflow(start, duration, &end) ? INT64_MAX : end;
}

// Devices of one part in order of their first kernel; the last one looked up is cached (kernels
// of one device usually come in runs).
class PartDevices {
public:
    PartDevices(const ScanInputs& inputs, std::vector<PartDevice>& devices) : inputs_(inputs), devices_(devices) {}
    PartDevice& operator[](int64_t id) {
        if (id == cached_id_ && cached_ >= 0) return devices_[static_cast<size_t>(cached_)];
        auto [it, inserted] = index_.try_emplace(id, static_cast<int>(devices_.size()));
        if (inserted) {
            auto activities = inputs_.activities.find(id);
            devices_.emplace_back(id, &inputs_.frame,
                                  activities == inputs_.activities.end() ? nullptr : &activities->second);
        }
        cached_id_ = id;
        cached_ = it->second;
        return devices_[static_cast<size_t>(cached_)];
    }

private:
    const ScanInputs& inputs_;
    std::vector<PartDevice>& devices_;
    std::unordered_map<int64_t, int> index_;
    int64_t cached_id_ = INT64_MIN;
    int cached_ = -1;
};

// The work per kernel row.
class KernelAccumulator {
public:
    KernelAccumulator(const ScanInputs& inputs, bool sorted, ScanControl& control, bool reports_progress,
                      PartResult& result)
        : inputs_(inputs),
          sorted_(sorted),
          control_(control),
          reports_progress_(reports_progress),
          result_(result),
          devices_(inputs, result.devices),
          ws_(inputs.frame.window_begin),
          we_(inputs.frame.window_end),
          // Ids up to dense_calls_ are tallied whether or not the call exists (the merge checks);
          // others only when the call exists, so corrupt ids cannot grow the table.
          dense_calls_(inputs.max_call_id < kDenseIdLimit ? inputs.max_call_id : -1),
          sparse_calls_(!inputs.sparse_calls.empty()) {}

    // False: stop (kernels out of time order, or another part asked to stop).
    bool add(int64_t device_id, int64_t function, int64_t start, int64_t raw_duration, int64_t call_id) {
        if (++unreported_ == 0x40000 && !report()) return false;
        FunctionStat& stat = result_.functions[function];
        ++stat.rows;
        // A NULL duration is a host-timed kernel; a negative stored one is damage, not host timing.
        const bool timed = raw_duration != trace::KernelInterval::kNoDuration;
        if (start < -kMaxKernelNs || start > INT64_MAX - kMaxKernelNs || raw_duration > kMaxKernelNs ||
            (timed && raw_duration < 0)) {
            ++result_.absurd;
            return true;
        }
        ++result_.kernels;
        PartDevice& device = devices_[device_id];
        const int64_t duration = timed ? raw_duration : 0;
        ++device.kernels_total;
        if (timed) {
            if (!device.timed) {
                device.timed = true;
                device.first_start = start;
            } else if (start < device.last_start && !sorted_) {
                result_.out_of_order = true;
                control_.stop = true;
                return false;
            }
            device.last_start = start;
            device.busy.add(start, saturating_end(start, duration));
        } else {
            ++result_.host_timed;
        }
        const bool in_window = inputs_.everything || (start >= ws_ && start < we_);
        if (in_window) {
            ++result_.in_window;
            ++device.kernels_in_window;
            stat.min_ns = stat.count == 0 ? duration : std::min(stat.min_ns, duration);
            stat.max_ns = stat.count == 0 ? duration : std::max(stat.max_ns, duration);
            ++stat.count;
            add_saturating(stat.total_ns, duration);
            add_saturating(result_.kernel_time_ns, duration);
            if (!inputs_.iterations.empty() && !inside_iteration(start)) {
                ++result_.outside_iterations;
                result_.outside_iterations_ns += duration;
            }
        }
        if (call_id >= 0 && (call_id <= dense_calls_ || (sparse_calls_ && inputs_.sparse_calls.count(call_id) != 0))) {
            add_to_call(call_id, function, device.id, duration, in_window);
        }
        return true;
    }
    void done() {
        control_.rows_read.fetch_add(unreported_);
        unreported_ = 0;
    }

private:
    bool inside_iteration(int64_t start) const {
        const auto& spans = inputs_.iterations;
        auto after =
            std::upper_bound(spans.begin(), spans.end(), start,
                             [](int64_t t, const std::pair<int64_t, int64_t>& span) { return t < span.first; });
        return after != spans.begin() && start < std::prev(after)->second;
    }
    void add_to_call(int64_t call_id, int64_t function, int64_t device, int64_t duration, bool in_window) {
        if (call_id < inputs_.calls_attributed_below) result_.late_call = true;
        result_.lowest_call = std::min(result_.lowest_call, call_id);
        CallTally& call = result_.calls[call_id];
        if (call.count == 0) {
            call.function = function;
            call.device = device;
        } else if (!call.mixed && call.function != function) {
            // A second function in one call: from now on keep shares per (call, function).
            result_.mixed[{call_id, call.function}] = {call.window_ns, call.window_count};
            call.mixed = true;
        }
        ++call.count;
        add_saturating(call.total_ns, duration);
        if (in_window) {
            ++call.window_count;
            add_saturating(call.window_ns, duration);
            if (call.mixed) {
                MixedShare& share = result_.mixed[{call_id, function}];
                add_saturating(share.window_ns, duration);
                ++share.window_count;
            }
        }
    }
    bool report() {
        const int64_t rows = control_.rows_read.fetch_add(unreported_) + unreported_;
        unreported_ = 0;
        if (control_.stop.load(std::memory_order_relaxed)) return false;
        if (reports_progress_) control_.progress->update("reading kernels", rows, control_.rows_expected);
        return true;
    }

    const ScanInputs& inputs_;
    bool sorted_;
    ScanControl& control_;
    bool reports_progress_;
    PartResult& result_;
    PartDevices devices_;
    int64_t ws_, we_;
    int64_t dense_calls_;
    bool sparse_calls_;
    int64_t unreported_ = 0;
};

// The kernels of the range until the accumulator says stop: in id order through the trace library's
// fast path, in start order (a trace not stored in time order) through its typed reader.
void feed(const trace::Database& db, const PartRange& range, KernelAccumulator& accumulator) {
    if (!range.sorted) {
        trace::for_each_kernel_interval(db, range.first_id, range.last_id, [&](const trace::KernelInterval& k) {
            return accumulator.add(k.device, k.function, k.start_ns, k.duration_ns, k.library_call);
        });
        return;
    }
    trace::ReadOptions options;
    options.first_id = range.first_id;
    options.last_id = range.last_id;
    options.by_time = true;
    trace::RowReader<trace::KernelRow> rows(db, options);
    for (trace::KernelRow row; rows.next(row);) {
        if (!accumulator.add(row.device, row.function, row.start_ns,
                             row.duration_ns.value_or(trace::KernelInterval::kNoDuration),
                             row.library_call.value_or(-1)))
            return;
    }
}

}  // namespace

void scan_kernel_range(const trace::Database& db, const ScanInputs& inputs, const PartRange& range,
                       ScanControl& control, bool reports_progress, PartResult& result) {
    const auto started = std::chrono::steady_clock::now();
    KernelAccumulator accumulator(inputs, range.sorted, control, reports_progress, result);
    feed(db, range, accumulator);
    accumulator.done();
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace tbdprof::analyzer
