#include "tbdprof/trace/tables.h"

#include <initializer_list>

namespace tbdprof::trace {
namespace {

// How one row type is read: its FROM clause, its columns in the order read_row takes them (a column
// the file lacks is selected as NULL), the column it is ordered by in time, and whether it has an id.
struct TableSpec {
    const char* table;  // the table whose presence decides whether anything is read
    const char* from;
    std::initializer_list<const char*> columns;  // "alias.column" or "column" of `table`
    const char* id_column;                       // nullptr: no id range
    const char* time_order;                      // ORDER BY with by_time (or always, without an id)
};

// "c.rule" -> table of alias c in `from`: the spec's own table, or the joined categories tables.
std::string_view table_of(const TableSpec& spec, std::string_view column, std::string_view* name) {
    const size_t dot = column.find('.');
    *name = dot == std::string_view::npos ? column : column.substr(dot + 1);
    if (dot == std::string_view::npos || column.substr(0, dot) != "c") return spec.table;
    return spec.table == std::string_view("allocations") ? "allocation_categories" : "strings";
}

std::string select_sql(const Database& db, const TableSpec& spec, const ReadOptions& options) {
    std::string sql = "SELECT ";
    bool first = true;
    for (const char* column : spec.columns) {
        std::string_view name;
        const std::string_view table = table_of(spec, column, &name);
        sql += first ? "" : ", ";
        first = false;
        sql += has_column(db, table, name) ? column : "NULL";
    }
    if (!has_table(db, spec.table)) return sql + " WHERE 0";
    sql += std::string(" FROM ") + spec.from;
    if (spec.id_column) {
        sql += std::string(" WHERE ") + spec.id_column + " BETWEEN ?1 AND ?2 ORDER BY ";
        sql += options.by_time ? std::string(spec.time_order) + ", " + spec.id_column : spec.id_column;
    } else {
        sql += std::string(" ORDER BY ") + spec.time_order;
    }
    return sql;
}

template <class Row>
struct Table;

template <>
struct Table<KernelRow> {
    static constexpr TableSpec spec{"kernels",
                                    "kernels",
                                    {"id", "process", "thread", "device", "stream", "function", "start_ns", "duration_ns",
                                     "queued_ns", "grid", "block", "shared_bytes", "correlation", "library_call",
                                     "graph_launch"},
                                    "id",
                                    "start_ns"};
    static void read(const Statement& s, KernelRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.thread = s.column_optional_int(2);
        r.device = s.column_int(3), r.stream = s.column_optional_int(4), r.function = s.column_int(5);
        r.start_ns = s.column_int(6), r.duration_ns = s.column_optional_int(7), r.queued_ns = s.column_optional_int(8);
        r.grid = s.column_optional_int(9), r.block = s.column_optional_int(10), r.shared_bytes = s.column_optional_int(11);
        r.correlation = s.column_optional_int(12), r.library_call = s.column_optional_int(13);
        r.graph_launch = s.column_optional_int(14);
    }
};

CopyKind copy_kind_from_text(std::string_view text) {
    if (text == "htod") return CopyKind::htod;
    if (text == "dtoh") return CopyKind::dtoh;
    if (text == "dtod") return CopyKind::dtod;
    if (text == "htoh") return CopyKind::htoh;
    return CopyKind::other;
}

template <>
struct Table<CopyRow> {
    static constexpr TableSpec spec{"copies",
                                    "copies",
                                    {"id", "process", "thread", "device", "stream", "kind", "bytes", "src", "dst",
                                     "start_ns", "duration_ns", "queued_ns", "async", "correlation"},
                                    "id",
                                    "start_ns"};
    static void read(const Statement& s, CopyRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.thread = s.column_optional_int(2);
        r.device = s.column_int(3), r.stream = s.column_optional_int(4), r.kind = copy_kind_from_text(s.column_view(5));
        r.bytes = s.column_int(6), r.src = s.column_optional_int(7), r.dst = s.column_optional_int(8);
        r.start_ns = s.column_int(9), r.duration_ns = s.column_optional_int(10), r.queued_ns = s.column_optional_int(11);
        r.async = s.column_int(12) != 0, r.correlation = s.column_optional_int(13);
    }
};

template <>
struct Table<SetRow> {
    static constexpr TableSpec spec{"sets",
                                    "sets",
                                    {"id", "process", "thread", "device", "stream", "value", "bytes", "dst", "start_ns",
                                     "duration_ns", "queued_ns", "async", "correlation"},
                                    "id",
                                    "start_ns"};
    static void read(const Statement& s, SetRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.thread = s.column_optional_int(2);
        r.device = s.column_int(3), r.stream = s.column_optional_int(4), r.value = s.column_optional_int(5);
        r.bytes = s.column_int(6), r.dst = s.column_optional_int(7), r.start_ns = s.column_int(8);
        r.duration_ns = s.column_optional_int(9), r.queued_ns = s.column_optional_int(10);
        r.async = s.column_int(11) != 0, r.correlation = s.column_optional_int(12);
    }
};

template <>
struct Table<AllocationRow> {
    static constexpr TableSpec spec{
        "allocations",
        "allocations AS a LEFT JOIN allocation_categories AS c ON c.allocation = a.id",
        {"a.id", "a.process", "a.thread", "a.device", "a.address", "a.bytes", "a.alloc_ns", "a.free_ns", "a.kind",
         "a.stream", "a.stack", "a.free_thread", "c.category", "c.confidence", "c.rule", "c.reason", "c.evidence"},
        "a.id",
        "a.alloc_ns"};
    static void read(const Statement& s, AllocationRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.thread = s.column_optional_int(2);
        r.device = s.column_int(3), r.address = s.column_int(4), r.bytes = s.column_int(5);
        r.alloc_ns = s.column_int(6), r.free_ns = s.column_optional_int(7);
        r.kind = memory_kind_from_text(s.column_view(8));
        r.stream = s.column_optional_int(9), r.stack = s.column_optional_int(10);
        r.free_thread = s.column_optional_int(11);
        r.category = s.column_view(12), r.confidence = s.column_optional_double(13);
        r.rule = s.column_view(14), r.reason = s.column_view(15), r.evidence = s.column_view(16);
    }
};

template <>
struct Table<SubrangeRow> {
    static constexpr TableSpec spec{"allocation_subranges",
                                    "allocation_subranges",
                                    {"id", "allocation", "offset", "bytes", "begin_ns", "end_ns", "category",
                                     "confidence", "rule", "reason", "evidence"},
                                    "id",
                                    "begin_ns"};
    static void read(const Statement& s, SubrangeRow& r) {
        r.id = s.column_int(0), r.allocation = s.column_int(1), r.offset = s.column_int(2);
        r.bytes = s.column_int(3), r.begin_ns = s.column_int(4), r.end_ns = s.column_int(5);
        r.category = s.column_view(6), r.confidence = s.column_optional_double(7);
        r.rule = s.column_view(8), r.reason = s.column_view(9), r.evidence = s.column_view(10);
    }
};

template <>
struct Table<KernelEdgeRow> {
    static constexpr TableSpec spec{"kernel_allocations",
                                    "kernel_allocations",
                                    {"kernel", "param", "param_word", "allocation", "offset", "read_only"},
                                    nullptr,
                                    "kernel, param, param_word"};
    static void read(const Statement& s, KernelEdgeRow& r) {
        r.kernel = s.column_int(0), r.param = s.column_int(1), r.param_word = s.column_int(2);
        r.allocation = s.column_int(3), r.offset = s.column_int(4), r.read_only = s.column_int(5) != 0;
    }
};

template <>
struct Table<LibraryCallRow> {
    static constexpr TableSpec spec{
        "library_calls",
        "library_calls",
        {"id",           "process", "thread", "name",      "op",        "begin_ns",        "end_ns",
         "stream",       "m",       "n",      "k",         "batch",     "a_type",          "b_type",
         "c_type",       "compute_type",      "transa",    "transb",    "flops",           "a",
         "b",            "c",       "workspace",           "workspace_bytes",              "math_mode",
         "precision",    "a_bytes", "b_bytes",             "c_bytes"},
        "id",
        "begin_ns"};
    static void read(const Statement& s, LibraryCallRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.thread = s.column_optional_int(2);
        r.name = s.column_view(3), r.op = s.column_view(4), r.begin_ns = s.column_int(5), r.end_ns = s.column_int(6);
        OptionalInt* ints[] = {&r.stream, &r.m, &r.n, &r.k, &r.batch, &r.a_type, &r.b_type, &r.c_type,
                               &r.compute_type, &r.transa, &r.transb};
        int column = 7;
        for (OptionalInt* value : ints) *value = s.column_optional_int(column++);
        r.flops = s.column_optional_double(column++);
        for (OptionalInt* value : {&r.a, &r.b, &r.c, &r.workspace, &r.workspace_bytes, &r.math_mode})
            *value = s.column_optional_int(column++);
        r.precision = s.column_view(column++);
        for (OptionalInt* value : {&r.a_bytes, &r.b_bytes, &r.c_bytes}) *value = s.column_optional_int(column++);
    }
};

template <>
struct Table<RangeRow> {
    static constexpr TableSpec spec{
        "ranges", "ranges", {"id", "process", "thread", "begin_ns", "end_ns", "name", "domain"}, "id", "begin_ns"};
    static void read(const Statement& s, RangeRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.thread = s.column_optional_int(2);
        r.begin_ns = s.column_int(3), r.end_ns = s.column_optional_int(4);
        r.name = s.column_view(5), r.domain = s.column_view(6);
    }
};

template <>
struct Table<IterationRow> {
    static constexpr TableSpec spec{"iterations",
                                    "iterations",
                                    {"id", "process", "idx", "begin_ns", "end_ns", "source", "device_begin_ns",
                                     "device_end_ns", "kind"},
                                    "id",
                                    "begin_ns"};
    static void read(const Statement& s, IterationRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.index = s.column_int(2);
        r.begin_ns = s.column_int(3), r.end_ns = s.column_int(4), r.source = s.column_view(5);
        r.device_begin_ns = s.column_optional_int(6), r.device_end_ns = s.column_optional_int(7);
        r.training = s.column_view(8) != "non_training";  // NULL in older traces means training
    }
};

template <>
struct Table<PhaseRow> {
    static constexpr TableSpec spec{
        "phases", "phases", {"iteration", "kind", "begin_ns", "end_ns"}, nullptr, "begin_ns, iteration, kind"};
    static void read(const Statement& s, PhaseRow& r) {
        r.iteration = s.column_int(0), r.kind = s.column_view(1), r.begin_ns = s.column_int(2), r.end_ns = s.column_int(3);
    }
};

template <>
struct Table<DeviceRow> {
    static constexpr TableSpec spec{"devices",
                                    "devices",
                                    {"id", "name", "cc_major", "cc_minor", "sm_count", "memory_bytes", "clock_khz",
                                     "fp32_lanes_per_sm", "fp32_peak_flops", "simulated"},
                                    "id",
                                    "id"};
    static void read(const Statement& s, DeviceRow& r) {
        r.id = s.column_int(0), r.name = s.column_view(1), r.cc_major = s.column_int(2), r.cc_minor = s.column_int(3);
        r.sm_count = s.column_int(4), r.memory_bytes = s.column_int(5), r.clock_khz = s.column_int(6);
        r.fp32_lanes_per_sm = s.column_int(7), r.fp32_peak_flops = s.column_double(8), r.simulated = s.column_int(9) != 0;
    }
};

template <>
struct Table<ProcessRow> {
    static constexpr TableSpec spec{
        "processes",
        "processes",
        {"id", "pid", "parent_pid", "command_line", "executable", "start_ns", "end_ns", "truncated"},
        "id",
        "start_ns"};
    static void read(const Statement& s, ProcessRow& r) {
        r.id = s.column_int(0), r.pid = s.column_int(1), r.parent_pid = s.column_optional_int(2);
        r.command_line = s.column_view(3), r.executable = s.column_view(4), r.start_ns = s.column_int(5);
        r.end_ns = s.column_optional_int(6), r.truncated = s.column_int(7) != 0;
    }
};

template <>
struct Table<ThreadRow> {
    static constexpr TableSpec spec{
        "threads", "threads", {"id", "process", "tid", "name", "first_seen_ns"}, "id", "first_seen_ns"};
    static void read(const Statement& s, ThreadRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.tid = s.column_int(2), r.name = s.column_view(3);
        r.first_seen_ns = s.column_optional_int(4);
    }
};

template <>
struct Table<StreamRow> {
    static constexpr TableSpec spec{"streams", "streams", {"id", "process", "device", "handle"}, "id", "id"};
    static void read(const Statement& s, StreamRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.device = s.column_optional_int(2), r.handle = s.column_int(3);
    }
};

template <>
struct Table<ApiCallRow> {
    static constexpr TableSpec spec{
        "api_calls", "api_calls", {"id", "process", "thread", "kind", "begin_ns", "end_ns", "handle"}, "id", "begin_ns"};
    static void read(const Statement& s, ApiCallRow& r) {
        r.id = s.column_int(0), r.process = s.column_int(1), r.thread = s.column_optional_int(2);
        r.kind = s.column_view(3), r.begin_ns = s.column_int(4), r.end_ns = s.column_int(5);
        r.handle = s.column_optional_int(6);
    }
};

template <>
struct Table<CpuSampleRow> {
    static constexpr TableSpec spec{
        "cpu_samples", "cpu_samples", {"process", "ts_ns", "user_ns", "system_ns"}, nullptr, "process, ts_ns"};
    static void read(const Statement& s, CpuSampleRow& r) {
        r.process = s.column_int(0), r.ts_ns = s.column_int(1), r.user_ns = s.column_int(2), r.system_ns = s.column_int(3);
    }
};

template <>
struct Table<CaptureWindowRow> {
    static constexpr TableSpec spec{
        "capture_windows", "capture_windows", {"process", "begin_ns", "end_ns", "reason"}, nullptr, "begin_ns, process"};
    static void read(const Statement& s, CaptureWindowRow& r) {
        r.process = s.column_int(0), r.begin_ns = s.column_int(1), r.end_ns = s.column_int(2), r.reason = s.column_view(3);
    }
};

template <>
struct Table<KernelMetricRow> {
    static constexpr TableSpec spec{"kernel_metrics",
                                    "kernel_metrics AS m JOIN strings AS c ON c.id = m.metric",
                                    {"m.kernel", "c.text", "m.value"},
                                    nullptr,
                                    "m.kernel, m.metric"};
    static void read(const Statement& s, KernelMetricRow& r) {
        r.kernel = s.column_int(0), r.metric = s.column_view(1), r.value = s.column_optional_double(2);
    }
};

}  // namespace

const char* copy_kind_name(CopyKind kind) {
    switch (kind) {
        case CopyKind::htod: return "htod";
        case CopyKind::dtoh: return "dtoh";
        case CopyKind::dtod: return "dtod";
        case CopyKind::htoh: return "htoh";
        case CopyKind::other: break;
    }
    return "default";
}

MemoryKind memory_kind_from_text(std::string_view text) {
    if (text == "device") return MemoryKind::device;
    if (text == "device_async") return MemoryKind::device_async;
    if (text == "pinned_host") return MemoryKind::pinned_host;
    if (text == "managed") return MemoryKind::managed;
    return MemoryKind::unknown;
}

const char* memory_kind_name(MemoryKind kind) {
    switch (kind) {
        case MemoryKind::device: return "device";
        case MemoryKind::device_async: return "device_async";
        case MemoryKind::pinned_host: return "pinned_host";
        case MemoryKind::managed: return "managed";
        case MemoryKind::unknown: break;
    }
    return "unknown";
}

template <class Row>
RowReader<Row>::RowReader(const Database& db, const ReadOptions& options)
    : statement_(db, select_sql(db, Table<Row>::spec, options)) {
    if (Table<Row>::spec.id_column && has_table(db, Table<Row>::spec.table))
        statement_.bind(1, options.first_id).bind(2, options.last_id);
}

template <class Row>
bool RowReader<Row>::next(Row& row) {
    if (!statement_.step()) return false;
    Table<Row>::read(statement_, row);
    return true;
}

template class RowReader<KernelRow>;
template class RowReader<CopyRow>;
template class RowReader<SetRow>;
template class RowReader<AllocationRow>;
template class RowReader<SubrangeRow>;
template class RowReader<KernelEdgeRow>;
template class RowReader<LibraryCallRow>;
template class RowReader<RangeRow>;
template class RowReader<IterationRow>;
template class RowReader<PhaseRow>;
template class RowReader<DeviceRow>;
template class RowReader<ProcessRow>;
template class RowReader<ThreadRow>;
template class RowReader<StreamRow>;
template class RowReader<ApiCallRow>;
template class RowReader<CpuSampleRow>;
template class RowReader<CaptureWindowRow>;
template class RowReader<KernelMetricRow>;

bool has_table(const Database& db, std::string_view table) {
    Statement query(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
    query.bind(1, table);
    return query.step();
}

bool has_column(const Database& db, std::string_view table, std::string_view column) {
    Statement query(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
    query.bind(1, table).bind(2, column);
    return query.step();
}

RunRow read_run(const Database& db) {
    Statement query(db,
                    "SELECT command_line, tool_version, clock_source, duration_ns, host_timed_kernels, truncated_files, "
                    "simulated_device, exit_status, crash_signal FROM run LIMIT 1");
    if (!query.step()) throw SqliteError("not a complete tbdprof trace: the run row is missing");
    RunRow run;
    run.command_line = query.column_text(0), run.tool_version = query.column_text(1);
    run.clock_source = query.column_text(2), run.duration_ns = query.column_int(3);
    run.host_timed_kernels = query.column_int(4), run.truncated_files = query.column_int(5);
    run.simulated_device = query.column_int(6) != 0;
    run.exit_status = query.column_optional_int(7), run.crash_signal = query.column_optional_int(8);
    return run;
}

std::optional<std::string> read_note(const Database& db, std::string_view key) {
    Statement query(db, "SELECT value FROM run_notes WHERE key = ?1 LIMIT 1");
    query.bind(1, key);
    if (!query.step()) return std::nullopt;
    return query.column_text(0);
}

std::vector<std::pair<std::string, std::string>> read_notes_with_prefix(const Database& db, std::string_view prefix) {
    // substr rather than LIKE: a prefix may hold '_' or '%', which LIKE would take as wildcards.
    Statement query(db, "SELECT key, value FROM run_notes WHERE substr(key, 1, length(?1)) = ?1 ORDER BY rowid");
    query.bind(1, prefix);
    std::vector<std::pair<std::string, std::string>> notes;
    while (query.step()) notes.emplace_back(query.column_text(0), query.column_text(1));
    return notes;
}

int64_t dropped_event_count(const Database& db) {
    if (!has_table(db, "dropped_events")) return 0;
    Statement query(db, "SELECT total(count) FROM dropped_events");
    return query.step() ? static_cast<int64_t>(query.column_double(0)) : 0;
}

std::unordered_map<int64_t, std::string> read_function_names(const Database& db, bool mangled) {
    Statement query(db, mangled ? "SELECT f.id, s.text FROM functions AS f JOIN strings AS s ON s.id = f.mangled"
                                : "SELECT f.id, s.text FROM functions AS f JOIN strings AS s ON s.id = f.name");
    std::unordered_map<int64_t, std::string> names;
    while (query.step()) names.emplace(query.column_int(0), query.column_text(1));
    return names;
}

std::vector<StackFrame> read_stack(const Database& db, int64_t stack, int limit) {
    Statement query(db,
                    "SELECT s.text, m.text, f.ip, f.offset FROM stack_frames AS sf JOIN frames AS f ON f.id = sf.frame "
                    "LEFT JOIN strings AS s ON s.id = f.symbol LEFT JOIN strings AS m ON m.id = f.module "
                    "WHERE sf.stack = ?1 ORDER BY sf.position LIMIT ?2");
    query.bind(1, stack).bind(2, limit);
    std::vector<StackFrame> frames;
    while (query.step()) {
        frames.push_back({query.column_text(0), query.column_text(1), query.column_int(2), query.column_optional_int(3)});
    }
    return frames;
}

}  // namespace tbdprof::trace
