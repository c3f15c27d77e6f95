#include "import_model.h"

#include "memory_matching.h"
#include "tbdprof/gpu_catalog/gpu_catalog.h"
#include "tbdprof/interop/interop_error.h"
#include "tbdprof/version.h"
#include "time_order.h"

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>

namespace tbdprof::interop {
namespace {

using namespace trace::detail;  // the model's rows

// Synchronisation calls go to api_calls (kinds from schemas/trace.sql); everything else stays a range.
const char* sync_kind(std::string_view api) {
    if (api == "cudaDeviceSynchronize" || api == "cuCtxSynchronize") return "device_sync";
    if (api == "cudaStreamSynchronize" || api == "cuStreamSynchronize") return "stream_sync";
    if (api == "cudaEventSynchronize" || api == "cuEventSynchronize") return "event_sync";
    if (api == "cudaStreamWaitEvent" || api == "cuStreamWaitEvent") return "stream_wait_event";
    return nullptr;
}

// "Memcpy HtoD (Pageable -> Device)" -> "htod".
const char* copy_kind(std::string_view name) {
    if (name.find("HtoD") != std::string_view::npos) return "htod";
    if (name.find("DtoH") != std::string_view::npos) return "dtoh";
    if (name.find("DtoD") != std::string_view::npos || name.find("PtoP") != std::string_view::npos) return "dtod";
    if (name.find("HtoH") != std::string_view::npos) return "htoh";
    return "default";
}

int64_t pack_dims(const int64_t (&d)[3]) {
    const int64_t y = std::max<int64_t>(d[1], 1), z = std::max<int64_t>(d[2], 1);
    return d[0] + ((y - 1) << 32) + ((z - 1) << 48);
}

struct ThreadKey {
    int64_t pid, tid;
    bool operator<(const ThreadKey& o) const { return pid != o.pid ? pid < o.pid : tid < o.tid; }
};

class ModelFiller {
public:
    ModelFiller(ForeignTrace& trace, TraceModel& model, ImportSummary& summary) : t_(trace), m_(model), s_(summary) {}

    void fill(const std::string& source_path) {
        find_window();
        MatchResult memory = match_allocations(t_.memory, t0_);
        index_host_side();
        add_processes_and_threads();
        add_devices();
        // Each part of the foreign trace is let go once its rows are made: peak memory is the
        // larger of the two forms of one kind of event, not both forms of all of them.
        s_.memory_events = t_.memory.size();
        release(t_.memory);
        add_gpu_ops();
        release(t_.gpu_ops);
        add_host_ranges();
        release(t_.ranges);
        add_allocations(memory);
        add_run(source_path, memory);
    }

private:
    template <typename T>
    static void release(std::vector<T>& rows) {
        std::vector<T>().swap(rows);
    }

    int64_t rel(int64_t ns) const { return ns - t0_; }

    void find_window() {
        int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
        auto see = [&](int64_t begin, int64_t end) {
            lo = std::min(lo, begin);
            hi = std::max(hi, end);
        };
        if (t_.span_begin_ns) see(*t_.span_begin_ns, t_.span_end_ns.value_or(*t_.span_begin_ns));
        for (const GpuOp& op : t_.gpu_ops) see(op.start_ns, op.start_ns + op.duration_ns);
        for (const Range& r : t_.ranges) see(r.begin_ns, r.end_ns.value_or(r.begin_ns));
        for (const MemoryEvent& m : t_.memory) see(m.time_ns, m.time_ns);
        if (lo > hi) throw InteropError("the trace holds no events that tbdprof can import");
        int64_t span = 0;  // times are bounded on the way in (kMaxImportedTimeNs), their span may not be
        if (__builtin_sub_overflow(hi, lo, &span))
            throw InteropError("its events span more than 292 years (from " + std::to_string(lo) + " ns to " +
                               std::to_string(hi) + " ns): its timestamps are damaged");
        t0_ = lo;
        t_end_ = hi;
    }

