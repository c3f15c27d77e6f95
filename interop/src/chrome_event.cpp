#include "chrome_event.h"

#include <string>

namespace tbdprof::interop {
namespace {

bool equals_lower(std::string_view text, std::string_view lower) {
    if (text.size() != lower.size()) return false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != lower[i]) return false;
    }
    return true;
}

bool starts_upper(std::string_view text) { return !text.empty() && text.front() >= 'A' && text.front() <= 'Z'; }

// Whether an event's times stay inside what an import keeps (kMaxImportedTimeNs).
bool times_in_range(const ChromeEvent& event) {
    if (event.ts && (*event.ts > kMaxImportedTimeNs || *event.ts < -kMaxImportedTimeNs)) return false;
    return !event.dur || *event.dur <= kMaxImportedDurationNs;
}

}  // namespace

std::string imported_text(std::string_view text, ForeignTrace& trace) {
    if (text.size() <= kMaxImportedTextBytes) return std::string(text);
    size_t keep = kMaxImportedTextBytes;
    while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;  // not mid-character
    ++trace.warnings["texts longer than " + std::to_string(kMaxImportedTextBytes / 1024) +
                     " KiB (cut, ending in '... [N bytes cut]')"];
    return std::string(text.substr(0, keep)) + "... [" + std::to_string(text.size() - keep) + " bytes cut]";
}

const char* domain_name(RangeDomain domain) {
    switch (domain) {
        case RangeDomain::cpu_op: return "cpu_op";
        case RangeDomain::user_annotation: return "user_annotation";
        case RangeDomain::gpu_user_annotation: return "gpu_user_annotation";
        case RangeDomain::python_function: return "python_function";
        case RangeDomain::cuda_runtime: return "cuda_runtime";
        case RangeDomain::cuda_driver: return "cuda_driver";
    }
    return "unknown";
}

void EventSink::add(const ChromeEvent& event) {
    if (event.ill_typed != nullptr) {
        ++out_.warnings[std::string("ill-typed field \"") + event.ill_typed + "\" (event skipped)"];
        return;
    }
    if (event.ph.empty()) {
        ++out_.warnings["events without \"ph\" (skipped)"];
        return;
    }
    if (!times_in_range(event)) {
        ++out_.warnings["events with timestamps beyond 146 years or durations beyond 73 years (skipped)"];
        return;
    }
    const char phase = event.ph.front();
    switch (phase) {
        case 'X': add_complete(event); return;
        case 'i':
        case 'I':
            if (event.name == "[memory]") {
                add_memory(event);
            } else {
                ++out_.skipped["instant events"];
            }
            return;
        case 'M': add_metadata(event); return;
        case 's':
        case 't':
        case 'f':
            // ac2g (launch -> GPU) flows are implied by correlation ids; fwdbwd ones are not kept.
            count_flow(event.cat);
            return;
        case 'C': ++out_.skipped["counter events"]; return;
        default: ++out_.unknown["ph=" + imported_text(event.ph, out_)]; return;
    }
}

void EventSink::add_complete(const ChromeEvent& event) {
    const std::string_view cat = event.cat;
    if (starts_upper(cat) && cat != "Trace") saw_2021_categories_ = true;
    if (equals_lower(cat, "kernel")) {
        add_gpu_op(event, GpuOpKind::kernel);
    } else if (equals_lower(cat, "gpu_memcpy") || equals_lower(cat, "memcpy")) {
        add_gpu_op(event, GpuOpKind::copy);
    } else if (equals_lower(cat, "gpu_memset") || equals_lower(cat, "memset")) {
        add_gpu_op(event, GpuOpKind::set);
    } else if (equals_lower(cat, "cuda_runtime") || equals_lower(cat, "runtime")) {
        add_range(event, RangeDomain::cuda_runtime);
    } else if (equals_lower(cat, "cuda_driver") || equals_lower(cat, "driver")) {
        add_range(event, RangeDomain::cuda_driver);
    } else if (equals_lower(cat, "cpu_op") || equals_lower(cat, "operator")) {
        add_range(event, RangeDomain::cpu_op);
    } else if (equals_lower(cat, "user_annotation")) {
        add_range(event, RangeDomain::user_annotation);
    } else if (equals_lower(cat, "gpu_user_annotation")) {
        add_range(event, RangeDomain::gpu_user_annotation);
    } else if (equals_lower(cat, "python_function")) {
        add_range(event, RangeDomain::python_function);
    } else if (cat == "Trace") {
        // The profiler's own span: the recording window.
        if (event.ts) {
            out_.span_begin_ns = event.ts;
            if (event.dur) out_.span_end_ns = *event.ts + *event.dur;
        }
        ++out_.skipped["profiler span"];
    } else {
        ++out_.unknown["ph=X cat=" + (cat.empty() ? std::string("(none)") : imported_text(cat, out_))];
    }
}

