// Chrome trace JSON export. Layout (docs/interop.md): every host process is a process with its threads;
// every device is a process ("GPU n: name") whose threads are the streams; kernels, copies and sets are
// slices on their stream, host ranges and API calls slices on their thread, launches joined to their
// GPU work by flow arrows, and live device memory per category drawn as counter tracks. Events use
// Kineto's names and args, so `tbdprof import` reads the file back.
#include "tbdprof/interop/export.h"

#include "tbdprof/interop/interop_error.h"
#include "tbdprof/trace/json_writer.h"
#include "tbdprof/trace/output_file.h"
#include "tbdprof/trace/trace_reader.h"
#include "tbdprof/trace/tables.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace tbdprof::interop {
namespace {

using trace::Database;
using trace::JsonWriter;
using trace::Statement;

// Device tracks get pids far above Linux's pid range (at most 2^22) so they never meet a host pid.
constexpr int64_t kGpuPidBase = int64_t{1} << 30;
constexpr int64_t kGpuAnnotationTid = 0;  // stream rows start at 1

std::optional<int64_t> opt_int(const Statement& s, int column) {
    if (s.is_null(column)) return std::nullopt;
    return s.column_int(column);
}

const char* copy_name(trace::CopyKind kind) {
    switch (kind) {
        case trace::CopyKind::htod: return "Memcpy HtoD";
        case trace::CopyKind::dtoh: return "Memcpy DtoH";
        case trace::CopyKind::dtod: return "Memcpy DtoD";
        case trace::CopyKind::htoh: return "Memcpy HtoH";
        default: return "Memcpy";
    }
}

// api_calls kinds back to the API names the importer maps onto them.
const char* sync_api_name(std::string_view kind) {
    if (kind == "device_sync") return "cudaDeviceSynchronize";
    if (kind == "stream_sync") return "cudaStreamSynchronize";
    if (kind == "event_sync") return "cudaEventSynchronize";
    if (kind == "stream_wait_event") return "cudaStreamWaitEvent";
    return "implicit synchronization";
}

struct HostThreadRef {
    int64_t pid = 0, tid = 0;
};

struct StreamRef {
    int64_t device = 0, handle = 0;
};

// One launch seen from the host: where the flow arrow starts.
struct LaunchSite {
    int64_t thread = 0;  // threads.id
    int64_t ns = 0;
    bool operator<(const LaunchSite& o) const { return thread != o.thread ? thread < o.thread : ns < o.ns; }
};
struct PendingLaunch {
    std::optional<int64_t> correlation;
    const char* what = "kernel";
    bool matched = false;  // a recorded API call slice encloses it
};

class ChromeExporter {
public:
    ChromeExporter(Database& db, JsonWriter& out) : db_(db), out_(out) {}

    ExportSummary run() {
        load_tables();
        out_.raw("{");
        write_header();
        out_.key("traceEvents").raw("[\n");
        write_metadata();
        write_gpu_ops();
        write_ranges();
        write_api_calls();
        write_library_calls();
        write_unmatched_launches();
        write_memory();
        write_span();
        out_.raw("\n]}\n");
        summary_.bytes_written = out_.bytes_written();
        return summary_;
    }

private:
    // Starts one event object; events after the first get a separating comma.
    JsonWriter& begin_event(char phase) {
        out_.raw(first_event_ ? "{" : ",\n{");
        first_event_ = false;
        char ph[2] = {phase, 0};
        return out_.key("ph", true).string(ph);
    }

    void load_tables() {
        trace::RunRow run = trace::read_run(db_);
        command_line_ = std::move(run.command_line);
        duration_ns_ = run.duration_ns;
        trace::RowReader<trace::ProcessRow> processes(db_);
        for (trace::ProcessRow p; processes.next(p);) processes_[p.id] = {p.pid, std::string(p.command_line)};
        trace::RowReader<trace::ThreadRow> threads(db_);
        for (trace::ThreadRow t; threads.next(t);) {
            threads_[t.id] = {pid_of(t.process), t.tid};
            thread_names_[t.id] = t.name;
        }
        trace::RowReader<trace::StreamRow> streams(db_);
        for (trace::StreamRow s; streams.next(s);) streams_[s.id] = {s.device.value_or(0), s.handle};
        trace::RowReader<trace::DeviceRow> devices(db_);
        for (trace::DeviceRow d; devices.next(d);) device_names_[d.id] = d.name;
    }

