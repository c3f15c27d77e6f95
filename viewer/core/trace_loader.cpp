#include "trace_loader.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <unordered_map>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/device_memory.h"
#include "tbdprof/trace/trace_reader.h"

namespace tbdprof::viewer {
namespace {

using trace::Database;
using trace::Statement;

// The trace library's opener; any SQLite failure afterwards (a file damaged past its header) becomes
// one sentence too.
Database open(const std::string& path) {
    try {
        return trace::open_trace(path);
    } catch (const std::exception& e) {
        throw LoadError(e.what());
    }
}

bool has_table(Database& db, const char* name) {
    Statement query(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
    query.bind(1, name);
    return query.step();
}

int64_t optional_int(const Statement& q, int column, int64_t fallback) {
    return q.is_null(column) ? fallback : q.column_int(column);
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

std::string thread_title(const std::map<int64_t, std::pair<int64_t, std::string>>& threads, int64_t thread) {
    auto found = threads.find(thread);
    if (found == threads.end()) return thread < 0 ? "?" : "#" + std::to_string(thread);
    return std::to_string(found->second.first);  // the tid: thread names are long and alike (the program's)
}

void load_overview_rows(Database& db, Overview& overview) {
    auto labels = std::make_shared<std::vector<std::string>>();
    std::unordered_map<std::string, uint32_t> label_index;
    auto label = [&](const std::string& text) {
        auto [it, inserted] = label_index.emplace(text, static_cast<uint32_t>(labels->size()));
        if (inserted) labels->push_back(text);
        return it->second;
    };
    std::map<int64_t, std::pair<int64_t, std::string>> threads;  // id -> (tid, name)
    {
        Statement q(db, "SELECT id, tid, name FROM threads");
        while (q.step()) threads[q.column_int(0)] = {q.column_int(1), q.is_null(2) ? "" : q.column_text(2)};
    }
    std::map<int64_t, int64_t> stream_handles;
    {
        Statement q(db, "SELECT id, handle FROM streams");
        while (q.step()) stream_handles[q.column_int(0)] = q.column_int(1);
    }
    // Copies and sets: one row per device and stream, merged in start order.
    std::map<std::pair<int64_t, int64_t>, std::vector<std::tuple<int64_t, int64_t, uint32_t, int64_t>>> transfers;
    {
        Statement q(db,
                    "SELECT id, device, stream, 'memcpy ' || kind, bytes, start_ns, duration_ns FROM copies "
                    "WHERE duration_ns IS NOT NULL UNION ALL "
                    "SELECT -id, device, stream, 'memset', bytes, start_ns, duration_ns FROM sets "
                    "WHERE duration_ns IS NOT NULL");
        while (q.step()) {
            const int64_t start = q.column_int(5);
            transfers[{q.column_int(1), optional_int(q, 2, -1)}].emplace_back(start, start + q.column_int(6),
                                                                              label(q.column_text(3)), q.column_int(0));
        }
    }
    for (auto& [key, items] : transfers) {
        std::sort(items.begin(), items.end());
        TimelineRow row;
        row.kind = RowKind::transfers;
        row.device = key.first;
        row.stream = key.second;
        row.title = "GPU " + std::to_string(key.first) + " · " + stream_name(stream_handles, key.second) + " · copies";
        for (const auto& [s, e, l, id] : items) row.items.add(s, e, l, id);
        overview.rows.push_back(std::move(row));
    }
    // NVTX ranges per thread and domain, one row per nesting depth.
    std::map<std::pair<int64_t, std::string>, RangeRows> ranges;
    {
        Statement q(db, "SELECT id, thread, begin_ns, end_ns, name, domain FROM ranges ORDER BY begin_ns, end_ns DESC");
        while (q.step()) {
            const int64_t begin = q.column_int(2);
            const int64_t end = std::max(begin, optional_int(q, 3, overview.duration_ns));
            ranges[{optional_int(q, 1, -1), q.is_null(5) ? "" : q.column_text(5)}].add(
                begin, end, label(q.is_null(4) ? "(unnamed range)" : q.column_text(4)), q.column_int(0));
        }
    }
    for (auto& [key, rows] : ranges) {
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
    for (TimelineRow& row : overview.rows) {
        row.labels = labels;
        row.lod.build(row.items, overview.duration_ns);
    }
}

// Host: synchronizations and library calls, one row per thread. Read with the kernels (a training
// run has one library call per few kernels: millions in a long run), not in the overview.
void load_host_rows(Database& db, std::vector<TimelineRow>& out) {
    auto labels = std::make_shared<std::vector<std::string>>();
    std::unordered_map<std::string, uint32_t> label_index;
    auto label = [&](const std::string& text) {
        auto [it, inserted] = label_index.emplace(text, static_cast<uint32_t>(labels->size()));
        if (inserted) labels->push_back(text);
        return it->second;
    };
    std::map<int64_t, std::pair<int64_t, std::string>> threads;  // id -> (tid, name)
    {
        Statement q(db, "SELECT id, tid, name FROM threads");
        while (q.step()) threads[q.column_int(0)] = {q.column_int(1), q.is_null(2) ? "" : q.column_text(2)};
    }
    // Library calls and synchronizations, each streamed straight into its rows (no copy of millions
    // of calls): rows per thread and source, in id order, which is time order in traces tbdprof
    // writes; a file that is not gets sorted by SQLite.
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
                const int64_t thread = optional_int(q, 1, -1);
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
                items.add(begin, std::max(begin, q.column_int(4)), label(q.column_text(2)), q.column_int(0));
                if (!items.sorted()) {
                    sorted = false;
                    break;
                }
            }
            if (sorted) break;
        }
    }
    for (TimelineRow& row : out) {
        if (row.kind == RowKind::host_calls) row.labels = labels;
    }
}

}  // namespace

void check_trace(const std::string& path) {
    try {
        analyzer::check_trace(path);
    } catch (const std::exception& e) {
        throw LoadError(e.what());
    }
}

// Tensors inside pooled segments, each linked to its segment (trace order: grouped by segment,
// then by first use), for the memory view's lifetime bars.
static void load_subranges(Database& db, Overview& overview) {
    if (!has_table(db, "allocation_subranges")) return;
    std::unordered_map<int64_t, size_t> index_of;
    for (size_t i = 0; i < overview.allocations.size(); ++i) index_of.emplace(overview.allocations[i].id, i);
    Statement q(db,
                "SELECT id, allocation, offset, bytes, begin_ns, end_ns, category, confidence, rule, reason "
                "FROM allocation_subranges ORDER BY allocation, begin_ns, id");
    while (q.step()) {
        const auto found = index_of.find(q.column_int(1));
        if (found == index_of.end()) continue;  // a segment that is not device memory
        SubRangeInfo r;
        r.id = q.column_int(0);
        r.allocation = q.column_int(1);
        r.offset = q.column_int(2);
        r.bytes = q.column_int(3);
        r.begin_ns = q.column_int(4);
        r.end_ns = std::max(r.begin_ns, q.column_int(5));
        r.category = analyzer::category_index(q.column_text(6));
        r.confidence = q.is_null(7) ? -1 : q.column_double(7);
        r.rule = q.is_null(8) ? "" : q.column_text(8);
        r.reason = q.is_null(9) ? "" : q.column_text(9);
        AllocationInfo& segment = overview.allocations[found->second];
        if (segment.subrange_count == 0) segment.subrange_first = overview.subranges.size();
        ++segment.subrange_count;
        overview.subranges.push_back(std::move(r));
    }
}

std::unique_ptr<Overview> load_overview(const std::string& path) {
    Database db = open(path);
    auto overview = std::make_unique<Overview>();
    overview->path = path;
    try {
        {
            Statement q(db, "SELECT duration_ns, command_line FROM run");
            if (q.step()) {
                overview->duration_ns = std::max<int64_t>(1, q.column_int(0));
                overview->command_line = q.column_text(1);
            }
        }
        {
            Statement q(db, "SELECT id, name FROM devices ORDER BY id");
            while (q.step()) overview->devices.emplace_back(q.column_int(0), q.column_text(1));
        }
        // An estimate that costs no scan (ids are dense in traces tbdprof writes): for the progress text.
        overview->kernel_estimate =
            db.query_int("SELECT coalesce((SELECT max(id) FROM kernels) - (SELECT min(id) FROM kernels) + 1, 0)");
        load_overview_rows(db, *overview);
        // Iterations as the report detects them (the analyzer owns that definition).
        int index = 0;
        for (const auto& [begin, end] : analyzer::trace_iterations(path)) {
            overview->iterations.push_back({begin, end, "iteration " + std::to_string(index++)});
        }
        if (has_table(db, "phases")) {
            Statement q(db, "SELECT kind, begin_ns, end_ns FROM phases ORDER BY begin_ns");
            while (q.step()) overview->phases.push_back({q.column_int(1), q.column_int(2), q.column_text(0)});
        }
        Statement q(
            db,
            "SELECT a.id, a.device, a.bytes, a.alloc_ns, a.free_ns, a.kind, c.category, c.confidence, c.rule, "
            "c.reason, a.stack FROM allocations AS a LEFT JOIN allocation_categories AS c ON c.allocation = a.id "
            "WHERE a.kind IN ('device', 'device_async', 'managed') ORDER BY a.alloc_ns, a.id");
        while (q.step()) {
            AllocationInfo a;
            a.id = q.column_int(0);
            a.device = q.column_int(1);
            a.bytes = q.column_int(2);
            a.alloc_ns = q.column_int(3);
            a.free_ns = optional_int(q, 4, INT64_MAX);
            a.kind = q.column_text(5);
            a.category = analyzer::category_index(q.is_null(6) ? "" : q.column_text(6));
            a.confidence = q.is_null(7) ? -1 : q.column_double(7);
            a.rule = q.is_null(8) ? "" : q.column_text(8);
            a.reason = q.is_null(9) ? "" : q.column_text(9);
            a.stack = optional_int(q, 10, -1);
            overview->allocations.push_back(std::move(a));
        }
        load_subranges(db, *overview);
    } catch (const analyzer::TraceError& e) {
        throw LoadError(e.what());
    } catch (const trace::SqliteError& e) {
        throw LoadError(path + " could not be read: " + e.what());
    }
    return overview;
}

std::unique_ptr<ReportData> load_report(const std::string& path) {
    analyzer::AnalysisOptions options;
    options.top_kernels = 1 << 20;  // the Kernels view lists every kernel name
    options.full_memory_timeline = true;
    auto data = std::make_unique<ReportData>();
    try {
        data->report = analyzer::analyze_trace(path, options);
    } catch (const std::exception& e) {
        throw LoadError(e.what());
    }
    data->memory.build(data->report.memory.timeline);
    data->report.memory.timeline.clear();  // the series holds it now
    data->report.memory.timeline.shrink_to_fit();
    // Several devices: each one's own replay too, for a lane per device on the same axis.
    if (data->report.memory.device_peaks.size() >= 2) {
        try {
            for (const auto& [device, peak] : data->report.memory.device_peaks) {
                DeviceMemory lane;
                lane.device = device;
                lane.peak_bytes = peak;
                lane.series.build(analyzer::device_memory(path, device).timeline);
                data->devices.push_back(std::move(lane));
            }
        } catch (const std::exception& e) {
            throw LoadError(e.what());
        }
    }
    return data;
}

std::unique_ptr<KernelDetail> load_kernels(const std::string& path, int64_t run_ns, const std::atomic<bool>& cancel,
                                           const ProgressFn& progress, bool keep_partial) {
    Database db = open(path);
    auto detail = std::make_unique<KernelDetail>();
    try {
        auto names = std::make_shared<std::vector<std::string>>();
        // Function ids are small and dense in practice: a plain table, with a map for the rest.
        std::vector<uint32_t> dense_label;
        std::unordered_map<int64_t, uint32_t> function_label;
        constexpr uint32_t kNone = UINT32_MAX;
        auto remember = [&](int64_t function, uint32_t label) {
            if (function >= 0 && function < (int64_t{1} << 20)) {
                if (dense_label.size() <= static_cast<size_t>(function))
                    dense_label.resize(static_cast<size_t>(function) + 1, kNone);
                dense_label[static_cast<size_t>(function)] = label;
            } else {
                function_label[function] = label;
            }
        };
        auto lookup = [&](int64_t function) {
            if (function >= 0 && static_cast<size_t>(function) < dense_label.size())
                return dense_label[static_cast<size_t>(function)];
            auto found = function_label.find(function);
            return found == function_label.end() ? kNone : found->second;
        };
        {
            Statement q(db, "SELECT f.id, s.text FROM functions AS f JOIN strings AS s ON s.id = f.name");
            while (q.step()) {
                remember(q.column_int(0), static_cast<uint32_t>(names->size()));
                names->push_back(q.column_text(1));
            }
        }
        std::map<int64_t, int64_t> stream_handles;
        {
            Statement q(db, "SELECT id, handle FROM streams");
            while (q.step()) stream_handles[q.column_int(0)] = q.column_int(1);
        }
        const double total = std::max<double>(
            1, static_cast<double>(db.query_int(
                   "SELECT coalesce((SELECT max(id) FROM kernels) - (SELECT min(id) FROM kernels) + 1, 0)")));
        // Kernels are stored in time order (id order); a file that is not gets sorted by SQLite.
        for (const char* order : {"id", "start_ns"}) {
            detail->rows.clear();
            std::map<std::pair<int64_t, int64_t>, size_t> row_of;
            Statement q(
                db,
                std::string(
                    "SELECT id, device, stream, function, start_ns, duration_ns, graph_launch IS NOT NULL FROM kernels "
                    "WHERE duration_ns IS NOT NULL ORDER BY ") +
                    order);
            bool sorted = true;
            int64_t read = 0;
            std::pair<int64_t, int64_t> last_key{};
            size_t last_row = SIZE_MAX;
            while (q.step()) {
                const std::pair<int64_t, int64_t> key{q.column_int(1), optional_int(q, 2, -1)};
                // Consecutive kernels mostly share a stream: look the row up only when it changes.
                if (key != last_key || last_row == SIZE_MAX) {
                    auto [it, inserted] = row_of.emplace(key, detail->rows.size());
                    if (inserted) {
                        TimelineRow row;
                        row.kind = RowKind::kernels;
                        row.device = key.first;
                        row.stream = key.second;
                        row.title =
                            "GPU " + std::to_string(key.first) + " · " + stream_name(stream_handles, key.second);
                        detail->rows.push_back(std::move(row));
                    }
                    last_key = key;
                    last_row = it->second;
                }
                ItemRow& items = detail->rows[last_row].items;
                uint32_t label = lookup(q.column_int(3));
                if (label == kNone) {
                    label = static_cast<uint32_t>(names->size());
                    remember(q.column_int(3), label);
                    names->push_back("function " + std::to_string(q.column_int(3)));
                }
                const int64_t start = q.column_int(4);
                items.add(start, start + q.column_int(5), label, q.column_int(0), q.column_int(6) != 0);
                if (!items.sorted()) {
                    sorted = false;
                    break;
                }
                if ((++read & 0xffff) == 0) {
                    if (cancel.load(std::memory_order_relaxed)) {
                        if (!keep_partial) throw LoadCancelled();
                        detail->complete = false;
                        break;
                    }
                    if (progress) progress(0.9 * static_cast<double>(read) / total);
                }
            }
            if (sorted) break;
        }
        std::sort(detail->rows.begin(), detail->rows.end(), [](const TimelineRow& a, const TimelineRow& b) {
            return std::tie(a.device, a.stream) < std::tie(b.device, b.stream);
        });
        for (TimelineRow& row : detail->rows) row.labels = names;
        const bool timing = std::getenv("TBDPROF_VIEWER_TIMING") != nullptr;
        auto lap = [&, clock = std::chrono::steady_clock::now()](const char* stage) mutable {
            const auto now = std::chrono::steady_clock::now();
            if (timing)
                std::fprintf(stderr, "tbdprof-viewer:   %-12s %.3f s\n", stage,
                             std::chrono::duration<double>(now - clock).count());
            clock = now;
        };
        lap("kernel rows");
        if (detail->complete) load_host_rows(db, detail->rows);  // cancelled: the kernels read so far only
        lap("host rows");
        for (size_t i = 0; i < detail->rows.size(); ++i) {
            detail->rows[i].lod.build(detail->rows[i].items, run_ns);
            if (progress) progress(0.9 + 0.1 * static_cast<double>(i + 1) / static_cast<double>(detail->rows.size()));
        }
        lap("summaries");
        detail->names = names;
    } catch (const trace::SqliteError& e) {
        throw LoadError(path + " could not be read: " + e.what());
    }
    return detail;
}

}  // namespace tbdprof::viewer