    void index_host_side() {
        std::map<int64_t, uint64_t> calls_per_pid;
        const Range* previous = nullptr;  // the last host range: most follow one of the same thread
        for (size_t i = 0; i < t_.ranges.size(); ++i) {
            const Range& r = t_.ranges[i];
            if (r.on_gpu) continue;
            if (!previous || previous->thread.pid != r.thread.pid || previous->thread.tid != r.thread.tid) {
                host_pids_.insert(r.thread.pid);
                threads_.try_emplace(ThreadKey{r.thread.pid, r.thread.tid}, 0);  // no node made for a known one
            }
            previous = &r;
            if (r.domain == RangeDomain::cuda_runtime || r.domain == RangeDomain::cuda_driver) {
                ++calls_per_pid[r.thread.pid];
                if (r.correlation) launches_.emplace(*r.correlation, i);
            }
        }
        for (const MemoryEvent& m : t_.memory) {
            host_pids_.insert(m.thread.pid);
            threads_.try_emplace(ThreadKey{m.thread.pid, m.thread.tid}, 0);
        }
        if (host_pids_.empty()) host_pids_.insert(0);  // GPU-only trace: one anonymous process
        main_pid_ = *host_pids_.begin();
        uint64_t most = 0;
        for (auto [pid, count] : calls_per_pid) {
            if (count > most) {
                most = count;
                main_pid_ = pid;
            }
        }
    }

    void add_processes_and_threads() {
        std::map<int64_t, std::pair<int64_t, int64_t>> span;  // pid -> first, last event
        for (const Range& r : t_.ranges) {
            if (r.on_gpu) continue;
            auto [it, fresh] = span.try_emplace(r.thread.pid, r.begin_ns, r.end_ns.value_or(r.begin_ns));
            if (!fresh) {
                it->second.first = std::min(it->second.first, r.begin_ns);
                it->second.second = std::max(it->second.second, r.end_ns.value_or(r.begin_ns));
            }
        }
        int64_t id = 0;
        for (int64_t pid : host_pids_) {
            process_ids_[pid] = ++id;
            auto name = t_.process_names.find(pid);
            auto it = span.find(pid);
            ProcessRow& row = m_.processes.emplace_back(
                ProcessRow{id, pid, std::nullopt, std::nullopt, std::nullopt, 0, rel(t_end_), false});
            if (name != t_.process_names.end()) row.command_line = name->second;
            if (it != span.end()) {
                row.start_ns = rel(it->second.first);
                row.end_ns = rel(it->second.second);
            }
        }
        s_.processes = host_pids_.size();
        std::map<ThreadKey, int64_t> first_seen;
        for (const Range& r : t_.ranges) {
            if (r.on_gpu) continue;
            auto [it, fresh] = first_seen.try_emplace(ThreadKey{r.thread.pid, r.thread.tid}, r.begin_ns);
            if (!fresh) it->second = std::min(it->second, r.begin_ns);
        }
        int64_t thread_id = 0;
        for (auto& [key, id_of_key] : threads_) {
            id_of_key = ++thread_id;
            ThreadRow& row = m_.threads.emplace_back(
                ThreadRow{thread_id, process_ids_.at(key.pid), key.tid, std::nullopt, std::nullopt});
            auto name = t_.thread_names.find({key.pid, key.tid});
            if (name != t_.thread_names.end()) row.name = name->second;
            auto seen = first_seen.find(key);
            if (seen != first_seen.end()) row.first_seen_ns = rel(seen->second);
        }
        s_.threads = threads_.size();
    }