    int64_t pid_of(int64_t process_row) const {
        auto it = processes_.find(process_row);
        return it == processes_.end() ? 0 : it->second.first;
    }

    // A host thread row's pid and tid; 0 and 0 for none or an unknown row.
    HostThreadRef thread_of(std::optional<int64_t> thread_row) const {
        auto it = thread_row ? threads_.find(*thread_row) : threads_.end();
        return it == threads_.end() ? HostThreadRef{} : it->second;
    }

    void write_header() {
        out_.key("schemaVersion", true).number(int64_t{1});
        out_.key("displayTimeUnit").string("ns");
        out_.key("tbdprof").raw("{").key("command_line", true).string(command_line_).raw("}");
        out_.key("deviceProperties").raw("[");
        trace::RowReader<trace::DeviceRow> devices(db_);
        bool first = true;
        for (trace::DeviceRow d; devices.next(d);) {
            out_.raw(first ? "{" : ",{");
            first = false;
            out_.key("id", true).number(d.id).key("name").string(d.name);
            out_.key("computeMajor").number(d.cc_major).key("computeMinor").number(d.cc_minor);
            out_.key("numSms").number(d.sm_count).key("totalGlobalMem").number(d.memory_bytes);
            out_.raw("}");
        }
        out_.raw("]");
        // Kineto's distributedInfo, from the run notes an import left (distributed.rank, ...).
        bool any = false;
        for (const auto& [note, value] : trace::read_notes_with_prefix(db_, "distributed.")) {
            out_.raw(any ? "," : ",\"distributedInfo\":{");
            const std::string key = note.substr(12);
            out_.key(key, true);
            const bool numeric = !value.empty() && value.find_first_not_of("-0123456789") == std::string::npos;
            if (numeric) {
                out_.raw(value);
            } else {
                out_.string(value);
            }
            any = true;
        }
        if (any) out_.raw("}");
    }

    void name_process(int64_t pid, const std::string& name, const char* label, int64_t sort_index) {
        begin_event('M').key("name").string("process_name").key("pid").number(pid).key("tid").number(int64_t{0});
        out_.key("args").raw("{").key("name", true).string(name).raw("}}");
        begin_event('M').key("name").string("process_labels").key("pid").number(pid).key("tid").number(int64_t{0});
        out_.key("args").raw("{").key("labels", true).string(label).raw("}}");
        begin_event('M').key("name").string("process_sort_index").key("pid").number(pid).key("tid").number(int64_t{0});
        out_.key("args").raw("{").key("sort_index", true).number(sort_index).raw("}}");
    }

    void name_thread(int64_t pid, int64_t tid, const std::string& name) {
        begin_event('M').key("name").string("thread_name").key("pid").number(pid).key("tid").number(tid);
        out_.key("args").raw("{").key("name", true).string(name).raw("}}");
    }

    void write_metadata() {
        for (const auto& [row, process] : processes_) {
            const auto& [pid, command] = process;
            name_process(pid, command.empty() ? "pid " + std::to_string(pid) : command, "CPU", pid);
        }
        for (const auto& [row, thread] : threads_) {
            const std::string& name = thread_names_[row];
            name_thread(thread.pid, thread.tid, name.empty() ? "thread " + std::to_string(thread.tid) : name);
        }
        for (const auto& [device, name] : device_names_) {
            const std::string label = "GPU " + std::to_string(device);
            name_process(kGpuPidBase + device, label + ": " + name, label.c_str(), kGpuPidBase + device);
        }
        for (const auto& [row, stream] : streams_) {
            name_thread(kGpuPidBase + stream.device, row, "stream " + std::to_string(stream.handle));
        }
    }

    // One kernel, copy or set: its slice, and the flow from its launch when the launch is known.
    struct GpuSlice {
        const char* cat;
        std::string_view name;
        std::optional<int64_t> thread, stream, queued, correlation;
        int64_t device = 0, start = 0;
        std::optional<int64_t> duration;
    };

