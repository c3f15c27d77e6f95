// Renumbering and copying an input's rows into the merged trace. Ids are only unique within one
// trace, so every id gets a new value from a map (input, old id) -> new id kept in temporary tables;
// the references between tables go through the same maps. Tables whose id order is a time order
// (kernels by start, allocations by allocation time, ... docs/trace-format.md) are numbered over all
// inputs in the merged time order, so the merged file keeps that promise.
#include "merge_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::trace::merge {

namespace {

enum class Kind { id, ref, time };

struct Column {
    const char* name;
    Kind kind;
    const char* target = nullptr;  // the table a ref points into
};

struct TableRule {
    const char* name;
    const char* order_time;       // the time its id order follows; nullptr: input order
    std::vector<Column> columns;  // the rest is copied as it is (handles, sizes, text, durations)
};

// The columns most tables share, and the two kinds that need a name.
const Column kId{"id", Kind::id};
const Column kProcess{"process", Kind::ref, "processes"};
const Column kThread{"thread", Kind::ref, "threads"};
const Column kDevice{"device", Kind::ref, "devices"};
const Column kStream{"stream", Kind::ref, "streams"};
const Column kAllocation{"allocation", Kind::ref, "allocations"};
const Column kBeginNs{"begin_ns", Kind::time};
const Column kEndNs{"end_ns", Kind::time};

Column ref(const char* name, const char* target) {
    return {name, Kind::ref, target};
}
Column time_ns(const char* name) {
    return {name, Kind::time};
}

// Every table of schemas/trace.sql but run, run_notes, strings and functions (handled apart).
// Columns a trace of an older version lacks are simply not copied (they stay NULL).
const std::vector<TableRule> kTableRules = {
    {"processes", "start_ns", {kId, time_ns("start_ns"), kEndNs}},
    {"threads", nullptr, {kId, kProcess, time_ns("first_seen_ns")}},
    {"devices", nullptr, {kId}},
    {"streams", nullptr, {kId, kProcess, kDevice}},
    {"kernels",
     "start_ns",
     {kId, kProcess, kThread, kDevice, kStream, ref("function", "functions"), time_ns("start_ns"),
      ref("library_call", "library_calls"), ref("graph_launch", "graph_launches")}},
    {"graph_launches", "launch_ns", {kId, kProcess, kThread, kStream, time_ns("launch_ns")}},
    {"copies",
     "start_ns",
     {kId, kProcess, kThread, kDevice, kStream, time_ns("start_ns"), ref("src_allocation", "allocations"),
      ref("dst_allocation", "allocations")}},
    {"sets",
     "start_ns",
     {kId, kProcess, kThread, kDevice, kStream, time_ns("start_ns"), ref("dst_allocation", "allocations")}},
    {"api_calls", "begin_ns", {kId, kProcess, kThread, kBeginNs, kEndNs}},
    {"stacks", nullptr, {kId, kProcess}},
    {"frames", nullptr, {kId, kProcess, ref("symbol", "strings"), ref("module", "strings")}},
    {"stack_frames", nullptr, {ref("stack", "stacks"), ref("frame", "frames")}},
    {"allocations",
     "alloc_ns",
     {kId, kProcess, kThread, kDevice, time_ns("alloc_ns"), time_ns("free_ns"), ref("stack", "stacks"),
      ref("free_thread", "threads")}},
    {"allocation_categories",
     nullptr,
     {kAllocation, ref("reason_string", "strings"), ref("evidence_string", "strings")}},
    {"allocation_subranges",
     nullptr,
     {kId, kAllocation, kBeginNs, kEndNs, ref("reason_string", "strings"), ref("evidence_string", "strings")}},
    {"iterations", "begin_ns", {kId, kProcess, kBeginNs, kEndNs, time_ns("device_begin_ns"), time_ns("device_end_ns")}},
    {"phases",
     nullptr,
     {ref("iteration", "iterations"), kBeginNs, kEndNs, time_ns("device_begin_ns"), time_ns("device_end_ns")}},
    {"kernel_allocations", nullptr, {ref("kernel", "kernels"), kAllocation}},
    {"library_calls",
     "begin_ns",
     {kId, kProcess, kThread, kBeginNs, kEndNs, ref("a_allocation", "allocations"), ref("b_allocation", "allocations"),
      ref("c_allocation", "allocations"), ref("workspace_allocation", "allocations")}},
    {"ranges", "begin_ns", {kId, kProcess, kThread, kBeginNs, kEndNs}},
    {"cpu_samples", nullptr, {kProcess, time_ns("ts_ns")}},
    {"dropped_events", nullptr, {kProcess}},
    {"capture_windows", nullptr, {kProcess, kBeginNs, kEndNs}},
    {"kernel_metrics", nullptr, {ref("kernel", "kernels"), ref("metric", "strings")}},
    {"memory_heaps",
     "register_ns",
     {kId, kProcess, kThread, kAllocation, kDevice, time_ns("register_ns"), time_ns("unregister_ns")}},
    {"memory_regions",
     "register_ns",
     {kId, kProcess, ref("heap", "memory_heaps"), kAllocation, kDevice, time_ns("register_ns"),
      time_ns("unregister_ns")}},
    {"process_ranks", nullptr, {kProcess}},
    {"library_call_operands", nullptr, {ref("library_call", "library_calls"), kProcess, kAllocation}},
    {"nccl_calls", nullptr, {ref("library_call", "library_calls"), kProcess}},
};

std::vector<std::string> columns_of(const Database& db, const char* schema, std::string_view table) {
    Statement rows(db, "SELECT name FROM pragma_table_info(?1, ?2) ORDER BY cid");
    rows.bind(1, table).bind(2, schema);
    std::vector<std::string> names;
    while (rows.step()) names.push_back(rows.column_text(0));
    return names;
}

bool input_has(const Database& db, std::string_view table, std::string_view column = {}) {
    return std::ranges::any_of(columns_of(db, kInputSchema, table),
                               [&](const std::string& name) { return column.empty() || name == column; });
}

bool has_id(const TableRule& rule) {
    return std::ranges::any_of(rule.columns, [](const Column& c) { return c.kind == Kind::id; });
}

std::string map_lookup(std::string_view table, int input, std::string_view value) {
    return fmt::format("(SELECT new FROM temp.map_{} WHERE input = {} AND old = {})", table, input, value);
}

void collect_table_ids(Database& out, const TableRule& rule, int input, int64_t shift_ns) {
    if (!input_has(out, rule.name)) return;
    const bool timed = rule.order_time != nullptr && input_has(out, rule.name, rule.order_time);
    std::string ids =
        fmt::format("SELECT id, {} AS t FROM {}.{}", timed ? fmt::format("{} + {}", rule.order_time, shift_ns) : "NULL",
                    kInputSchema, rule.name);
    // Device ids are CUDA ordinals: a device that rows name but the devices table lacks still needs one
    // (new device ids start at 0, as ordinals do), so every column that refers to a device adds its ids.
    if (std::string_view(rule.name) == "devices")
        for (const TableRule& other : kTableRules)
            for (const Column& c : other.columns)
                if (c.kind == Kind::ref && std::string_view(c.target) == "devices" &&
                    input_has(out, other.name, c.name))
                    ids += fmt::format(" UNION SELECT {0}, NULL FROM {1}.{2} WHERE {0} IS NOT NULL", c.name,
                                       kInputSchema, other.name);
    out.exec(
        fmt::format("INSERT INTO temp.order_{0}(input, old, t) SELECT {1}, id, t FROM ({2})", rule.name, input, ids)
            .c_str());
}

}  // namespace