    void add_devices() {
        std::set<int32_t> used;
        for (const GpuOp& op : t_.gpu_ops) used.insert(op.device);
        for (const MemoryEvent& m : t_.memory) {
            if (m.device_type == 1) used.insert(m.device_id);
        }
        std::set<int32_t> written;
        // Kineto's deviceProperties give the id, name, compute capability, SMs and memory; the rest
        // comes from the catalog.
        auto insert = [&](DeviceRow d) {
            if (!written.insert(static_cast<int32_t>(d.id)).second) return;
            if (d.name.empty()) d.name = "unknown device";
            d.fp32_lanes_per_sm = gpu_catalog::fp32_lanes_per_sm(static_cast<int>(d.cc_major), static_cast<int>(d.cc_minor));
            const gpu_catalog::GpuSpec* spec = gpu_catalog::find_by_device_name(d.name);
            d.clock_khz = spec != nullptr ? spec->boost_clock_khz : 0;  // 0: unknown model, FP32 peak unknown
            d.fp32_peak_flops = 2.0 * static_cast<double>(d.sm_count) * static_cast<double>(d.fp32_lanes_per_sm) *
                                static_cast<double>(d.clock_khz) * 1e3;
            d.simulated = false;
            m_.devices.push_back(std::move(d));
        };
        // Kineto lists every GPU of the node; the trace keeps those the program used (all of them when
        // it used none, so a CPU-only trace still says where it ran).
        for (const DeviceRow& d : t_.devices) {
            if (used.empty() || used.count(static_cast<int32_t>(d.id)) != 0) insert(d);
        }
        for (int32_t id : used) {
            if (written.count(id) == 0) {
                ++t_.warnings["devices without deviceProperties (recorded as 'unknown device')"];
                DeviceRow d{};
                d.id = id;
                insert(d);
            }
        }
        s_.devices = written.size();
    }

    // The host call that launched a GPU operation, through its correlation id.
    const Range* launch_of(const GpuOp& op) const {
        if (!op.correlation) return nullptr;
        auto it = launches_.find(*op.correlation);
        return it == launches_.end() ? nullptr : &t_.ranges[it->second];
    }

    int64_t stream_row(int64_t process, int32_t device, int64_t handle) {
        auto key = std::make_tuple(process, device, handle);
        auto it = streams_.find(key);
        if (it != streams_.end()) return it->second;
        const auto id = static_cast<int64_t>(streams_.size()) + 1;
        m_.streams.push_back(StreamRow{id, process, device, handle});
        streams_.emplace(key, id);
        return id;
    }

    // Kernel names are the functions (no mangled names in a Kineto trace): one string, one function.
    int64_t function_row(int64_t name) {
        auto it = functions_.find(name);
        if (it != functions_.end()) return it->second;
        const int64_t id = m_.strings.intern(t_.strings.text(name));
        m_.functions.push_back(FunctionRow{id, id, id});
        functions_.emplace(name, id);
        return id;
    }

    void add_gpu_ops() {
        std::stable_sort(t_.gpu_ops.begin(), t_.gpu_ops.end(),
                         [](const GpuOp& a, const GpuOp& b) { return a.start_ns < b.start_ns; });
        size_t count[3] = {0, 0, 0};
        for (const GpuOp& op : t_.gpu_ops) ++count[static_cast<size_t>(op.kind)];
        m_.kernels.reserve(count[static_cast<size_t>(GpuOpKind::kernel)]);
        m_.copies.reserve(count[static_cast<size_t>(GpuOpKind::copy)]);
        m_.sets.reserve(count[static_cast<size_t>(GpuOpKind::set)]);
        for (const GpuOp& op : t_.gpu_ops) {
            const Range* launch = launch_of(op);
            const int64_t pid = launch ? launch->thread.pid : main_pid_;
            const int64_t process = process_ids_.at(pid);
            std::optional<int64_t> thread, queued, async;
            std::optional<std::string_view> api;
            if (launch) {
                thread = threads_.at(ThreadKey{launch->thread.pid, launch->thread.tid});
                queued = op.start_ns - launch->begin_ns;
                if (*queued < 0) {
                    ++t_.warnings["GPU activity starting before its launch call (queue time set to 0)"];
                    queued = 0;
                }
                const std::string& name = t_.strings.text(launch->name);
                api = name.starts_with("cuda") ? "runtime" : "driver";
                async = name.find("Async") != std::string::npos ? 1 : 0;
            } else if (op.correlation) {
                ++t_.warnings["GPU activity without its launch call"];
            }
            const int64_t stream = stream_row(process, op.device, op.stream);
            const int64_t start = rel(op.start_ns);
            // Rows in schema column order; an import has no pointers, values, library calls or graphs.
            if (op.kind == GpuOpKind::kernel) {
                m_.kernels.push_back({static_cast<int64_t>(m_.kernels.size()) + 1, process, thread, op.device, stream,
                                      function_row(op.name), start, op.duration_ns, queued, pack_dims(op.grid),
                                      pack_dims(op.block), op.shared_bytes, op.correlation, std::nullopt,
                                      std::nullopt});
            } else if (op.kind == GpuOpKind::copy) {
                m_.copies.push_back({static_cast<int64_t>(m_.copies.size()) + 1, process, thread, op.device, stream,
                                     copy_kind(t_.strings.text(op.name)), op.bytes, std::nullopt, std::nullopt, start,
                                     op.duration_ns, queued, async, api, op.correlation});
            } else {
                m_.sets.push_back({static_cast<int64_t>(m_.sets.size()) + 1, process, thread, op.device, stream,
                                   std::nullopt, op.bytes, std::nullopt, start, op.duration_ns, queued, async, api,
                                   op.correlation});
            }
        }
        s_.kernels = m_.kernels.size();
        s_.copies = m_.copies.size();
        s_.sets = m_.sets.size();
        s_.streams = streams_.size();
    }