    void write_gpu_slice(const GpuSlice& s, const std::function<void()>& extra_args) {
        const int64_t pid = kGpuPidBase + s.device;
        const int64_t tid = s.stream.value_or(0);
        begin_event('X').key("cat").string(s.cat).key("name").string(s.name).key("pid").number(pid).key("tid").number(tid);
        out_.key("ts").micros(s.start).key("dur").micros(s.duration.value_or(0));
        out_.key("args").raw("{").key("device", true).number(s.device);
        if (s.stream) {
            auto it = streams_.find(*s.stream);
            out_.key("stream").number(it != streams_.end() ? it->second.handle : int64_t{0});
        }
        if (s.correlation) out_.key("correlation").number(*s.correlation);
        if (!s.duration) out_.key("host_timed").number(int64_t{1});
        extra_args();
        out_.raw("}}");
        ++summary_.slices;
        if (!s.thread || !s.queued || !s.duration) return;
        auto thread = threads_.find(*s.thread);
        if (thread == threads_.end()) return;
        const int64_t flow = ++flow_ids_;
        const int64_t launch_ns = s.start - *s.queued;
        auto [it, fresh] = launches_.try_emplace(LaunchSite{*s.thread, launch_ns});
        if (fresh) {
            it->second.correlation = s.correlation;
            it->second.what = s.cat;
        }
        begin_event('s').key("cat").string("ac2g").key("name").string("ac2g").key("id").number(flow);
        out_.key("pid").number(thread->second.pid).key("tid").number(thread->second.tid).key("ts").micros(launch_ns).raw("}");
        begin_event('f').key("cat").string("ac2g").key("name").string("ac2g").key("id").number(flow).key("bp").string("e");
        out_.key("pid").number(pid).key("tid").number(tid).key("ts").micros(s.start).raw("}");
        ++summary_.flows;
    }

    void write_gpu_ops() {
        // Not RowReader<KernelRow>: it reads a NULL grid, block or shared size as 0, and an import whose
        // source lacked them stores NULL, which the export must leave out (so a re-import stores NULL).
        Statement kernels(db_, "SELECT k.thread, k.device, k.stream, n.text, k.start_ns, k.duration_ns, k.queued_ns, "
                               "k.grid, k.block, k.shared_bytes, k.correlation FROM kernels AS k "
                               "JOIN functions AS f ON f.id = k.function JOIN strings AS n ON n.id = f.name ORDER BY k.id");
        while (kernels.step()) {
            GpuSlice s{"kernel", kernels.column_view(3), opt_int(kernels, 0), opt_int(kernels, 2), opt_int(kernels, 6),
                       opt_int(kernels, 10), kernels.column_int(1), kernels.column_int(4), opt_int(kernels, 5)};
            const auto grid = opt_int(kernels, 7), block = opt_int(kernels, 8), shared = opt_int(kernels, 9);
            write_gpu_slice(s, [&] {
                auto dims = [&](const char* key, int64_t packed) {
                    out_.key(key).raw("[").number(packed & 0xffffffff).raw(",").number(((packed >> 32) & 0xffff) + 1);
                    out_.raw(",").number(((packed >> 48) & 0xffff) + 1).raw("]");
                };
                if (grid) dims("grid", *grid);
                if (block) dims("block", *block);
                if (shared) out_.key("shared memory").number(*shared);
            });
        }
        trace::RowReader<trace::CopyRow> copies(db_);
        for (trace::CopyRow c; copies.next(c);) {
            GpuSlice s{"gpu_memcpy", copy_name(c.kind), c.thread, c.stream, c.queued_ns,
                       c.correlation, c.device, c.start_ns, c.duration_ns};
            const int64_t bytes = c.bytes;
            write_gpu_slice(s, [&] { out_.key("bytes").number(bytes); });
        }
        trace::RowReader<trace::SetRow> sets(db_);
        for (trace::SetRow m; sets.next(m);) {
            GpuSlice s{"gpu_memset", "Memset (Device)", m.thread, m.stream, m.queued_ns,
                       m.correlation, m.device, m.start_ns, m.duration_ns};
            const int64_t bytes = m.bytes;
            const auto value = m.value;
            write_gpu_slice(s, [&] {
                out_.key("bytes").number(bytes);
                if (value) out_.key("value").number(*value);
            });
        }
    }

