#include "trace_loader.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "communication_rows.h"
#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/device_memory.h"
#include "tbdprof/trace/categories.h"
#include "tbdprof/trace/fast_scans.h"
#include "tbdprof/trace/tables.h"
#include "tbdprof/trace/trace_reader.h"

namespace tbdprof::viewer {
namespace {

using trace::Database;
using trace::RowReader;
using trace::Statement;

// What `load` returns; whatever it throws (the trace library's opener, the analyzer) as a LoadError
// with the same sentence. Any SQLite failure after opening (a file damaged past its header) becomes
// one sentence too, where the rows are read.
template <class Load>
decltype(auto) or_load_error(Load&& load) {
    try {
        return load();
    } catch (const std::exception& e) {
        throw LoadError(e.what());
    }
}

// Nested NVTX ranges of one thread and domain get one row per depth: a range goes one deeper than
// every range still open when it begins.
struct RangeRows {
    std::vector<std::vector<std::tuple<int64_t, int64_t, uint32_t, int64_t>>> by_depth;
    std::vector<int64_t> open_ends;
    void add(int64_t begin, int64_t end, uint32_t label, int64_t id) {
        while (!open_ends.empty() && open_ends.back() <= begin) open_ends.pop_back();
        const size_t depth = open_ends.size();
        open_ends.push_back(end);
        if (by_depth.size() <= depth) by_depth.resize(depth + 1);
        by_depth[depth].emplace_back(begin, end, label, id);
    }
};

// Streams by their small trace id (handles are pointers); the legacy default stream by name.
std::string stream_name(const std::map<int64_t, int64_t>& handles, int64_t stream) {
    if (stream < 0) return "stream ?";
    auto found = handles.find(stream);
    if (found != handles.end() && found->second == 0) return "default stream";
    return "stream " + std::to_string(stream);
}

// Streams beyond this many rows (kernels, or copies) share one row per device: a trace with 100 000
// streams made 100 000 rows, and the viewer grew to 23 GB. Nobody reads that many rows anyway.
constexpr size_t kMaxStreamRows = 512;
constexpr int64_t kMergedStreams = INT64_MAX;  // TimelineRow::stream of a device's shared row

// The row title of a device's shared row, which says what it holds and why.
std::string merged_title(int64_t device, int64_t streams, const char* what) {
    return "GPU " + std::to_string(device) + " · " + std::to_string(streams) + " more streams" + what +
           ", merged into one row (the viewer draws at most " + std::to_string(kMaxStreamRows) + " stream rows)";
}

// The stream a (device, stream) key is drawn under: its own until kMaxStreamRows keys have a row,
// then the device's shared row. `merged` counts the streams each device's shared row holds.
std::pair<int64_t, int64_t> capped_key(std::pair<int64_t, int64_t> key, size_t rows_so_far, bool known,
                                       std::map<int64_t, int64_t>& merged) {
    if (known || rows_so_far < kMaxStreamRows) return key;
    ++merged[key.first];
    return {key.first, kMergedStreams};
}

// Host rows (NVTX per thread and depth, library calls and syncs per thread) beyond kMaxStreamRows of
// a kind: their items go into one row at the end, whose title says how many rows it holds and why
// (a trace with 100 000 threads would make a row each, as 100 000 streams did).
void merge_excess_rows(std::vector<TimelineRow>& rows, RowKind kind, const char* what) {
    if (std::count_if(rows.begin(), rows.end(), [kind](const TimelineRow& r) { return r.kind == kind; }) <=
        static_cast<std::ptrdiff_t>(kMaxStreamRows))
        return;
    size_t kept = 0, merged = 0;
    std::vector<std::tuple<int64_t, int64_t, uint32_t, int64_t>> items;
    std::shared_ptr<const std::vector<std::string>> labels;
    std::vector<TimelineRow> out;
    for (TimelineRow& row : rows) {
        if (row.kind != kind || kept++ < kMaxStreamRows) {
            out.push_back(std::move(row));
            continue;
        }
        ++merged;
        labels = row.labels;
        for (size_t i = 0; i < row.items.size(); ++i)
            items.emplace_back(row.items.start(i), row.items.end(i), row.items.label(i), row.items.id(i));
    }
    std::sort(items.begin(), items.end());
    TimelineRow row;
    row.kind = kind;
    row.labels = labels;
    row.title = std::to_string(merged) + " more " + what + ", merged into one row (the viewer draws at most " +
                std::to_string(kMaxStreamRows) + " of them)";
    for (const auto& [s, e, l, id] : items) row.items.add(s, e, l, id);
    out.push_back(std::move(row));
    rows = std::move(out);
}

// The label texts of a set of rows, each stored once.
struct LabelTable {
    std::shared_ptr<std::vector<std::string>> texts = std::make_shared<std::vector<std::string>>();
    std::map<std::string, uint32_t, std::less<>> index;
    uint32_t operator()(std::string_view text) {
        auto found = index.find(text);
        if (found != index.end()) return found->second;
        texts->emplace_back(text);
        return index.emplace(text, static_cast<uint32_t>(texts->size() - 1)).first->second;
    }
};

// threads.id -> tid, and streams.id -> handle.
std::map<int64_t, int64_t> read_thread_ids(const Database& db) {
    std::map<int64_t, int64_t> tids;
    RowReader<trace::ThreadRow> threads(db);
    for (trace::ThreadRow t; threads.next(t);) tids[t.id] = t.tid;
    return tids;
}

std::map<int64_t, int64_t> read_stream_handles(const Database& db) {
    std::map<int64_t, int64_t> handles;
    RowReader<trace::StreamRow> streams(db);
    for (trace::StreamRow s; streams.next(s);) handles[s.id] = s.handle;
    return handles;
}

std::string thread_title(const std::map<int64_t, int64_t>& tids, int64_t thread) {
    auto found = tids.find(thread);
    if (found == tids.end()) return thread < 0 ? "?" : "#" + std::to_string(thread);
    return std::to_string(found->second);  // the tid: thread names are long and alike (the program's)
}

void load_overview_rows(const Database& db, Overview& overview) {
    LabelTable label;
    const std::map<int64_t, int64_t> threads = read_thread_ids(db);
    const std::map<int64_t, int64_t> stream_handles = read_stream_handles(db);
    // Copies and sets with a device interval: one row per device and stream, merged in start order
    // (sets by negative id).
    std::map<std::pair<int64_t, int64_t>, std::vector<std::tuple<int64_t, int64_t, uint32_t, int64_t>>> transfers;
    RowReader<trace::CopyRow> copies(db);
    for (trace::CopyRow c; copies.next(c);) {
        if (!c.duration_ns) continue;
        transfers[{c.device, c.stream.value_or(-1)}].emplace_back(
            c.start_ns, saturating_end(c.start_ns, *c.duration_ns),
            label(std::string("memcpy ") + trace::copy_kind_name(c.kind)), c.id);
    }
    RowReader<trace::SetRow> sets(db);
    for (trace::SetRow m; sets.next(m);) {
        if (m.duration_ns)
            transfers[{m.device, m.stream.value_or(-1)}].emplace_back(
                m.start_ns, saturating_end(m.start_ns, *m.duration_ns), label("memset"), -m.id);
    }
    std::map<int64_t, int64_t> merged;  // device -> streams drawn in its shared row
    std::map<std::pair<int64_t, int64_t>, std::vector<std::tuple<int64_t, int64_t, uint32_t, int64_t>>> capped;
    for (auto& [key, items] : transfers) {
        auto& into = capped[capped_key(key, capped.size(), capped.count(key) != 0, merged)];
        into.insert(into.end(), items.begin(), items.end());
    }
    transfers.clear();
    for (auto& [key, items] : capped) {
        std::sort(items.begin(), items.end());
        TimelineRow row;
        row.kind = RowKind::transfers;
        row.device = key.first;
        row.stream = key.second;
        row.title = key.second == kMergedStreams ? merged_title(key.first, merged[key.first], " with copies")
                                                 : "GPU " + std::to_string(key.first) + " · " +
                                                       stream_name(stream_handles, key.second) + " · copies";
        for (const auto& [s, e, l, id] : items) row.items.add(s, e, l, id);
        overview.rows.push_back(std::move(row));
    }
    // NVTX ranges per thread and domain, one row per nesting depth. Taken by begin, the longer first,
    // so an enclosing range comes before what it encloses (one never closed after those that closed).
    std::map<std::pair<int64_t, std::string>, std::vector<std::tuple<int64_t, int64_t, int64_t, uint32_t>>> ranges;
    RowReader<trace::RangeRow> range_reader(db);
    for (trace::RangeRow r; range_reader.next(r);) {
        ranges[{r.thread.value_or(-1), std::string(r.domain)}].emplace_back(
            r.begin_ns, r.end_ns ? -*r.end_ns : INT64_MAX, r.id, label(r.name.empty() ? "(unnamed range)" : r.name));
    }
    for (auto& [key, list] : ranges) {
        std::sort(list.begin(), list.end());  // begin, then minus the end
        RangeRows rows;
        for (const auto& [begin, minus_end, id, l] : list)
            rows.add(begin, std::max(begin, minus_end == INT64_MAX ? overview.duration_ns : -minus_end), l, id);
        for (size_t depth = 0; depth < rows.by_depth.size(); ++depth) {
            TimelineRow row;
            row.kind = RowKind::nvtx;
            row.thread = key.first;
            row.depth = static_cast<int>(depth);
            row.title = "NVTX " + (key.second.empty() ? std::string() : key.second + " ") +
                        thread_title(threads, key.first) + (depth > 0 ? " · depth " + std::to_string(depth) : "");
            for (const auto& [s, e, l, id] : rows.by_depth[depth]) row.items.add(s, e, l, id);
            overview.rows.push_back(std::move(row));
        }
    }
    for (TimelineRow& row : overview.rows) row.labels = label.texts;
    merge_excess_rows(overview.rows, RowKind::nvtx, "NVTX rows (threads and nesting depths)");
    for (TimelineRow& row : overview.rows) row.lod.build(row.items, overview.duration_ns);
}

// Host: synchronizations and library calls, one row per thread. Read with the kernels (a training
// run has one library call per few kernels: millions in a long run), not in the overview.
void load_host_rows(const Database& db, std::vector<TimelineRow>& out) {
    LabelTable label;
    const std::map<int64_t, int64_t> threads = read_thread_ids(db);
    // Library calls and synchronizations, each streamed straight into its rows (no copy of millions
    // of calls): rows per thread and source, in id order, which is time order in traces tbdprof
    // writes; a file that is not gets sorted by SQLite. Not RowReader<LibraryCallRow>: it reads all
    // 29 columns, and over the 2.5 M calls of the 10 M-kernel trace took 4.3 s where these five take
    // 0.9 s (docs/viewer.md); synchronizations have the same five columns and share the loop.
    struct Source {
        const char* sql;
        const char* suffix;
    };
    for (const Source& source :
         {Source{"SELECT id, thread, name, begin_ns, end_ns FROM library_calls ORDER BY ", " · library calls"},
          Source{"SELECT id, thread, kind, begin_ns, end_ns FROM api_calls ORDER BY ", " · syncs"}}) {
        const size_t first_row = out.size();
        for (const char* order : {"id", "begin_ns, id"}) {
            out.resize(first_row);
            std::map<int64_t, size_t> row_of;
            Statement q(db, std::string(source.sql) + order);
            bool sorted = true;
            while (q.step()) {
                const int64_t thread = q.column_optional_int(1).value_or(-1);
                auto [it, inserted] = row_of.emplace(thread, out.size());
                if (inserted) {
                    TimelineRow row;
                    row.kind = RowKind::host_calls;
                    row.thread = thread;
                    row.title = "CPU " + thread_title(threads, thread) + source.suffix;
                    out.push_back(std::move(row));
                }
                ItemRow& items = out[it->second].items;
                const int64_t begin = q.column_int(3);
                items.add(begin, std::max(begin, q.column_int(4)), label(q.column_view(2)), q.column_int(0));
                if (!items.sorted()) {
                    sorted = false;
                    break;
                }
            }
            if (sorted) break;
        }
    }
    for (TimelineRow& row : out) {
        if (row.kind == RowKind::host_calls) row.labels = label.texts;
    }
}

// Iterations as the tagger stored them: the training ones of the process with the most (the lowest
// id on ties), as the report counts one process's own. A trace with none stored (untagged) gets the
// report's own spans, so the bands always match the figures.
// The phases of the drawn process's steps (several ranks' phases would overlap on one band); each
// in device time when every one has it.
void load_phases(const Database& db, const std::set<int64_t>& drawn_iterations, Overview& overview) {
    std::vector<Band> host, device;
    RowReader<trace::PhaseRow> phases(db);
    for (trace::PhaseRow p; phases.next(p);) {
        if (!drawn_iterations.count(p.iteration)) continue;
        host.push_back({p.begin_ns, p.end_ns, std::string(p.kind)});
        if (p.device_begin_ns && p.device_end_ns)
            device.push_back({*p.device_begin_ns, *p.device_end_ns, std::string(p.kind)});
    }
    overview.phases_in_device_time = !host.empty() && device.size() == host.size();
    overview.phases = std::move(overview.phases_in_device_time ? device : host);
}

void load_iterations(const Database& db, const std::string& path, Overview& overview) {
    std::map<int64_t, std::vector<Band>> by_process;
    std::map<int64_t, std::set<int64_t>> ids_by_process;
    bool stored = false;
    RowReader<trace::IterationRow> iterations(db, {.by_time = true});
    for (trace::IterationRow it; iterations.next(it);) {
        stored = true;
        if (!it.training()) continue;
        by_process[it.process].push_back({it.begin_ns, it.end_ns, "iteration " + std::to_string(it.index)});
        ids_by_process[it.process].insert(it.id);
    }
    int64_t drawn = -1;
    for (auto& [process, bands] : by_process) {
        if (bands.size() > overview.iterations.size()) overview.iterations = std::move(bands), drawn = process;
    }
    if (stored) {
        if (drawn >= 0) load_phases(db, ids_by_process[drawn], overview);
        return;
    }
    int index = 0;
    for (const auto& [begin, end] : analyzer::trace_iterations(path))
        overview.iterations.push_back({begin, end, "iteration " + std::to_string(index++)});
}

// Device allocations with their tags, by allocation time.
void load_allocations(const Database& db, Overview& overview) {
    RowReader<trace::AllocationRow> allocations(db, {.by_time = true});
    for (trace::AllocationRow row; allocations.next(row);) {
        if (!trace::is_device_memory(row.kind)) continue;
        overview.allocations.push_back({.id = row.id,
                                        .device = row.device,
                                        .bytes = row.bytes,
                                        .alloc_ns = row.alloc_ns,
                                        .free_ns = row.free_ns.value_or(INT64_MAX),
                                        .category = static_cast<int>(trace::category_from_text(row.category)),
                                        .confidence = row.confidence.value_or(-1),
                                        .rule = std::string(row.rule),
                                        .reason = std::string(row.reason),
                                        .kind = trace::memory_kind_name(row.kind),
                                        .stack = row.stack.value_or(-1)});
    }
}

// Tensors inside pooled segments, each linked to its segment (grouped by segment, then by first
// use), for the memory view's lifetime bars.
void load_subranges(const Database& db, Overview& overview) {
    std::unordered_map<int64_t, size_t> index_of;
    for (size_t i = 0; i < overview.allocations.size(); ++i) index_of.emplace(overview.allocations[i].id, i);
    RowReader<trace::SubrangeRow> subranges(db, {.by_time = true});
    for (trace::SubrangeRow row; subranges.next(row);) {
        if (!index_of.count(row.allocation)) continue;  // a segment that is not device memory
        overview.subranges.push_back({.id = row.id,
                                      .allocation = row.allocation,
                                      .offset = row.offset,
                                      .bytes = row.bytes,
                                      .begin_ns = row.begin_ns,
                                      .end_ns = std::max(row.begin_ns, row.end_ns),
                                      .category = static_cast<int>(trace::category_from_text(row.category)),
                                      .confidence = row.confidence.value_or(-1),
                                      .rule = std::string(row.rule),
                                      .reason = std::string(row.reason)});
    }
    std::stable_sort(overview.subranges.begin(), overview.subranges.end(),
                     [](const SubRangeInfo& a, const SubRangeInfo& b) { return a.allocation < b.allocation; });
    for (size_t i = 0; i < overview.subranges.size(); ++i) {
        AllocationInfo& segment = overview.allocations[index_of.at(overview.subranges[i].allocation)];
        if (segment.subrange_count++ == 0) segment.subrange_first = i;
    }
}

// Function id -> label (index into the names table). Function ids are small and dense in practice:
// a plain table, with a map for the rest.
class FunctionLabels {
public:
    static constexpr uint32_t kNone = UINT32_MAX;