void create_id_tables(Database& out) {
    // (input, old id) -> new id, one table per id space.
    const auto create_map = [&out](std::string_view table) {
        out.exec(fmt::format("CREATE TEMP TABLE map_{}(input INTEGER, old INTEGER, new INTEGER, "
                             "PRIMARY KEY (input, old)) WITHOUT ROWID;",
                             table)
                     .c_str());
    };
    std::set<std::string> known = {"run", "run_notes", "strings", "functions"};
    for (const TableRule& rule : kTableRules) {
        known.insert(rule.name);
        if (!has_id(rule)) continue;
        out.exec(fmt::format("CREATE TEMP TABLE order_{}(input INTEGER, old INTEGER, t INTEGER);", rule.name).c_str());
        create_map(rule.name);
    }
    // A table added to the schema later must get a rule here, or its rows would be lost silently.
    Statement tables(out, "SELECT name FROM main.sqlite_schema WHERE type = 'table'");
    while (tables.step())
        if (!known.contains(tables.column_text(0)))
            throw std::logic_error("tbdprof merge has no rule for the trace table " + tables.column_text(0));
    out.exec(
        "CREATE TEMP TABLE all_strings(input INTEGER, old INTEGER, text TEXT); "
        "CREATE TEMP TABLE all_functions(input INTEGER, old INTEGER, name INTEGER, mangled INTEGER);");
    create_map("strings");
    create_map("functions");
}