    void write_ranges() {
        const int64_t gpu_annotation_pid = kGpuPidBase + (device_names_.empty() ? 0 : device_names_.begin()->first);
        bool gpu_annotations = false;
        trace::RowReader<trace::RangeRow> ranges(db_);
        for (trace::RangeRow r; ranges.next(r);) {
            const std::string_view domain = r.domain;
            const auto thread_row = r.thread;
            const int64_t begin = r.begin_ns;
            const auto end = r.end_ns;
            int64_t pid = pid_of(r.process), tid = thread_of(thread_row).tid;
            std::string_view cat = domain;
            if (domain == "gpu_user_annotation") {
                pid = gpu_annotation_pid;
                tid = kGpuAnnotationTid;
                gpu_annotations = true;
            }
            // NVTX ranges from tbdprof's own recordings (any other domain) are user annotations.
            if (cat != "cpu_op" && cat != "gpu_user_annotation" && cat != "python_function" && cat != "cuda_runtime" &&
                cat != "cuda_driver") {
                cat = "user_annotation";
            }
            begin_event('X').key("cat").string(cat).key("name").string(r.name).key("pid").number(pid);
            out_.key("tid").number(tid).key("ts").micros(begin).key("dur").micros(end ? std::max<int64_t>(*end - begin, 0) : 0);
            out_.key("args").raw("{");
            bool first_arg = true;
            if ((cat == "cuda_runtime" || cat == "cuda_driver") && thread_row) {
                auto launch = launches_.find(LaunchSite{*thread_row, begin});
                if (launch != launches_.end()) {
                    launch->second.matched = true;
                    if (launch->second.correlation) {
                        out_.key("correlation", first_arg).number(*launch->second.correlation);
                        first_arg = false;
                    }
                }
            }
            if (!end) {
                out_.key("unfinished", first_arg).number(int64_t{1});
                first_arg = false;
            }
            if (!domain.empty() && domain != cat) out_.key("domain", first_arg).string(domain);
            out_.raw("}}");
            ++summary_.slices;
        }
        if (gpu_annotations) name_thread(gpu_annotation_pid, kGpuAnnotationTid, "GPU annotations");
    }

    void write_api_calls() {
        trace::RowReader<trace::ApiCallRow> calls(db_);
        for (trace::ApiCallRow call; calls.next(call);) {
            const int64_t tid = thread_of(call.thread).tid;
            const std::string_view kind = call.kind;
            const int64_t begin = call.begin_ns;
            begin_event('X').key("cat").string("cuda_runtime").key("name").string(sync_api_name(kind));
            out_.key("pid").number(pid_of(call.process)).key("tid").number(tid).key("ts").micros(begin);
            out_.key("dur").micros(std::max<int64_t>(call.end_ns - begin, 0));
            out_.key("args").raw("{").key("kind", true).string(kind);
            if (auto handle = call.handle) out_.key("handle").number(*handle);
            out_.raw("}}");
            ++summary_.slices;
        }
    }

    void write_library_calls() {
        trace::RowReader<trace::LibraryCallRow> calls(db_);
        for (trace::LibraryCallRow call; calls.next(call);) {
            const int64_t tid = thread_of(call.thread).tid;
            const int64_t begin = call.begin_ns;
            begin_event('X').key("cat").string("cuda_library").key("name").string(call.name);
            out_.key("pid").number(pid_of(call.process)).key("tid").number(tid).key("ts").micros(begin);
            out_.key("dur").micros(std::max<int64_t>(call.end_ns - begin, 0));
            out_.key("args").raw("{").key("op", true).string(call.op);
            const char* dims[] = {"m", "n", "k", "batch"};
            const trace::OptionalInt values[] = {call.m, call.n, call.k, call.batch};
            for (int i = 0; i < 4; ++i) {
                if (auto v = values[i]) out_.key(dims[i]).number(*v);
            }
            out_.raw("}}");
            ++summary_.slices;
        }
    }

    // tbdprof's own recordings keep launch times but not the API call around them: a short slice
    // stands in for the call so the flow arrow has a slice to start from.
    void write_unmatched_launches() {
        for (const auto& [site, launch] : launches_) {
            if (launch.matched) continue;
            auto thread = threads_.find(site.thread);
            if (thread == threads_.end()) continue;
            const std::string what = launch.what == std::string_view("kernel") ? "kernel"
                                     : launch.what == std::string_view("gpu_memcpy") ? "memcpy" : "memset";
            begin_event('X').key("cat").string("cuda_runtime").key("name").string("launch (" + what + ")");
            out_.key("pid").number(thread->second.pid).key("tid").number(thread->second.tid).key("ts").micros(site.ns);
            out_.key("dur").micros(1).key("args").raw("{").key("synthetic", true).number(int64_t{1});
            if (launch.correlation) out_.key("correlation").number(*launch.correlation);
            out_.raw("}}");
            ++summary_.slices;
        }
    }

    void write_memory();
    void write_span() {
        begin_event('X').key("cat").string("Trace").key("name").string("tbdprof trace").key("pid").string("Spans");
        out_.key("tid").string("tbdprof").key("ts").micros(0).key("dur").micros(duration_ns_).raw("}");
    }