    explicit FunctionLabels(const trace::Database& db) : names_(std::make_shared<std::vector<std::string>>()) {
        for (auto& [function, name] : trace::read_function_names(db)) {
            remember(function, static_cast<uint32_t>(names_->size()));
            names_->push_back(std::move(name));
        }
    }
    // A function without a name gets one ("function ID") the first time it is seen.
    uint32_t label_of(int64_t function) {
        uint32_t label = lookup(function);
        if (label == kNone) {
            label = static_cast<uint32_t>(names_->size());
            remember(function, label);
            names_->push_back("function " + std::to_string(function));
        }
        return label;
    }
    const std::shared_ptr<std::vector<std::string>>& names() const { return names_; }

private:
    void remember(int64_t function, uint32_t label) {
        if (function >= 0 && function < (int64_t{1} << 20)) {
            if (dense_label_.size() <= static_cast<size_t>(function))
                dense_label_.resize(static_cast<size_t>(function) + 1, kNone);
            dense_label_[static_cast<size_t>(function)] = label;
        } else {
            function_label_[function] = label;
        }
    }
    uint32_t lookup(int64_t function) const {
        if (function >= 0 && static_cast<size_t>(function) < dense_label_.size())
            return dense_label_[static_cast<size_t>(function)];
        auto found = function_label_.find(function);
        return found == function_label_.end() ? kNone : found->second;
    }