    // Puts the ranges in the order of their begin times, ties in the order read (what a stable sort
    // gives): 16-byte keys are sorted (time_order.h) and each range then moved once to its place,
    // where a stable sort of the 80-byte ranges moved each about log2(n) times (2% of an import's
    // instructions).
    void sort_ranges_by_begin() {
        std::vector<TimeKey> keys(t_.ranges.size());
        for (size_t i = 0; i < keys.size(); ++i) keys[i] = {t_.ranges[i].begin_ns, i};
        stable_sort_by_time(keys);
        // Each cycle of the permutation in turn; a place done is marked by its own index.
        for (size_t start = 0; start < keys.size(); ++start) {
            if (keys[start].index == start) continue;
            Range held = t_.ranges[start];
            size_t place = start;
            while (keys[place].index != start) {
                const size_t from = keys[place].index;
                t_.ranges[place] = t_.ranges[from];
                keys[place].index = place;
                place = from;
            }
            t_.ranges[place] = held;
            keys[place].index = place;
        }
    }

    void add_host_ranges() {
        sort_ranges_by_begin();
        launches_ = {};  // indexes are stale after sorting
        m_.ranges.reserve(t_.ranges.size());
        for (const Range& r : t_.ranges) {
            const std::string& name = t_.strings.text(r.name);
            const int64_t process = process_ids_.at(r.on_gpu ? main_pid_ : r.thread.pid);
            std::optional<int64_t> thread;
            if (!r.on_gpu) thread = threads_.at(ThreadKey{r.thread.pid, r.thread.tid});
            const bool is_call = r.domain == RangeDomain::cuda_runtime || r.domain == RangeDomain::cuda_driver;
            if (is_call) ++s_.runtime_calls;
            if (const char* kind = is_call ? sync_kind(name) : nullptr) {
                // Kineto does not record the stream or event handle; a device-wide one is 0.
                const Opt handle = std::string_view(kind) == "device_sync" ? Opt(0) : std::nullopt;
                m_.api_calls.push_back(ApiCallRow{static_cast<int64_t>(m_.api_calls.size()) + 1, process, thread, kind,
                                                  rel(r.begin_ns), rel(r.end_ns.value_or(r.begin_ns)), handle});
                ++s_.sync_calls;
                continue;
            }
            std::optional<int64_t> end;
            if (r.end_ns) end = rel(*r.end_ns);
            m_.ranges.push_back(RangeRow{static_cast<int64_t>(m_.ranges.size()) + 1, process, thread, rel(r.begin_ns),
                                         end, name, domain_name(r.domain)});
            switch (r.domain) {
                case RangeDomain::cpu_op:
                    ++s_.cpu_ops;
                    break;
                case RangeDomain::user_annotation:
                    ++s_.annotations;
                    break;
                case RangeDomain::gpu_user_annotation:
                    ++s_.gpu_annotations;
                    break;
                case RangeDomain::python_function:
                    ++s_.python_functions;
                    break;
                default:
                    break;
            }
            if (name.starts_with("ProfilerStep#") && !r.on_gpu) ++s_.steps;
        }
    }