    Database& db_;
    JsonWriter& out_;
    ExportSummary summary_;
    bool first_event_ = true;
    std::string command_line_;
    int64_t duration_ns_ = 0;
    std::map<int64_t, std::pair<int64_t, std::string>> processes_;  // row -> pid, command line
    std::map<int64_t, HostThreadRef> threads_;
    std::unordered_map<int64_t, std::string> thread_names_;
    std::map<int64_t, StreamRef> streams_;
    std::map<int64_t, std::string> device_names_;
    std::map<LaunchSite, PendingLaunch> launches_;
    int64_t flow_ids_ = 0;
};

// Live device memory per category as counter tracks (one per device, one series per category, NULL
// category -> "untagged"), and each allocation and free as a Kineto `[memory]` instant on its thread.
void ChromeExporter::write_memory() {
    struct Change {
        int64_t ns;
        int64_t device;
        int category;
        int64_t delta;
    };
    std::vector<std::string> categories;
    std::map<std::string, int> category_index;
    std::vector<Change> changes;
    trace::RowReader<trace::AllocationRow> allocations(db_);
    auto instant = [&](std::optional<int64_t> thread_row, int64_t ns, int64_t device, int64_t address, int64_t bytes) {
        const HostThreadRef where = thread_of(thread_row);
        begin_event('i').key("s").string("t").key("cat").string("cpu_instant_event").key("name").string("[memory]");
        out_.key("pid").number(where.pid).key("tid").number(where.tid).key("ts").micros(ns);
        out_.key("args").raw("{").key("Device Type", true).number(int64_t{1}).key("Device Id").number(device);
        if (address >= 0) out_.key("Addr").number(address);  // negative: synthetic, see docs/interop.md
        out_.key("Bytes").number(bytes).raw("}}");
        ++summary_.instant_events;
    };
    for (trace::AllocationRow a; allocations.next(a);) {
        if (!trace::is_device_memory(a.kind)) continue;
        const int64_t device = a.device, address = a.address, bytes = a.bytes, alloc_ns = a.alloc_ns;
        const auto free_ns = a.free_ns;
        const std::string category(a.category.empty() ? "untagged" : a.category);
        auto [it, fresh] = category_index.try_emplace(category, static_cast<int>(categories.size()));
        if (fresh) categories.push_back(category);
        changes.push_back({alloc_ns, device, it->second, bytes});
        instant(a.thread, alloc_ns, device, address, bytes);
        if (free_ns) {
            changes.push_back({*free_ns, device, it->second, -bytes});
            instant(a.free_thread ? a.free_thread : a.thread, *free_ns, device, address, -bytes);
        }
    }
    std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
        return a.device != b.device ? a.device < b.device : a.ns < b.ns;
    });
    std::vector<int64_t> live(categories.size(), 0);
    std::vector<bool> used(categories.size(), false);
    for (size_t i = 0; i < changes.size();) {
        const int64_t device = changes[i].device;
        if (i == 0 || changes[i - 1].device != device) {
            std::fill(live.begin(), live.end(), 0);
            std::fill(used.begin(), used.end(), false);
        }
        const int64_t ns = changes[i].ns;
        for (; i < changes.size() && changes[i].device == device && changes[i].ns == ns; ++i) {
            live[changes[i].category] += changes[i].delta;
            used[changes[i].category] = true;
        }
        begin_event('C').key("name").string("Live memory (bytes)").key("pid").number(kGpuPidBase + device);
        out_.key("tid").number(int64_t{0}).key("ts").micros(ns).key("args").raw("{");
        bool first = true;
        for (size_t c = 0; c < categories.size(); ++c) {
            if (!used[c]) continue;
            out_.key(categories[c], first).number(live[c]);
            first = false;
        }
        out_.raw("}}");
        ++summary_.counter_events;
    }
}

}  // namespace

ExportSummary export_chrome_trace(const std::string& trace_path, const std::string& output, bool force) {
    Database db;
    try {
        db = trace::open_trace(trace_path);
    } catch (const std::exception& e) {
        throw InteropError(e.what());
    }
    trace::OutputFile file(output, {.force = force, .inputs = {trace_path}, .allow_stream = true});
    JsonWriter out(file);
    ExportSummary summary;
    try {
        summary = ChromeExporter(db, out).run();
    } catch (const trace::SqliteError& e) {
        throw InteropError(trace_path + ": " + e.what());
    }
    out.flush();
    file.commit();
    return summary;
}

}  // namespace tbdprof::interop