    std::shared_ptr<std::vector<std::string>> names_;
    std::vector<uint32_t> dense_label_;
    std::unordered_map<int64_t, uint32_t> function_label_;
};

// Kernel rows, one per (device, stream) up to the cap, filled kernel by kernel in time order.
class KernelRowBuilder {
public:
    KernelRowBuilder(const trace::Database& db, KernelDetail& detail, const std::atomic<bool>& cancel,
                     const ProgressFn& progress, bool keep_partial)
        : labels_(db),
          stream_handles_(read_stream_handles(db)),
          detail_(detail),
          cancel_(cancel),
          progress_(progress),
          keep_partial_(keep_partial),
          total_(std::max<double>(
              1, static_cast<double>(db.query_int(
                     "SELECT coalesce((SELECT max(id) FROM kernels) - (SELECT min(id) FROM kernels) + 1, 0)")))) {}

    // Adds one kernel to its row; false stops the scan (out of order, or cancelled).
    bool add(int64_t id, int64_t device, int64_t stream, int64_t function, int64_t start, int64_t duration,
             bool graph) {
        ItemRow& items = detail_.rows[row_for({device, stream})].items;
        items.add(start, saturating_end(start, duration), labels_.label_of(function), id, graph);
        if (!items.sorted()) return sorted_ = false;
        if ((++read_ & 0xffff) == 0) {
            if (cancel_.load(std::memory_order_relaxed)) {
                if (!keep_partial_) throw LoadCancelled();
                detail_.complete = false;
                return false;
            }
            if (progress_) progress_(0.9 * static_cast<double>(read_) / total_);
        }
        return true;
    }
    bool sorted() const { return sorted_; }
    // Before reading again by start time: no rows, nothing read.
    void restart() {
        detail_.rows.clear(), row_of_.clear(), merged_streams_.clear(), last_row_ = SIZE_MAX, read_ = 0, sorted_ = true;
    }
    // Rows in (device, stream) order, merged rows titled, every row sharing the names table.
    void finish() {
        std::sort(detail_.rows.begin(), detail_.rows.end(), [](const TimelineRow& a, const TimelineRow& b) {
            return std::tie(a.device, a.stream) < std::tie(b.device, b.stream);
        });
        for (TimelineRow& row : detail_.rows)
            if (row.stream == kMergedStreams) row.title = merged_title(row.device, merged_streams_[row.device], "");
        for (TimelineRow& row : detail_.rows) row.labels = labels_.names();
    }
    const std::shared_ptr<std::vector<std::string>>& names() const { return labels_.names(); }

private:
    // Consecutive kernels mostly share a stream: the row is looked up only when it changes.
    size_t row_for(std::pair<int64_t, int64_t> key) {
        if (key == last_key_ && last_row_ != SIZE_MAX) return last_row_;
        auto found = row_of_.find(key);
        if (found == row_of_.end()) {
            const auto drawn = capped_key(key, detail_.rows.size(), false, merged_streams_);
            auto [it, inserted] = row_of_.emplace(drawn, detail_.rows.size());
            if (inserted) {
                TimelineRow row;
                row.kind = RowKind::kernels;
                row.device = key.first;
                row.stream = drawn.second;
                row.title = "GPU " + std::to_string(key.first) + " · " + stream_name(stream_handles_, key.second);
                detail_.rows.push_back(std::move(row));
            }
            found = row_of_.emplace(key, it->second).first;  // a merged stream finds its row at once
        }
        last_key_ = key;
        last_row_ = found->second;
        return last_row_;
    }

