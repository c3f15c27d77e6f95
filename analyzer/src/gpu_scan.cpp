// The GPU scan: one pass over `kernels` in time order (id order is time order in a well-formed
// trace), merged with the copies and sets sorted by start. Streaming interval unions give busy time
// per device; accumulators per function and per library call give top kernels and FLOPs. Nothing
// per kernel is kept in memory.
#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>

#include "analysis_parts.h"
#include "flop_precision.h"
#include "id_table.h"
#include "interval_union.h"

namespace tbdprof::analyzer {
namespace {

struct DeviceState {
    int64_t id = 0;
    std::string name;
    double fp32_peak_flops = 0;
    bool listed = false;  // in the devices table
    IntervalUnion kernel_union, all_union;
    int64_t last_start = INT64_MIN;
    int64_t kernel_busy_ns = 0, busy_ns = 0;
    int64_t kernels_total = 0, kernels_in_window = 0;
    double fp32_flops = 0;
    std::vector<double> buckets;  // busy ns per utilization bucket
};

struct FunctionStat {
    int64_t count = 0;
    int64_t total_ns = 0;
    double flops = 0;
};

struct LibraryCall {
    bool exists = false;
    FlopKind kind = FlopKind::none;
    double flops = 0;
    int64_t begin_ns = 0;
    int64_t total_ns = 0, window_ns = 0;
    int64_t count = 0, window_count = 0;
    int64_t function = -1;  // -1: no kernel yet, -2: kernels of several functions (see `mixed`)
    int device_slot = -1;
};

struct MixedShare {
    int64_t window_ns = 0;
    int64_t window_count = 0;
};

struct Activity {  // a copy or set with a device interval
    int64_t device, begin, end;
};

int64_t saturating_end(int64_t start, int64_t duration) {
    int64_t end = 0;
    return __builtin_add_overflow(start, duration, &end) ? INT64_MAX : end;
}

class GpuScan {
public:
    GpuScan(const TraceFile& trace, const Report& report, const AnalysisOptions& options)
        : db_(*trace.db),
          window_(report.window),
          everything_(report.window.used == "all"),
          functions_(db_.query_int("SELECT max(id) FROM functions")),
          calls_(db_.query_int("SELECT max(id) FROM library_calls")) {
        const int64_t run_end = std::max<int64_t>(report.run.duration_ns, 1);
        bucket_count_ = std::max(1, options.utilization_buckets);
        bucket_ns_ = std::max<int64_t>(1, (run_end + bucket_count_ - 1) / bucket_count_);
        load_devices();
        load_library_calls();
        load_activities();
    }

    // False when kernels turned out not to be in time order (then scan again with ORDER BY).
    bool scan(bool ordered, Progress& progress);
    void finish(const AnalysisOptions& options, Report& report);

private:
    int slot(int64_t device_id) {
        if (device_id == cached_id_ && cached_slot_ >= 0) return cached_slot_;
        auto [it, inserted] = slot_of_.try_emplace(device_id, static_cast<int>(devices_.size()));
        if (inserted) {
            devices_.emplace_back();
            devices_.back().id = device_id;
            devices_.back().buckets.assign(static_cast<size_t>(bucket_count_), 0.0);
        }
        cached_id_ = device_id;
        cached_slot_ = it->second;
        return it->second;
    }
    void load_devices();
    void load_library_calls();
    void load_activities();
    void add_to_buckets(DeviceState& device, int64_t begin, int64_t end);
    void feed_activities_until(int64_t start);