void EventSink::add_gpu_op(const ChromeEvent& event, GpuOpKind kind) {
    saw_kineto_categories_ = true;
    if (!event.ts || !event.dur) {
        ++out_.warnings["GPU events without ts or dur (skipped)"];
        return;
    }
    GpuOp op;
    op.kind = kind;
    op.start_ns = *event.ts;
    op.duration_ns = *event.dur;
    if (op.duration_ns < 0) {
        ++out_.warnings["negative durations (set to 0)"];
        op.duration_ns = 0;
    }
    // Kineto draws each device as a "process" and each stream as a "thread"; args say it directly.
    if (event.args.device) {
        op.device = static_cast<int32_t>(*event.args.device);
    } else if (event.pid.numeric) {
        op.device = static_cast<int32_t>(event.pid.number);
    } else {
        ++out_.warnings["GPU events without a device (device 0 assumed)"];
    }
    if (event.args.stream) {
        op.stream = *event.args.stream;
    } else if (event.tid.numeric) {
        op.stream = event.tid.number;
    } else {
        ++out_.warnings["GPU events without a stream (stream 0 assumed)"];
    }
    op.correlation = event.args.correlation;
    op.name = name_id(event.name);
    if (kind != GpuOpKind::kernel) {
        if (!event.args.bytes) ++out_.warnings["copies and sets without bytes (0 assumed)"];
        op.bytes = event.args.bytes.value_or(0);
    }
    for (int i = 0; i < 3; ++i) {
        op.grid[i] = event.args.grid[i];
        op.block[i] = event.args.block[i];
    }
    op.shared_bytes = event.args.shared_bytes;
    out_.gpu_ops.push_back(op);
}

int64_t EventSink::name_id(std::string_view name) {
    // Texts that get cut are counted each time they occur, as before: not cached.
    if (name.size() > kMaxImportedTextBytes) return out_.strings.intern(imported_text(name, out_));
    if (auto it = name_ids_.find(name); it != name_ids_.end()) return it->second;
    const int64_t id = out_.strings.intern(name);
    name_ids_.emplace(std::string(name), id);
    return id;
}

void EventSink::count_flow(std::string_view cat) {
    if (last_flow_count_ == nullptr || cat != last_flow_cat_ || cat.size() > kMaxImportedTextBytes) {
        last_flow_count_ =
            &out_.skipped["flow events (" + (cat.empty() ? std::string("no cat") : imported_text(cat, out_)) + ")"];
        last_flow_cat_ = std::string(cat);
    }
    ++*last_flow_count_;
}

HostThread EventSink::host_thread(const ChromeEvent& event) {
    HostThread thread;
    thread.pid = event.pid.numeric ? event.pid.number : 0;
    if (event.tid.numeric) {
        thread.tid = event.tid.number;
    } else if (event.tid.present) {
        auto it = text_tids_.find(event.tid.text);
        if (it == text_tids_.end()) {
            it = text_tids_.emplace(std::string(event.tid.text), -static_cast<int64_t>(text_tids_.size()) - 1).first;
            out_.thread_names[{thread.pid, it->second}] = imported_text(event.tid.text, out_);
        }
        thread.tid = it->second;
    }
    return thread;
}

void EventSink::add_range(const ChromeEvent& event, RangeDomain domain) {
    if (!event.ts) {
        ++out_.warnings["events without ts (skipped)"];
        return;
    }
    if (domain == RangeDomain::cuda_runtime || domain == RangeDomain::cuda_driver) saw_kineto_categories_ = true;
    Range range;
    range.domain = domain;
    range.begin_ns = *event.ts;
    if (event.dur) {
        int64_t dur = *event.dur;
        if (dur < 0) {
            ++out_.warnings["negative durations (set to 0)"];
            dur = 0;
        }
        range.end_ns = range.begin_ns + dur;
    } else {
        ++out_.warnings["ranges without dur (end unknown)"];
    }
    range.on_gpu = domain == RangeDomain::gpu_user_annotation;
    if (!range.on_gpu) range.thread = host_thread(event);
    range.name = name_id(event.name);
    range.correlation = event.args.correlation;
    out_.ranges.push_back(range);
}

void EventSink::add_memory(const ChromeEvent& event) {
    if (!event.ts || !event.args.memory_bytes) {
        ++out_.warnings["[memory] events without ts or Bytes (skipped)"];
        return;
    }
    MemoryEvent memory;
    memory.time_ns = *event.ts;
    memory.thread = host_thread(event);
    memory.device_type = static_cast<int32_t>(event.args.device_type.value_or(0));
    memory.device_id = static_cast<int32_t>(event.args.device_id.value_or(-1));
    memory.address = event.args.address;
    memory.bytes = *event.args.memory_bytes;
    memory.total_allocated = event.args.total_allocated;
    memory.total_reserved = event.args.total_reserved;
    out_.memory.push_back(memory);
}

void EventSink::add_metadata(const ChromeEvent& event) {
    ++out_.skipped["metadata events"];
    if (!event.pid.numeric) return;
    if (event.name == "process_name" && !event.args.name.empty()) {
        // Kineto also names the GPU "processes" (pid = device) after the program; first one wins.
        out_.process_names.emplace(event.pid.number, imported_text(event.args.name, out_));
    } else if (event.name == "thread_name" && !event.args.name.empty()) {
        const HostThread thread = host_thread(event);
        std::string name = imported_text(event.args.name, out_);
        while (!name.empty() && name.back() == ' ') name.pop_back();
        out_.thread_names[{thread.pid, thread.tid}] = name;
    } else if (event.name == "process_labels" && event.args.labels.starts_with("GPU")) {
        gpu_pids_.insert(event.pid.number);
    }
}

void EventSink::finish() {
    if (saw_2021_categories_) {
        out_.format = "kineto-2021";
    } else if (saw_kineto_categories_) {
        out_.format = "kineto";
    } else {
        out_.format = "chrome";
    }
    // GPU "processes" are devices, not programs: their names must not become process names.
    for (int64_t pid : gpu_pids_) out_.process_names.erase(pid);
}

}  // namespace tbdprof::interop
