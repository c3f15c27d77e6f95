#include "tbdprof/trace/tables.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <variant>

namespace tbdprof::trace {
namespace {

// One column of a table and the field it fills. A column the file lacks (an older trace) is
// selected as NULL, which every field type reads as absent, zero or empty.
template <class Row>
struct Column {
    const char* name;  // "column", or "alias.column" where the table joins another
    std::variant<int64_t Row::*, OptionalInt Row::*, std::optional<double> Row::*, double Row::*, bool Row::*,
                 std::string_view Row::*, MemoryKind Row::*, CopyKind Row::*>
        field;
    // A column of strings ids that holds the text instead, where the file has it (the tags' reasons,
    // stored once): the text is the column's own, else the string's.
    const char* strings_column = nullptr;
};

// How one row type is read: the table whose presence decides whether anything is read, the FROM
// clause, the id column (nullptr: no id range, always ordered by `time_order`), the time order.
template <class Row>
struct Table {
    const char* table;
    const char* from;
    const char* id_column;
    const char* time_order;
    std::vector<Column<Row>> columns;
    // The FROM clause without the joined tag table (ReadOptions::tags false; nullptr: none joined),
    // whose columns ("c.") are then selected as NULL.
    const char* from_without_tags = nullptr;
};

template <class Row>
const Table<Row>& table_of();

#define TBD_TABLE(ROW, ...)                         \
    template <>                                     \
    const Table<ROW>& table_of<ROW>() {             \
        using R = ROW;                              \
        static const Table<ROW> table{__VA_ARGS__}; \
        return table;                               \
    }

// One line per few columns: a table reads better than clang-format's one column per line.
// clang-format off
TBD_TABLE(KernelRow, "kernels", "kernels", "id", "start_ns",
          {{"id", &R::id}, {"process", &R::process}, {"thread", &R::thread}, {"device", &R::device},
           {"stream", &R::stream}, {"function", &R::function}, {"start_ns", &R::start_ns},
           {"duration_ns", &R::duration_ns}, {"queued_ns", &R::queued_ns}, {"grid", &R::grid}, {"block", &R::block},
           {"shared_bytes", &R::shared_bytes}, {"correlation", &R::correlation}, {"library_call", &R::library_call},
           {"graph_launch", &R::graph_launch}})
TBD_TABLE(CopyRow, "copies", "copies", "id", "start_ns",
          {{"id", &R::id}, {"process", &R::process}, {"thread", &R::thread}, {"device", &R::device},
           {"stream", &R::stream}, {"kind", &R::kind}, {"bytes", &R::bytes}, {"src", &R::src}, {"dst", &R::dst},
           {"start_ns", &R::start_ns}, {"duration_ns", &R::duration_ns}, {"queued_ns", &R::queued_ns},
           {"async", &R::async}, {"correlation", &R::correlation}, {"src_allocation", &R::src_allocation},
           {"dst_allocation", &R::dst_allocation}})
TBD_TABLE(SetRow, "sets", "sets", "id", "start_ns",
          {{"id", &R::id}, {"process", &R::process}, {"thread", &R::thread}, {"device", &R::device},
           {"stream", &R::stream}, {"value", &R::value}, {"bytes", &R::bytes}, {"dst", &R::dst},
           {"start_ns", &R::start_ns}, {"duration_ns", &R::duration_ns}, {"queued_ns", &R::queued_ns},
           {"async", &R::async}, {"correlation", &R::correlation}, {"dst_allocation", &R::dst_allocation}})
TBD_TABLE(AllocationRow, "allocations",
          "allocations AS a LEFT JOIN allocation_categories AS c ON c.allocation = a.id", "a.id", "a.alloc_ns",
          {{"a.id", &R::id}, {"a.process", &R::process}, {"a.thread", &R::thread}, {"a.device", &R::device},
           {"a.address", &R::address}, {"a.bytes", &R::bytes}, {"a.alloc_ns", &R::alloc_ns},
           {"a.free_ns", &R::free_ns}, {"a.kind", &R::kind}, {"a.stream", &R::stream}, {"a.stack", &R::stack},
           {"a.free_thread", &R::free_thread}, {"c.category", &R::category}, {"c.confidence", &R::confidence},
           {"c.rule", &R::rule}, {"c.reason", &R::reason, "c.reason_string"},
           {"c.evidence", &R::evidence, "c.evidence_string"}},
          "allocations AS a")
TBD_TABLE(SubrangeRow, "allocation_subranges", "allocation_subranges", "id", "begin_ns",
          {{"id", &R::id}, {"allocation", &R::allocation}, {"offset", &R::offset}, {"bytes", &R::bytes},
           {"begin_ns", &R::begin_ns}, {"end_ns", &R::end_ns}, {"category", &R::category},
           {"confidence", &R::confidence}, {"rule", &R::rule}, {"reason", &R::reason, "reason_string"},
           {"evidence", &R::evidence, "evidence_string"}})
TBD_TABLE(KernelEdgeRow, "kernel_allocations", "kernel_allocations", nullptr, "kernel, param, param_word",
          {{"kernel", &R::kernel}, {"param", &R::param}, {"param_word", &R::param_word},
           {"allocation", &R::allocation}, {"offset", &R::offset}, {"read_only", &R::read_only}})
TBD_TABLE(LibraryCallRow, "library_calls", "library_calls", "id", "begin_ns",
          {{"id", &R::id}, {"process", &R::process}, {"thread", &R::thread}, {"name", &R::name}, {"op", &R::op},
           {"begin_ns", &R::begin_ns}, {"end_ns", &R::end_ns}, {"stream", &R::stream}, {"m", &R::m}, {"n", &R::n},
           {"k", &R::k}, {"batch", &R::batch}, {"a_type", &R::a_type}, {"b_type", &R::b_type},
           {"c_type", &R::c_type}, {"compute_type", &R::compute_type}, {"transa", &R::transa},
           {"transb", &R::transb}, {"flops", &R::flops}, {"a", &R::a}, {"b", &R::b}, {"c", &R::c},
           {"workspace", &R::workspace}, {"workspace_bytes", &R::workspace_bytes}, {"math_mode", &R::math_mode},
           {"precision", &R::precision}, {"a_bytes", &R::a_bytes}, {"b_bytes", &R::b_bytes},
           {"c_bytes", &R::c_bytes}, {"a_allocation", &R::a_allocation}, {"b_allocation", &R::b_allocation},
           {"c_allocation", &R::c_allocation}, {"workspace_allocation", &R::workspace_allocation}})
TBD_TABLE(LibraryOperandRow, "library_call_operands", "library_call_operands", nullptr, "library_call",
          {{"library_call", &R::library_call}, {"process", &R::process}, {"role", &R::role}, {"access", &R::access},
           {"address", &R::address}, {"bytes", &R::bytes}, {"allocation", &R::allocation}})
TBD_TABLE(RangeRow, "ranges", "ranges", "id", "begin_ns",
          {{"id", &R::id}, {"process", &R::process}, {"thread", &R::thread}, {"begin_ns", &R::begin_ns},
           {"end_ns", &R::end_ns}, {"name", &R::name}, {"domain", &R::domain}})
TBD_TABLE(MemoryHeapRow, "memory_heaps", "memory_heaps", "id", "register_ns",
          {{"id", &R::id}, {"process", &R::process}, {"thread", &R::thread}, {"handle", &R::handle},
           {"address", &R::address}, {"bytes", &R::bytes}, {"allocation", &R::allocation}, {"device", &R::device},
           {"usage", &R::usage}, {"name", &R::name}, {"domain", &R::domain}, {"register_ns", &R::register_ns},
           {"unregister_ns", &R::unregister_ns}})
TBD_TABLE(MemoryRegionRow, "memory_regions", "memory_regions", "id", "register_ns",
          {{"id", &R::id}, {"process", &R::process}, {"heap", &R::heap}, {"address", &R::address},
           {"bytes", &R::bytes}, {"allocation", &R::allocation}, {"device", &R::device}, {"name", &R::name},
           {"register_ns", &R::register_ns}, {"unregister_ns", &R::unregister_ns}, {"end_reason", &R::end_reason}})
TBD_TABLE(IterationRow, "iterations", "iterations", "id", "begin_ns",
          {{"id", &R::id}, {"process", &R::process}, {"idx", &R::index}, {"begin_ns", &R::begin_ns},
           {"end_ns", &R::end_ns}, {"source", &R::source}, {"device_begin_ns", &R::device_begin_ns},
           {"device_end_ns", &R::device_end_ns}, {"kind", &R::kind}})
TBD_TABLE(PhaseRow, "phases", "phases", nullptr, "begin_ns, iteration, kind",
          {{"iteration", &R::iteration},
           {"kind", &R::kind},
           {"begin_ns", &R::begin_ns},
           {"end_ns", &R::end_ns},
           {"device_begin_ns", &R::device_begin_ns},
           {"device_end_ns", &R::device_end_ns}})
TBD_TABLE(DeviceRow, "devices", "devices", "id", "id",
          {{"id", &R::id}, {"name", &R::name}, {"cc_major", &R::cc_major}, {"cc_minor", &R::cc_minor},
           {"sm_count", &R::sm_count}, {"memory_bytes", &R::memory_bytes}, {"clock_khz", &R::clock_khz},
           {"fp32_lanes_per_sm", &R::fp32_lanes_per_sm}, {"fp32_peak_flops", &R::fp32_peak_flops},
           {"simulated", &R::simulated}})
TBD_TABLE(ProcessRow, "processes", "processes", "id", "start_ns",
          {{"id", &R::id}, {"pid", &R::pid}, {"parent_pid", &R::parent_pid}, {"command_line", &R::command_line},
           {"executable", &R::executable}, {"start_ns", &R::start_ns}, {"end_ns", &R::end_ns},
           {"truncated", &R::truncated}})
TBD_TABLE(ThreadRow, "threads", "threads", "id", "first_seen_ns",
          {{"id", &R::id}, {"process", &R::process}, {"tid", &R::tid}, {"name", &R::name},
           {"first_seen_ns", &R::first_seen_ns}})
TBD_TABLE(StreamRow, "streams", "streams", "id", "id",
          {{"id", &R::id}, {"process", &R::process}, {"device", &R::device}, {"handle", &R::handle}})
TBD_TABLE(ApiCallRow, "api_calls", "api_calls", "id", "begin_ns",
          {{"id", &R::id}, {"process", &R::process}, {"thread", &R::thread}, {"kind", &R::kind},
           {"begin_ns", &R::begin_ns}, {"end_ns", &R::end_ns}, {"handle", &R::handle}})
TBD_TABLE(CpuSampleRow, "cpu_samples", "cpu_samples", nullptr, "process, ts_ns",
          {{"process", &R::process}, {"ts_ns", &R::ts_ns}, {"user_ns", &R::user_ns}, {"system_ns", &R::system_ns}})
TBD_TABLE(CaptureWindowRow, "capture_windows", "capture_windows", nullptr, "begin_ns, process",
          {{"process", &R::process}, {"begin_ns", &R::begin_ns}, {"end_ns", &R::end_ns}, {"reason", &R::reason}})
TBD_TABLE(KernelMetricRow, "kernel_metrics", "kernel_metrics AS m JOIN strings AS c ON c.id = m.metric", nullptr,
          "m.kernel, m.metric", {{"m.kernel", &R::kernel}, {"c.text", &R::metric}, {"m.value", &R::value}})
// clang-format on
#undef TBD_TABLE

// The table a column comes from: "c." names the joined categories (or, for metrics, strings).
std::string_view source_table(const char* table, std::string_view column, std::string_view* name) {
    const size_t dot = column.find('.');
    *name = dot == std::string_view::npos ? column : column.substr(dot + 1);
    if (dot == std::string_view::npos || column.substr(0, dot) != "c") return table;
    return std::string_view(table) == "allocations" ? "allocation_categories" : "strings";
}

// The columns of the tables one SELECT reads, each table's asked once: a reader's SELECT names every
// column it fills, and one PRAGMA query per column was a tenth of the CPU of a report on an import.
class SchemaColumns {
public:
    explicit SchemaColumns(const Database& db) : db_(db) {}
    bool has(std::string_view table, std::string_view column) {
        auto it = tables_.find(table);
        if (it == tables_.end()) {
            std::set<std::string, std::less<>> names;
            Statement query(db_, "SELECT name FROM pragma_table_info(?1)");
            query.bind(1, table);
            while (query.step()) names.insert(query.column_text(0));
            it = tables_.emplace(std::string(table), std::move(names)).first;
        }
        return it->second.find(column) != it->second.end();
    }

private:
    const Database& db_;
    std::map<std::string, std::set<std::string, std::less<>>, std::less<>> tables_;
};

// A column as selected: itself, or its text or the text of its strings id (Column::strings_column);
// NULL for such a text column when the reader asked for no tag texts.
template <class Row>
std::string column_sql(SchemaColumns& schema, std::string_view table, const Column<Row>& column,
                       const ReadOptions& options) {
    if (!column.strings_column) return column.name;
    if (!options.tag_texts) return "NULL";
    std::string_view strings_name = column.strings_column;  // in the same table as the column
    if (const size_t dot = strings_name.find('.'); dot != std::string_view::npos) strings_name.remove_prefix(dot + 1);
    if (!schema.has(table, strings_name)) return column.name;
    return std::string("coalesce(") + column.name + ", (SELECT s_.text FROM strings AS s_ WHERE s_.id = " +
           column.strings_column + "))";
}

template <class Row>
std::string select_sql(const Database& db, const Table<Row>& spec, const ReadOptions& options) {
    SchemaColumns schema(db);
    const bool tags_joined = options.tags || !spec.from_without_tags;
    std::string sql = "SELECT ";
    for (size_t i = 0; i < spec.columns.size(); ++i) {
        std::string_view name;
        const std::string_view table = source_table(spec.table, spec.columns[i].name, &name);
        const bool tag_column = std::string_view(spec.columns[i].name).starts_with("c.");
        sql += i ? ", " : "";
        sql += schema.has(table, name) && (tags_joined || !tag_column)
                   ? column_sql(schema, table, spec.columns[i], options)
                   : "NULL";
    }
    if (!has_table(db, spec.table)) return sql + " WHERE 0";
    sql += std::string(" FROM ") + (tags_joined ? spec.from : spec.from_without_tags);
    if (!spec.id_column) return sql + " ORDER BY " + spec.time_order;
    sql += std::string(" WHERE ") + spec.id_column + " BETWEEN ?1 AND ?2 ORDER BY ";
    return sql + (options.by_time ? std::string(spec.time_order) + ", " + spec.id_column : spec.id_column);
}

template <class Row>
void read_row(const Statement& s, const Table<Row>& spec, Row& row) {
    for (size_t i = 0; i < spec.columns.size(); ++i) {
        const int c = static_cast<int>(i);
        std::visit(
            [&](auto member) {
                auto& field = row.*member;
                using Field = std::remove_reference_t<decltype(field)>;
                if constexpr (std::is_same_v<Field, int64_t>)
                    field = s.column_int(c);
                else if constexpr (std::is_same_v<Field, OptionalInt>)
                    field = s.column_optional_int(c);
                else if constexpr (std::is_same_v<Field, std::optional<double>>)
                    field = s.column_optional_double(c);
                else if constexpr (std::is_same_v<Field, double>)
                    field = s.column_double(c);
                else if constexpr (std::is_same_v<Field, bool>)
                    field = s.column_int(c) != 0;
                else if constexpr (std::is_same_v<Field, std::string_view>)
                    field = s.column_view(c);
                else if constexpr (std::is_same_v<Field, MemoryKind>)
                    field = memory_kind_from_text(s.column_view(c));
                else
                    field = copy_kind_from_text(s.column_view(c));
            },
            spec.columns[i].field);
    }
}

}  // namespace

template <class Row>
RowReader<Row>::RowReader(const Database& db, const ReadOptions& options)
    : statement_(db, select_sql(db, table_of<Row>(), options)) {
    if (table_of<Row>().id_column && has_table(db, table_of<Row>().table))
        statement_.bind(1, options.first_id).bind(2, options.last_id);
}

template <class Row>
bool RowReader<Row>::next(Row& row) {
    if (!statement_.step()) return false;
    read_row(statement_, table_of<Row>(), row);
    return true;
}

template class RowReader<KernelRow>;
template class RowReader<CopyRow>;
template class RowReader<SetRow>;
template class RowReader<AllocationRow>;
template class RowReader<SubrangeRow>;
template class RowReader<KernelEdgeRow>;
template class RowReader<LibraryCallRow>;
template class RowReader<LibraryOperandRow>;
template class RowReader<RangeRow>;
template class RowReader<MemoryHeapRow>;
template class RowReader<MemoryRegionRow>;
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
    Statement query(
        db,
        "SELECT command_line, tool_version, clock_source, duration_ns, host_timed_kernels, truncated_files, "
        "simulated_device, exit_status, crash_signal, start_monotonic_ns FROM run LIMIT 1");
    if (!query.step()) throw SqliteError("not a complete tbdprof trace: the run row is missing");
    RunRow run;
    run.command_line = query.column_text(0), run.tool_version = query.column_text(1);
    run.clock_source = query.column_text(2), run.duration_ns = query.column_int(3);
    run.host_timed_kernels = query.column_int(4), run.truncated_files = query.column_int(5);
    run.simulated_device = query.column_int(6) != 0;
    run.exit_status = query.column_optional_int(7), run.crash_signal = query.column_optional_int(8);
    run.start_monotonic_ns = query.column_int(9);
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

std::string StackFrame::text() const {
    std::string out = symbol;
    if (out.empty()) out = fmt::format("{:#x}", ip);
    if (!module.empty()) out += " (" + module.substr(module.rfind('/') + 1) + ")";
    return out;
}

std::vector<StackFrame> read_stack(const Database& db, int64_t stack, int limit) {
    Statement query(db,
                    "SELECT s.text, m.text, f.ip, f.offset FROM stack_frames AS sf JOIN frames AS f ON f.id = sf.frame "
                    "LEFT JOIN strings AS s ON s.id = f.symbol LEFT JOIN strings AS m ON m.id = f.module "
                    "WHERE sf.stack = ?1 ORDER BY sf.position LIMIT ?2");
    query.bind(1, stack).bind(2, limit);
    std::vector<StackFrame> frames;
    while (query.step()) {
        frames.push_back(
            {query.column_text(0), query.column_text(1), query.column_int(2), query.column_optional_int(3)});
    }
    return frames;
}

}  // namespace tbdprof::trace
