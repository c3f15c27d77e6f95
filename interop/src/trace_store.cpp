#include "trace_store.h"
#include "import_tagging.h"

#include "device_catalog.h"
#include "memory_matching.h"
#include "tbdprof/interop/interop_error.h"
#include "tbdprof/trace/schema.h"
#include "tbdprof/trace/sqlite_handle.h"
#include "tbdprof/trace/version.h"

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>

namespace tbdprof::interop {
namespace {

using trace::Database;
using trace::Statement;

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

class Store {
public:
    Store(ForeignTrace& trace, Database& db, ImportSummary& summary) : t_(trace), db_(db), s_(summary) {}

    void write(const std::string& source_path) {
        find_window();
        MatchResult memory = match_allocations(t_.memory, t0_);
        index_host_side();
        write_processes_and_threads();
        write_devices();
        write_gpu_ops();
        write_host_ranges();
        write_allocations(memory);
        write_run(source_path, memory);
    }

private:
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
        for (const MemoryEvent& m : t_.memory) see(m.ts_ns, m.ts_ns);
        if (lo > hi) throw InteropError("the trace holds no events that tbdprof can import");
        t0_ = lo;
        t_end_ = hi;
    }

    void index_host_side() {
        std::map<int64_t, uint64_t> calls_per_pid;
        for (size_t i = 0; i < t_.ranges.size(); ++i) {
            const Range& r = t_.ranges[i];
            if (r.on_gpu) continue;
            host_pids_.insert(r.thread.pid);
            threads_.emplace(ThreadKey{r.thread.pid, r.thread.tid}, 0);
            if (r.domain == RangeDomain::cuda_runtime || r.domain == RangeDomain::cuda_driver) {
                ++calls_per_pid[r.thread.pid];
                if (r.correlation) launches_.emplace(*r.correlation, i);
            }
        }
        for (const MemoryEvent& m : t_.memory) {
            host_pids_.insert(m.thread.pid);
            threads_.emplace(ThreadKey{m.thread.pid, m.thread.tid}, 0);
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

    void write_processes_and_threads() {
        std::map<int64_t, std::pair<int64_t, int64_t>> span;  // pid -> first, last event
        for (const Range& r : t_.ranges) {
            if (r.on_gpu) continue;
            auto [it, fresh] = span.try_emplace(r.thread.pid, r.begin_ns, r.end_ns.value_or(r.begin_ns));
            if (!fresh) {
                it->second.first = std::min(it->second.first, r.begin_ns);
                it->second.second = std::max(it->second.second, r.end_ns.value_or(r.begin_ns));
            }
        }
        Statement process(db_, "INSERT INTO processes (id, pid, command_line, executable, start_ns, end_ns, truncated) "
                               "VALUES (?, ?, ?, NULL, ?, ?, 0)");
        int64_t id = 0;
        for (int64_t pid : host_pids_) {
            process_ids_[pid] = ++id;
            auto name = t_.process_names.find(pid);
            auto it = span.find(pid);
            process.bind(1, id).bind(2, pid);
            if (name != t_.process_names.end()) {
                process.bind(3, name->second);
            } else {
                process.bind_null(3);
            }
            process.bind(4, it != span.end() ? rel(it->second.first) : 0).bind(5, rel(it != span.end() ? it->second.second : t_end_));
            process.run();
        }
        s_.processes = host_pids_.size();
        std::map<ThreadKey, int64_t> first_seen;
        for (const Range& r : t_.ranges) {
            if (r.on_gpu) continue;
            auto [it, fresh] = first_seen.try_emplace(ThreadKey{r.thread.pid, r.thread.tid}, r.begin_ns);
            if (!fresh) it->second = std::min(it->second, r.begin_ns);
        }
        Statement thread(db_, "INSERT INTO threads (id, process, tid, name, first_seen_ns) VALUES (?, ?, ?, ?, ?)");
        int64_t thread_id = 0;
        for (auto& [key, row] : threads_) {
            row = ++thread_id;
            thread.bind(1, row).bind(2, process_ids_.at(key.pid)).bind(3, key.tid);
            auto name = t_.thread_names.find({key.pid, key.tid});
            if (name != t_.thread_names.end()) {
                thread.bind(4, name->second);
            } else {
                thread.bind_null(4);
            }
            auto seen = first_seen.find(key);
            if (seen != first_seen.end()) {
                thread.bind(5, rel(seen->second));
            } else {
                thread.bind_null(5);
            }
            thread.run();
        }
        s_.threads = threads_.size();
    }

    void write_devices() {
        std::set<int32_t> used;
        for (const GpuOp& op : t_.gpu_ops) used.insert(op.device);
        for (const MemoryEvent& m : t_.memory) {
            if (m.device_type == 1) used.insert(m.device_id);
        }
        std::set<int32_t> written;
        Statement device(db_, "INSERT INTO devices (id, name, cc_major, cc_minor, sm_count, memory_bytes, clock_khz, "
                              "fp32_lanes_per_sm, fp32_peak_flops, simulated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)");
        auto insert = [&](const DeviceProperties& d) {
            if (!written.insert(d.id).second) return;
            const int64_t lanes = fp32_lanes_per_sm(d.cc_major, d.cc_minor);
            const int64_t khz = boost_clock_khz(d.name);
            const double peak = 2.0 * static_cast<double>(d.sm_count) * static_cast<double>(lanes) * static_cast<double>(khz) * 1e3;
            device.bind(1, d.id).bind(2, d.name.empty() ? std::string("unknown device") : d.name);
            device.bind(3, d.cc_major).bind(4, d.cc_minor).bind(5, d.sm_count).bind(6, d.memory_bytes);
            device.bind(7, khz).bind(8, lanes).bind(9, peak);
            device.run();
        };
        // Kineto lists every GPU of the node; the trace keeps those the program used (all of them when
        // it used none, so a CPU-only trace still says where it ran).
        for (const DeviceProperties& d : t_.devices) {
            if (used.empty() || used.count(d.id) != 0) insert(d);
        }
        for (int32_t id : used) {
            if (written.count(id) == 0) {
                ++t_.warnings["devices without deviceProperties (recorded as 'unknown device')"];
                DeviceProperties d;
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
        Statement insert(db_, "INSERT INTO streams (id, process, device, handle) VALUES (?, ?, ?, ?)");
        insert.bind(1, id).bind(2, process).bind(3, device).bind(4, handle).run();
        streams_.emplace(key, id);
        return id;
    }

    int64_t function_row(uint32_t name) {
        auto it = functions_.find(name);
        if (it != functions_.end()) return it->second;
        const auto id = static_cast<int64_t>(functions_.size()) + 1;
        Statement text(db_, "INSERT INTO strings (id, text) VALUES (?, ?)");
        text.bind(1, id).bind(2, t_.strings.text(name)).run();
        Statement function(db_, "INSERT INTO functions (id, name, mangled) VALUES (?, ?, ?)");
        function.bind(1, id).bind(2, id).bind(3, id).run();
        functions_.emplace(name, id);
        return id;
    }

    void write_gpu_ops() {
        std::stable_sort(t_.gpu_ops.begin(), t_.gpu_ops.end(),
                         [](const GpuOp& a, const GpuOp& b) { return a.start_ns < b.start_ns; });
        Statement kernel(db_, "INSERT INTO kernels (process, thread, device, stream, function, start_ns, duration_ns, "
                              "queued_ns, grid, block, shared_bytes, correlation, library_call) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)");
        Statement copy(db_, "INSERT INTO copies (process, thread, device, stream, kind, bytes, src, dst, start_ns, "
                            "duration_ns, queued_ns, async, api, correlation) "
                            "VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?, ?)");
        Statement set(db_, "INSERT INTO sets (process, thread, device, stream, value, bytes, dst, start_ns, duration_ns, "
                           "queued_ns, async, api, correlation) VALUES (?, ?, ?, ?, NULL, ?, NULL, ?, ?, ?, ?, ?, ?)");
        for (const GpuOp& op : t_.gpu_ops) {
            const Range* launch = launch_of(op);
            const int64_t pid = launch ? launch->thread.pid : main_pid_;
            const int64_t process = process_ids_.at(pid);
            std::optional<int64_t> thread, queued;
            std::optional<std::string> api;
            std::optional<int64_t> async;
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
            if (op.kind == GpuOpKind::kernel) {
                kernel.bind(1, process).bind(2, thread).bind(3, op.device).bind(4, stream).bind(5, function_row(op.name));
                kernel.bind(6, rel(op.start_ns)).bind(7, op.duration_ns).bind(8, queued);
                kernel.bind(9, pack_dims(op.grid)).bind(10, pack_dims(op.block)).bind(11, op.shared_bytes).bind(12, op.correlation);
                kernel.run();
                ++s_.kernels;
            } else {
                Statement& row = op.kind == GpuOpKind::copy ? copy : set;
                row.bind(1, process).bind(2, thread).bind(3, op.device).bind(4, stream);
                // copies have a `kind` column before `bytes`; sets do not.
                const int shift = op.kind == GpuOpKind::copy ? 1 : 0;
                if (shift) row.bind(5, copy_kind(t_.strings.text(op.name)));
                row.bind(5 + shift, op.bytes).bind(6 + shift, rel(op.start_ns)).bind(7 + shift, op.duration_ns);
                row.bind(8 + shift, queued).bind(9 + shift, async).bind(10 + shift, api).bind(11 + shift, op.correlation);
                row.run();
                ++(op.kind == GpuOpKind::copy ? s_.copies : s_.sets);
            }
        }
        s_.streams = streams_.size();
    }

    void write_host_ranges() {
        std::stable_sort(t_.ranges.begin(), t_.ranges.end(),
                         [](const Range& a, const Range& b) { return a.begin_ns < b.begin_ns; });
        launches_.clear();  // indexes are stale after sorting
        Statement range(db_, "INSERT INTO ranges (process, thread, begin_ns, end_ns, name, domain) VALUES (?, ?, ?, ?, ?, ?)");
        Statement call(db_, "INSERT INTO api_calls (process, thread, kind, begin_ns, end_ns, handle) VALUES (?, ?, ?, ?, ?, ?)");
        for (const Range& r : t_.ranges) {
            const std::string& name = t_.strings.text(r.name);
            const int64_t process = process_ids_.at(r.on_gpu ? main_pid_ : r.thread.pid);
            std::optional<int64_t> thread;
            if (!r.on_gpu) thread = threads_.at(ThreadKey{r.thread.pid, r.thread.tid});
            const bool is_call = r.domain == RangeDomain::cuda_runtime || r.domain == RangeDomain::cuda_driver;
            if (is_call) ++s_.runtime_calls;
            if (const char* kind = is_call ? sync_kind(name) : nullptr) {
                call.bind(1, process).bind(2, thread).bind(3, kind).bind(4, rel(r.begin_ns));
                call.bind(5, rel(r.end_ns.value_or(r.begin_ns)));
                if (std::string_view(kind) == "device_sync") {
                    call.bind(6, int64_t{0});
                } else {
                    call.bind_null(6);  // Kineto does not record the stream or event handle
                }
                call.run();
                ++s_.sync_calls;
                continue;
            }
            range.bind(1, process).bind(2, thread).bind(3, rel(r.begin_ns));
            if (r.end_ns) {
                range.bind(4, rel(*r.end_ns));
            } else {
                range.bind_null(4);
            }
            range.bind(5, name).bind(6, domain_name(r.domain));
            range.run();
            switch (r.domain) {
                case RangeDomain::cpu_op: ++s_.cpu_ops; break;
                case RangeDomain::user_annotation: ++s_.annotations; break;
                case RangeDomain::gpu_user_annotation: ++s_.gpu_annotations; break;
                case RangeDomain::python_function: ++s_.python_functions; break;
                default: break;
            }
            if (name.starts_with("ProfilerStep#") && !r.on_gpu) ++s_.steps;
        }
    }

    void write_allocations(const MatchResult& memory) {
        Statement alloc(db_, "INSERT INTO allocations (id, process, thread, device, address, bytes, alloc_ns, free_ns, kind, "
                             "api, stream, stack, free_thread) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'device', 'library', NULL, NULL, ?)");
        Statement category(db_, "INSERT INTO allocation_categories (allocation, category, confidence, rule, reason) "
                                "VALUES (?, ?, 0.9, ?, 'PyTorch categorized it (torch.profiler memory timeline)')");
        int64_t id = 0;
        for (const MatchedAllocation& a : memory.allocations) {
            ++id;
            const int64_t process = process_ids_.at(a.alloc_thread.pid);
            alloc.bind(1, id).bind(2, process).bind(3, threads_.at(ThreadKey{a.alloc_thread.pid, a.alloc_thread.tid}));
            alloc.bind(4, a.device).bind(5, a.address).bind(6, a.bytes).bind(7, rel(a.alloc_ns));
            if (a.free_ns) {
                alloc.bind(8, rel(*a.free_ns));
            } else {
                alloc.bind_null(8);
            }
            if (a.free_thread) {
                alloc.bind(9, threads_.at(ThreadKey{a.free_thread->pid, a.free_thread->tid}));
            } else {
                alloc.bind_null(9);
            }
            alloc.run();
            if (a.category) category.bind(1, id).bind(2, *a.category).bind(3, kPyTorchCategoryRule).run();
            if (a.free_ns) ++s_.freed_allocations;
        }
        s_.allocations = memory.allocations.size();
        s_.memory_events = t_.memory.size();
        s_.gpu_memory_events = memory.gpu_events;
        s_.memory_addresses = memory.by_address;
        for (const auto& [what, count] : memory.warnings) t_.warnings[what] += count;
        if (memory.preexisting > 0) t_.warnings["frees of blocks allocated before the trace (live from its start)"] += memory.preexisting;
    }

    void note(const std::string& key, const std::string& value) {
        Statement row(db_, "INSERT INTO run_notes (key, value) VALUES (?, ?)");
        row.bind(1, key).bind(2, value).run();
    }

    void write_run(const std::string& source_path, const MatchResult& memory) {
        Statement run(db_, "INSERT INTO run (id, command_line, host, start_unix_ns, start_monotonic_ns, duration_ns, "
                           "tool_version, simulated_device, clock_source, host_timed_kernels, exit_status, crash_signal, "
                           "truncated_files) VALUES (1, ?, ?, ?, ?, ?, ?, 0, 'cupti', 0, NULL, NULL, 0)");
        auto name = t_.process_names.find(main_pid_);
        run.bind(1, name != t_.process_names.end() ? name->second : std::string("(imported) ") + source_path);
        run.bind(2, t_.host);
        // Kineto timestamps are wall-clock microseconds since the epoch; time 0 is the earliest event.
        run.bind(3, t0_).bind(4, t0_).bind(5, t_end_ - t0_).bind(6, trace::kProductVersion);
        run.run();
        note("import.source", source_path);
        note("import.format", t_.format);
        note("import.memory_addresses", memory.allocations.empty() ? "none" : memory.by_address ? "recorded" : "synthetic");
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
    Database& db_;
    ImportSummary& s_;
    int64_t t0_ = 0, t_end_ = 0;
    std::set<int64_t> host_pids_;
    int64_t main_pid_ = 0;
    std::map<int64_t, int64_t> process_ids_;
    std::map<ThreadKey, int64_t> threads_;
    std::unordered_map<int64_t, size_t> launches_;
    std::map<std::tuple<int64_t, int32_t, int64_t>, int64_t> streams_;
    std::unordered_map<uint32_t, int64_t> functions_;
};

}  // namespace

void store_trace(ForeignTrace& trace, const std::string& source_path, const std::string& path, ImportSummary& summary) {
    sqlite3* handle = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    Database db(handle);
    if (rc != SQLITE_OK) throw InteropError("cannot create " + path + ": " + sqlite3_errstr(rc));
    try {
        // The file is a temporary that is renamed only when complete: no journal is needed.
        db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
        db.exec(trace::kTraceSchemaSql);
        db.exec("BEGIN");
        Store(trace, db, summary).write(source_path);
        db.exec("COMMIT");
    } catch (const trace::SqliteError& e) {
        throw InteropError(std::string("writing ") + path + ": " + e.what());
    }
}

}  // namespace tbdprof::interop