    FunctionLabels labels_;
    const std::map<int64_t, int64_t> stream_handles_;
    KernelDetail& detail_;
    const std::atomic<bool>& cancel_;
    const ProgressFn& progress_;
    const bool keep_partial_;
    const double total_;
    std::map<std::pair<int64_t, int64_t>, size_t> row_of_;
    std::map<int64_t, int64_t> merged_streams_;  // device -> streams drawn in its shared row
    std::pair<int64_t, int64_t> last_key_{};
    size_t last_row_ = SIZE_MAX;
    int64_t read_ = 0;
    bool sorted_ = true;
};

// After the kernel rows: the host rows (not when cancelled: the kernels read so far only) and each
// row's mipmap, timed with TBDPROF_VIEWER_TIMING.
void finish_detail(const trace::Database& db, int64_t run_duration_ns, const ProgressFn& progress,
                   KernelDetail& detail) {
    const bool timing = std::getenv("TBDPROF_VIEWER_TIMING") != nullptr;
    auto lap = [&, clock = std::chrono::steady_clock::now()](const char* stage) mutable {
        const auto now = std::chrono::steady_clock::now();
        if (timing)
            std::fprintf(stderr, "tbdprof-viewer:   %-12s %.3f s\n", stage,
                         std::chrono::duration<double>(now - clock).count());
        clock = now;
    };
    lap("kernel rows");
    if (detail.complete) load_host_rows(db, detail.rows);
    merge_excess_rows(detail.rows, RowKind::host_calls, "CPU rows (threads)");
    lap("host rows");
    for (size_t i = 0; i < detail.rows.size(); ++i) {
        detail.rows[i].lod.build(detail.rows[i].items, run_duration_ns);
        if (progress) progress(0.9 + 0.1 * static_cast<double>(i + 1) / static_cast<double>(detail.rows.size()));
    }
    lap("summaries");
}

}  // namespace

void check_trace(const std::string& path) {
    or_load_error([&] { analyzer::check_trace(path); });
}

std::unique_ptr<Overview> load_overview(const std::string& path) {
    Database db = or_load_error([&] { return trace::open_trace(path); });
    auto overview = std::make_unique<Overview>();
    overview->path = path;
    try {
        trace::RunRow run = trace::read_run(db);
        overview->duration_ns = std::max<int64_t>(1, run.duration_ns);
        overview->command_line = std::move(run.command_line);
        RowReader<trace::DeviceRow> devices(db);
        for (trace::DeviceRow d; devices.next(d);) overview->devices.emplace_back(d.id, d.name);
        // An estimate that costs no scan (ids are dense in traces tbdprof writes): for the progress text.
        overview->kernel_estimate =
            db.query_int("SELECT coalesce((SELECT max(id) FROM kernels) - (SELECT min(id) FROM kernels) + 1, 0)");
        load_overview_rows(db, *overview);
        load_iterations(db, path, *overview);
        load_allocations(db, *overview);
        load_subranges(db, *overview);
    } catch (const analyzer::TraceError& e) {
        throw LoadError(e.what());
    } catch (const trace::SqliteError& e) {
        throw LoadError(path + " could not be read: " + e.what());
    }
    return overview;
}

std::unique_ptr<ReportData> load_report(const std::string& path, const std::string& whatif) {
    analyzer::AnalysisOptions options;
    options.top_kernels = 1 << 20;  // the Kernels view lists every kernel name
    options.full_memory_timeline = true;
    auto data = std::make_unique<ReportData>();
    data->report = or_load_error([&] { return analyzer::analyze_trace(path, options); });
    data->memory.build(data->report.memory.timeline);
    data->report.memory.timeline.clear();  // the series holds it now
    data->report.memory.timeline.shrink_to_fit();
    // Several devices: each one's own replay too, for a lane per device on the same axis.
    if (data->report.memory.device_peaks.size() >= 2) {
        or_load_error([&] {
            for (const auto& [device, peak] : data->report.memory.device_peaks) {
                DeviceMemory lane;
                lane.device = device;
                lane.peak_bytes = peak;
                lane.series.build(analyzer::device_memory(path, device).timeline);
                data->devices.push_back(std::move(lane));
            }
        });
    }
    if (!whatif.empty()) data->predicted = predict_series(path, whatif);
    return data;
}

std::unique_ptr<KernelDetail> load_kernels(const std::string& path, int64_t run_duration_ns,
                                           const std::atomic<bool>& cancel, const ProgressFn& progress,
                                           bool keep_partial) {
    Database db = or_load_error([&] { return trace::open_trace(path); });
    auto detail = std::make_unique<KernelDetail>();
    try {
        KernelRowBuilder rows(db, *detail, cancel, progress, keep_partial);
        // Kernels are stored in time order (id order), read through the trace library's fast kernel
        // scan (fast_scans.h; the full RowReader<KernelRow> reads 15 columns and took twice as long
        // over the 10 M kernels of the benchmark trace). A file that is not in time order is read
        // again by start time.
        trace::for_each_kernel_interval(db, INT64_MIN, INT64_MAX, [&](const trace::KernelInterval& k) {
            return k.duration_ns < 0 ||
                   rows.add(k.id, k.device, k.stream, k.function, k.start_ns, k.duration_ns, k.graph);
        });
        if (!rows.sorted()) {
            rows.restart();
            trace::RowReader<trace::KernelRow> kernels(db, {.by_time = true});
            for (trace::KernelRow k; kernels.next(k);) {
                if (k.duration_ns && !rows.add(k.id, k.device, k.stream.value_or(-1), k.function, k.start_ns,
                                               *k.duration_ns, k.graph_launch.has_value()))
                    break;
            }
        }
        rows.finish();
        add_communication_rows(path, detail->rows);
        finish_detail(db, run_duration_ns, progress, *detail);
        detail->names = rows.names();
    } catch (const trace::SqliteError& e) {
        throw LoadError(path + " could not be read: " + e.what());
    } catch (const analyzer::TraceError& e) {
        throw LoadError(e.what());
    }
    return detail;
}

}  // namespace tbdprof::viewer
