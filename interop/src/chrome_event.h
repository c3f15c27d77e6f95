// One Chrome trace event as parsed (views into the parser's buffers), and the sink that sorts events
// into the importer's model by phase and category.
#pragma once

#include "foreign_trace.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tbdprof::interop {

struct EventId {
    bool present = false;
    bool numeric = false;
    int64_t number = 0;
    std::string_view text;
};

// The args this importer reads; the rest are skipped by the parser.
struct EventArgs {
    std::optional<int64_t> device, stream, correlation, bytes, shared_bytes;
    std::optional<int64_t> memory_bytes, address, total_allocated, total_reserved, device_type, device_id;
    int64_t grid[3] = {0, 0, 0};
    int64_t block[3] = {0, 0, 0};
    bool has_grid = false, has_block = false;
    std::string_view name, labels;  // metadata events
};

struct ChromeEvent {
    bool valid = true;
    const char* ill_typed = nullptr;  // the first field with the wrong JSON type
    std::string_view ph, cat, name;
    std::optional<int64_t> ts, dur;   // ns
    EventId pid, tid;
    EventArgs args;
};

class EventSink {
public:
    explicit EventSink(ForeignTrace& out) : out_(out) {}
    void add(const ChromeEvent& event);
    // Decides the format name once every event is in.
    void finish();

private:
    void add_complete(const ChromeEvent& event);
    void add_gpu_op(const ChromeEvent& event, GpuOpKind kind);
    void add_range(const ChromeEvent& event, RangeDomain domain);
    void add_memory(const ChromeEvent& event);
    void add_metadata(const ChromeEvent& event);
    HostThread host_thread(const ChromeEvent& event);
    int64_t name_id(std::string_view name);
    void count_flow(std::string_view cat);

    ForeignTrace& out_;
    bool saw_2021_categories_ = false;
    bool saw_kineto_categories_ = false;
    // Non-numeric tids ("PyTorch Profiler") get stable negative numbers.
    std::map<std::string, int64_t, std::less<>> text_tids_;
    std::set<int64_t> gpu_pids_;  // pids Kineto labels "GPU n"
    // Names seen -> ForeignTrace::strings ids, looked up without making a string per event (the
    // same few hundred names repeat across hundreds of thousands of events).
    struct TextHash {
        using is_transparent = void;
        size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
    };
    std::unordered_map<std::string, int64_t, TextHash, std::equal_to<>> name_ids_;
    // The flow category seen last and its count in ForeignTrace::skipped (a std::map: stable).
    std::string last_flow_cat_;
    uint64_t* last_flow_count_ = nullptr;
};

}  // namespace tbdprof::interop