    void add_allocations(const MatchResult& memory) {
        m_.allocations.reserve(memory.allocations.size());
        for (const MatchedAllocation& a : memory.allocations) {
            const int64_t id = static_cast<int64_t>(m_.allocations.size()) + 1;
            std::optional<int64_t> free_ns, free_thread;
            if (a.free_ns) free_ns = rel(*a.free_ns);
            if (a.free_thread) free_thread = threads_.at(ThreadKey{a.free_thread->pid, a.free_thread->tid});
            m_.allocations.push_back({id, process_ids_.at(a.alloc_thread.pid),
                                      threads_.at(ThreadKey{a.alloc_thread.pid, a.alloc_thread.tid}), a.device,
                                      a.address, a.bytes, rel(a.alloc_ns), free_ns, "device", "library", std::nullopt,
                                      std::nullopt, free_thread});
            if (a.category) {
                m_.allocation_categories.push_back({id, *a.category, 0.9, "pytorch-memory-timeline",
                                                    "PyTorch categorized it (torch.profiler memory timeline)"});
            }
            if (a.free_ns) ++s_.freed_allocations;
        }
        s_.allocations = memory.allocations.size();
        s_.gpu_memory_events = memory.gpu_events;
        s_.memory_addresses = memory.by_address;
        for (const auto& [what, count] : memory.warnings) t_.warnings[what] += count;
        if (memory.preexisting > 0)
            t_.warnings["frees of blocks allocated before the trace (live from its start)"] += memory.preexisting;
    }

    void note(const std::string& key, const std::string& value) { m_.notes.emplace_back(key, value); }

    void add_run(const std::string& source_path, const MatchResult& memory) {
        RunRow& run = m_.run;
        auto name = t_.process_names.find(main_pid_);
        run.command_line = name != t_.process_names.end() ? name->second : std::string("(imported) ") + source_path;
        run.host = t_.host;
        // Kineto timestamps are wall-clock microseconds since the epoch; time 0 is the earliest event.
        run.start_unix_ns = run.start_monotonic_ns = t0_;
        run.duration_ns = t_end_ - t0_;
        run.tool_version = kProductVersion;
        run.clock_source = "cupti";
        note("import.source", source_path);
        note("import.format", t_.format);
        note("import.memory_addresses", memory.allocations.empty() ? "none"
                                        : memory.by_address        ? "recorded"
                                                                   : "synthetic");
        for (const auto& [key, value] : t_.notes) note(key.starts_with("kineto.") ? key : "distributed." + key, value);
        for (const auto& [device, bytes] : memory.peak_total_allocated) {
            note("memory.peak_total_allocated.device" + std::to_string(device), std::to_string(bytes));
        }
        for (const auto& [device, bytes] : memory.untracked_bytes) {
            note("memory.allocated_before_trace.device" + std::to_string(device), std::to_string(bytes));
        }
        for (const auto& [device, bytes] : memory.peak_total_reserved) {
            note("memory.peak_total_reserved.device" + std::to_string(device), std::to_string(bytes));
        }
        for (const auto& [what, count] : t_.warnings) note("import.warning", what + ": " + std::to_string(count));
        for (const auto& [what, count] : t_.unknown) note("import.unknown_events", what + ": " + std::to_string(count));
    }

    ForeignTrace& t_;
    TraceModel& m_;
    ImportSummary& s_;
    int64_t t0_ = 0, t_end_ = 0;
    std::set<int64_t> host_pids_;
    int64_t main_pid_ = 0;
    std::map<int64_t, int64_t> process_ids_;
    std::map<ThreadKey, int64_t> threads_;
    std::unordered_map<int64_t, size_t> launches_;
    std::map<std::tuple<int64_t, int32_t, int64_t>, int64_t> streams_;
    std::unordered_map<int64_t, int64_t> functions_;  // ForeignTrace name -> functions.id
};

}  // namespace

TraceModel import_model(ForeignTrace& trace, const std::string& source_path, ImportSummary& summary) {
    TraceModel model;
    ModelFiller(trace, model, summary).fill(source_path);
    return model;
}

}  // namespace tbdprof::interop