void collect_ids(Database& out, int input, int64_t shift_ns) {
    for (const TableRule& rule : kTableRules)
        if (has_id(rule)) collect_table_ids(out, rule, input, shift_ns);
    out.exec(fmt::format("INSERT INTO temp.all_strings SELECT {0}, id, text FROM {1}.strings; "
                         "INSERT INTO temp.all_functions SELECT {0}, id, name, mangled FROM {1}.functions;",
                         input, kInputSchema)
                 .c_str());
}

namespace {

void assign_strings_and_functions(Database& out) {
    // Equal texts once, and equal functions (same name and mangled name) once: a kernel every host ran
    // is one function of the merged trace, as in a trace recorded from all ranks on one host.
    out.exec(
        "CREATE TEMP TABLE string_ids(text TEXT PRIMARY KEY, new INTEGER); "
        "INSERT INTO temp.string_ids SELECT text, row_number() OVER (ORDER BY min(input), min(old), text) "
        "  FROM temp.all_strings GROUP BY text; "
        "INSERT INTO temp.map_strings SELECT a.input, a.old, s.new FROM temp.all_strings a "
        "  JOIN temp.string_ids s ON s.text = a.text; "
        "INSERT INTO main.strings(id, text) SELECT new, text FROM temp.string_ids ORDER BY new; "
        "CREATE TEMP TABLE function_rows AS SELECT f.input AS input, f.old AS old, "
        "  (SELECT new FROM temp.map_strings m WHERE m.input = f.input AND m.old = f.name) AS name, "
        "  (SELECT new FROM temp.map_strings m WHERE m.input = f.input AND m.old = f.mangled) AS mangled "
        "  FROM temp.all_functions f; "
        "CREATE TEMP TABLE function_ids(name INTEGER, mangled INTEGER, new INTEGER, PRIMARY KEY (name, mangled)); "
        "INSERT INTO temp.function_ids SELECT name, mangled, row_number() OVER (ORDER BY min(input), min(old)) "
        "  FROM temp.function_rows GROUP BY name, mangled; "
        "INSERT INTO temp.map_functions SELECT r.input, r.old, i.new FROM temp.function_rows r "
        "  JOIN temp.function_ids i ON i.name IS r.name AND i.mangled IS r.mangled; "
        "INSERT INTO main.functions(id, name, mangled) SELECT new, name, mangled FROM temp.function_ids "
        "  ORDER BY new;");
}

std::string column_value(const TableRule& rule, const std::string& column, int input, int64_t shift_ns) {
    for (const Column& c : rule.columns) {
        if (column != c.name) continue;
        switch (c.kind) {
            case Kind::id:
                return map_lookup(rule.name, input, "s." + column);
            case Kind::ref:
                return map_lookup(c.target, input, "s." + column);
            case Kind::time:
                return fmt::format("s.{} + {}", column, shift_ns);
        }
    }
    return "s." + column;
}

}  // namespace

void assign_ids(Database& out) {
    for (const TableRule& rule : kTableRules) {
        if (!has_id(rule)) continue;
        const int first_id = std::string_view(rule.name) == "devices" ? 0 : 1;  // ordinals from 0
        out.exec(fmt::format("INSERT INTO temp.map_{0}(input, old, new) SELECT input, old, "
                             "{1} + row_number() OVER (ORDER BY t, input, old) FROM temp.order_{0}; "
                             "DROP TABLE temp.order_{0};",
                             rule.name, first_id - 1)
                     .c_str());
    }
    assign_strings_and_functions(out);
}

void copy_rows(Database& out, int input, int64_t shift_ns) {
    for (const TableRule& rule : kTableRules) {
        const std::vector<std::string> present = columns_of(out, kInputSchema, rule.name);
        if (present.empty()) continue;  // an older trace without the table
        std::string names, values;
        for (const std::string& column : columns_of(out, "main", rule.name)) {
            if (std::find(present.begin(), present.end(), column) == present.end()) continue;
            names += (names.empty() ? "" : ", ") + column;
            values += (values.empty() ? "" : ", ") + column_value(rule, column, input, shift_ns);
        }
        out.exec(fmt::format("INSERT INTO main.{0}({1}) SELECT {2} FROM {3}.{0} AS s{4}", rule.name, names, values,
                             kInputSchema, has_id(rule) ? " ORDER BY 1" : "")
                     .c_str());
    }
}

}  // namespace tbdprof::trace::merge