    const ReadOnlyDatabase& db_;
    Window window_;
    bool everything_;
    int bucket_count_ = 1;
    int64_t bucket_ns_ = 1;
    std::vector<DeviceState> devices_;
    std::unordered_map<int64_t, int> slot_of_;
    int64_t cached_id_ = INT64_MIN;
    int cached_slot_ = -1;
    IdTable<FunctionStat> functions_;
    IdTable<LibraryCall> calls_;
    std::map<std::pair<int64_t, int64_t>, MixedShare> mixed_;  // (call, function)
    std::vector<Activity> activities_;
    size_t next_activity_ = 0;
    int64_t total_kernels_ = 0, host_timed_ = 0, kernels_in_window_ = 0;
    int64_t kernel_time_ns_ = 0, no_flop_ns_ = 0;
};

void GpuScan::load_devices() {
    Query query(db_, "SELECT id, name, fp32_peak_flops FROM devices ORDER BY id");
    while (query.step()) {
        DeviceState& device = devices_[static_cast<size_t>(slot(query.integer(0)))];
        device.name = query.text(1);
        device.fp32_peak_flops = std::max(0.0, query.real(2));
        device.listed = true;
    }
}

void GpuScan::load_library_calls() {
    Query query(db_, "SELECT id, flops, compute_type, a_type, begin_ns, "
                     "CASE WHEN compute_type IS NULL AND a_type IS NULL THEN name END FROM library_calls");
    while (query.step()) {
        LibraryCall& call = calls_[query.integer(0)];
        call.exists = true;
        call.begin_ns = query.integer(4);
        const double flops = query.is_null(1) ? 0.0 : query.real(1);
        if (!(flops > 0) || flops > 1e30) continue;  // no FLOP information (or nonsense)
        call.flops = flops;
        auto optional_int = [&](int column) {
            return query.is_null(column) ? std::nullopt : std::optional<int64_t>(query.integer(column));
        };
        // The name is fetched only when the types are unknown (legacy entry points name their type).
        const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(query.raw(), 5));
        call.kind = classify_flops(name ? std::string_view(name) : std::string_view(), optional_int(2), optional_int(3));
    }
}

void GpuScan::load_activities() {
    Query query(db_,
                "SELECT device, start_ns, duration_ns FROM copies WHERE duration_ns IS NOT NULL AND duration_ns >= 0 "
                "UNION ALL SELECT device, start_ns, duration_ns FROM sets WHERE duration_ns IS NOT NULL "
                "AND duration_ns >= 0 ORDER BY 2");
    while (query.step()) {
        const int64_t start = query.integer(1);
        slot(query.integer(0));  // register the device now: the kernel scan holds references
        activities_.push_back({query.integer(0), start, saturating_end(start, query.integer(2))});
    }
}

void GpuScan::add_to_buckets(DeviceState& device, int64_t begin, int64_t end) {
    const int64_t limit = bucket_ns_ * bucket_count_;
    begin = std::max<int64_t>(begin, 0);
    end = std::min(end, limit);
    for (int64_t b = begin / bucket_ns_; begin < end && b < bucket_count_; ++b) {
        const int64_t bucket_end = (b + 1) * bucket_ns_;
        const int64_t piece_end = std::min(end, bucket_end);
        device.buckets[static_cast<size_t>(b)] += static_cast<double>(piece_end - begin);
        begin = piece_end;
    }
}

void GpuScan::feed_activities_until(int64_t start) {
    while (next_activity_ < activities_.size() && activities_[next_activity_].begin <= start) {
        const Activity& a = activities_[next_activity_++];
        DeviceState& device = devices_[static_cast<size_t>(slot(a.device))];
        device.all_union.add(a.begin, a.end, [&](int64_t b, int64_t e) {
            device.busy_ns += overlap(b, e, window_.begin_ns, window_.end_ns);
        });
    }
}

bool GpuScan::scan(bool ordered, Progress& progress) {
    const int64_t rows = db_.query_int("SELECT max(id) FROM kernels");
    // ifnull() in SQL is cheaper than a column-type call per row; -1 marks NULL (never a real value).
    Query query(db_, ordered ? "SELECT device, function, start_ns, ifnull(duration_ns, -1), ifnull(library_call, -1) "
                               "FROM kernels ORDER BY start_ns"
                             : "SELECT device, function, start_ns, ifnull(duration_ns, -1), ifnull(library_call, -1) "
                               "FROM kernels");
    const int64_t ws = window_.begin_ns, we = window_.end_ns;
    while (query.step()) {
        if ((++total_kernels_ & 0x3ffff) == 0) progress.update("reading kernels", total_kernels_, rows);
        DeviceState& device = devices_[static_cast<size_t>(slot(query.integer(0)))];
        const int64_t function = query.integer(1);
        const int64_t start = query.integer(2);
        const int64_t raw_duration = query.integer(3);
        const bool timed = raw_duration >= 0;
        const int64_t duration = timed ? raw_duration : 0;
        const int64_t call_id = query.integer(4);
        ++device.kernels_total;
        if (timed) {
            if (start < device.last_start && !ordered) return false;
            device.last_start = start;
            const int64_t end = saturating_end(start, duration);
            feed_activities_until(start);
            device.kernel_union.add(start, end, [&](int64_t b, int64_t e) {
                device.kernel_busy_ns += overlap(b, e, ws, we);
                add_to_buckets(device, b, e);
            });
            device.all_union.add(start, end, [&](int64_t b, int64_t e) { device.busy_ns += overlap(b, e, ws, we); });
        } else {
            ++host_timed_;
        }
        const bool in_window = everything_ || (start >= ws && start < we);
        if (in_window) {
            ++kernels_in_window_;
            ++device.kernels_in_window;
            FunctionStat& stat = functions_[function];
            ++stat.count;
            stat.total_ns += duration;
            kernel_time_ns_ += duration;
        }
        LibraryCall* call = call_id < 0 ? nullptr : calls_.find(call_id);
        if (call != nullptr && call->exists) {
            if (call->function == -1) {
                call->function = function;
            } else if (call->function >= 0 && call->function != function) {
                // A second function in one call: from now on keep shares per (call, function).
                mixed_[{call_id, call->function}] = {call->window_ns, call->window_count};
                call->function = -2;
            }
            if (call->device_slot < 0) call->device_slot = static_cast<int>(&device - devices_.data());
            ++call->count;
            call->total_ns += duration;
            if (in_window) {
                ++call->window_count;
                call->window_ns += duration;
                if (call->function == -2) {
                    MixedShare& share = mixed_[{call_id, function}];
                    share.window_ns += duration;
                    ++share.window_count;
                }
            }
        } else {
            call = nullptr;
        }
        if (in_window && (call == nullptr || call->kind == FlopKind::none)) no_flop_ns_ += duration;
    }
    feed_activities_until(INT64_MAX);
    for (DeviceState& device : devices_) {
        device.kernel_union.close([&](int64_t b, int64_t e) {
            device.kernel_busy_ns += overlap(b, e, ws, we);
            add_to_buckets(device, b, e);
        });
        device.all_union.close([&](int64_t b, int64_t e) { device.busy_ns += overlap(b, e, ws, we); });
    }
    progress.finish();
    return true;
}

void GpuScan::finish(const AnalysisOptions& options, Report& report) {
    FlopMetrics& flops = report.flops;
    // Each call's FLOPs spread over its kernels by duration (by count when durations are unknown).
    auto share_of = [](const LibraryCall& call, int64_t window_ns, int64_t window_count) {
        if (call.total_ns > 0) return static_cast<double>(window_ns) / static_cast<double>(call.total_ns);
        return call.count > 0 ? static_cast<double>(window_count) / static_cast<double>(call.count) : 0.0;
    };
    calls_.for_each([&](int64_t, LibraryCall& call) {
        if (!call.exists || call.kind == FlopKind::none) return;
        double in_window = 0;
        if (call.count > 0) {
            in_window = call.flops * share_of(call, call.window_ns, call.window_count);
        } else if (everything_ || (call.begin_ns >= window_.begin_ns && call.begin_ns < window_.end_ns)) {
            in_window = call.flops;  // no kernel recorded for it: attribute to the call itself
        }
        if (in_window <= 0) return;
        ++flops.library_calls;
        if (call.kind == FlopKind::fp32) {
            flops.fp32_flops += in_window;
            if (call.device_slot >= 0) devices_[static_cast<size_t>(call.device_slot)].fp32_flops += in_window;
        } else if (call.kind == FlopKind::tensor) {
            flops.tensor_flops += in_window;
        } else {
            flops.other_flops += in_window;
        }
        if (call.function >= 0) functions_[call.function].flops += in_window;
    });
    for (const auto& [key, share] : mixed_) {
        LibraryCall* call = calls_.find(key.first);
        if (call == nullptr || call->kind == FlopKind::none) continue;
        functions_[key.second].flops += call->flops * share_of(*call, share.window_ns, share.window_count);
    }

    // Ratios of integer nanoseconds stay exact where they can (0.4, not 0.39999999999999997).
    const double window_ns = static_cast<double>(report.window.end_ns - report.window.begin_ns);
    double busy_sum = 0, utilization_sum = 0, busy_utilization_sum = 0;
    int used_devices = 0;
    for (DeviceState& state : devices_) {
        if (!state.listed && state.kernels_total == 0) continue;
        DeviceMetrics device;
        device.id = state.id;
        device.name = state.name.empty() ? "device " + std::to_string(state.id) : state.name;
        device.fp32_peak_flops = state.fp32_peak_flops;
        device.kernel_busy_ns = state.kernel_busy_ns;
        device.busy_ns = state.busy_ns;
        device.utilization = static_cast<double>(state.kernel_busy_ns) / window_ns;
        device.busy_utilization = static_cast<double>(state.busy_ns) / window_ns;
        device.fp32_flops = state.fp32_flops;
        device.fp32_utilization = state.fp32_peak_flops > 0 ? state.fp32_flops * 1e9 / window_ns / state.fp32_peak_flops : 0;
        device.kernels = state.kernels_in_window;
        if (state.kernels_total > 0) {
            ++used_devices;
            utilization_sum += device.utilization;
            busy_utilization_sum += device.busy_utilization;
            busy_sum += static_cast<double>(state.kernel_busy_ns);
            flops.fp32_peak_flops += state.fp32_peak_flops;
            std::vector<double> fractions(state.buckets.size());
            for (size_t i = 0; i < fractions.size(); ++i) fractions[i] = state.buckets[i] / static_cast<double>(bucket_ns_);
            report.utilization_series.devices.emplace_back(state.id, std::move(fractions));
        }
        report.devices.push_back(std::move(device));
    }
    report.utilization_series.bucket_ns = bucket_ns_;
    if (used_devices > 0) {
        report.gpu_utilization = utilization_sum / used_devices;
        report.busy_utilization = busy_utilization_sum / used_devices;
    } else {
        report.notes.push_back("the trace has no kernels: utilization and FLOPs are zero");
    }
    flops.fp32_flops_per_s = flops.fp32_flops * 1e9 / window_ns;
    flops.fp32_flops_per_busy_s = busy_sum > 0 ? flops.fp32_flops * 1e9 / busy_sum : 0;
    flops.fp32_utilization = flops.fp32_peak_flops > 0 ? flops.fp32_flops_per_s / flops.fp32_peak_flops : 0;
    flops.tensor_flops_per_s = flops.tensor_flops * 1e9 / window_ns;
    flops.kernel_time_ns = kernel_time_ns_;
    flops.kernel_time_without_flops_ns = no_flop_ns_;
    flops.no_flop_info_share = kernel_time_ns_ > 0 ? static_cast<double>(no_flop_ns_) / static_cast<double>(kernel_time_ns_) : 0;

    report.kernels.total = total_kernels_;
    report.kernels.count = kernels_in_window_;
    report.kernels.host_timed = host_timed_;
    if (host_timed_ > 0) {
        report.notes.push_back(std::to_string(host_timed_) +
                               " kernels have no device timestamps (host-timed): they are left out of utilization");
    }

    // Top kernels by total time.
    std::vector<std::pair<int64_t, FunctionStat>> ranked;
    functions_.for_each([&](int64_t id, FunctionStat& stat) {
        if (stat.count > 0) ranked.emplace_back(id, stat);
    });
    const size_t top = std::min(ranked.size(), static_cast<size_t>(std::max(0, options.top_kernels)));
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(top), ranked.end(),
                      [](const auto& a, const auto& b) {
                          return a.second.total_ns != b.second.total_ns ? a.second.total_ns > b.second.total_ns
                                                                        : a.first < b.first;
                      });
    Query name(db_, "SELECT s.text FROM functions AS f JOIN strings AS s ON s.id = f.name WHERE f.id = ?1");
    for (size_t i = 0; i < top; ++i) {
        const auto& [id, stat] = ranked[i];
        KernelStat kernel;
        name.reset();
        name.bind(1, id);
        kernel.name = name.step() ? name.text(0) : "function " + std::to_string(id);
        kernel.count = stat.count;
        kernel.total_ns = stat.total_ns;
        kernel.mean_ns = static_cast<double>(stat.total_ns) / static_cast<double>(stat.count);
        kernel.flops = stat.flops;
        kernel.share = kernel_time_ns_ > 0 ? static_cast<double>(stat.total_ns) / static_cast<double>(kernel_time_ns_) : 0;
        report.kernels.top.push_back(std::move(kernel));
    }
}

}  // namespace

void scan_gpu(const TraceFile& trace, const AnalysisOptions& options, Progress& progress, Report& report) {
    {
        GpuScan scan(trace, report, options);
        if (scan.scan(false, progress)) {
            scan.finish(options, report);
            return;
        }
    }
    // Kernels out of time order (not written by tbdprof's builder): let SQLite sort them.
    report.notes.push_back("kernels were not stored in time order; sorted them first");
    GpuScan sorted(trace, report, options);
    sorted.scan(true, progress);
    sorted.finish(options, report);
}

}  // namespace tbdprof::analyzer
