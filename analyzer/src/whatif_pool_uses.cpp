// Uses of pooled segments' bytes (whatif_pool_uses.h).
#include "whatif_pool_uses.h"

#include <algorithm>
#include <string>

#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

using Uses = std::unordered_map<int64_t, std::vector<SegmentUse>>;

// Rows of (allocation id, pointer or offset, host time, whether a library call's work); `pointers`:
// column 1 is an address.
void add_rows(const TraceFile& trace, const std::string& sql, bool pointers,
              const std::unordered_map<int64_t, int64_t>& segment_address, Uses& uses) {
    trace::Statement rows(trace.db, sql);
    while (rows.step()) {
        if (rows.is_null(0) || rows.is_null(1)) continue;
        const auto segment = segment_address.find(rows.column_int(0));
        if (segment == segment_address.end()) continue;
        const int64_t offset = rows.column_int(1) - (pointers ? segment->second : 0);
        uses[segment->first].push_back({offset, rows.column_int(2), rows.column_int(3) != 0});
    }
}

// One operand column of the library calls (a, b, c or workspace), at the call's begin.
void add_call_operand(const TraceFile& trace, const char* operand,
                      const std::unordered_map<int64_t, int64_t>& segment_address, Uses& uses) {
    add_rows(trace, std::string("SELECT ") + operand + "_allocation, " + operand + ", begin_ns, 1 FROM library_calls",
             true, segment_address, uses);
}

void sort_by_time(Uses& uses) {
    for (auto& [segment, list] : uses)
        std::stable_sort(list.begin(), list.end(),
                         [](const SegmentUse& x, const SegmentUse& y) { return x.trace_ns < y.trace_ns; });
}

// The library calls' operands a, b, c and workspace, and the further operands (cuDNN's).
void add_library_uses(const TraceFile& trace, const std::unordered_map<int64_t, int64_t>& segment_address, Uses& uses) {
    if (!trace::has_table(trace.db, "library_calls") || !trace::has_column(trace.db, "library_calls", "a_allocation"))
        return;
    for (const char* operand : {"a", "b", "c", "workspace"}) add_call_operand(trace, operand, segment_address, uses);
    if (trace::has_table(trace.db, "library_call_operands"))
        add_rows(trace,
                 "SELECT o.allocation, o.address, c.begin_ns, 1 FROM library_call_operands o "
                 "JOIN library_calls c ON c.id = o.library_call",
                 true, segment_address, uses);
}

// Copies' sources and destinations, and sets' destinations, at their host time.
void add_copy_uses(const TraceFile& trace, const std::unordered_map<int64_t, int64_t>& segment_address, Uses& uses) {
    const std::string host_time = "start_ns - COALESCE(queued_ns, 0)";
    if (trace::has_table(trace.db, "copies") && trace::has_column(trace.db, "copies", "dst_allocation")) {
        add_rows(trace, "SELECT src_allocation, src, " + host_time + ", 0 FROM copies", true, segment_address, uses);
        add_rows(trace, "SELECT dst_allocation, dst, " + host_time + ", 0 FROM copies", true, segment_address, uses);
    }
    if (trace::has_table(trace.db, "sets") && trace::has_column(trace.db, "sets", "dst_allocation"))
        add_rows(trace, "SELECT dst_allocation, dst, " + host_time + ", 0 FROM sets", true, segment_address, uses);
}

}  // namespace

std::unordered_map<int64_t, std::vector<SegmentUse>> read_segment_uses(
    const TraceFile& trace, const std::unordered_map<int64_t, int64_t>& segment_address) {
    Uses uses;
    if (segment_address.empty()) return uses;
    if (trace::has_table(trace.db, "kernel_allocations"))
        add_rows(trace,
                 "SELECT e.allocation, e.offset, k.start_ns - COALESCE(k.queued_ns, 0), k.library_call IS NOT NULL "
                 "FROM kernel_allocations e JOIN kernels k ON k.id = e.kernel",
                 false, segment_address, uses);
    add_library_uses(trace, segment_address, uses);
    add_copy_uses(trace, segment_address, uses);
    sort_by_time(uses);
    return uses;
}

std::unordered_map<int64_t, std::vector<SegmentUse>> read_matrix_operand_uses(
    const TraceFile& trace, const std::unordered_map<int64_t, int64_t>& segment_address) {
    Uses uses;
    if (segment_address.empty() || !trace::has_table(trace.db, "library_calls") ||
        !trace::has_column(trace.db, "library_calls", "a_allocation"))
        return uses;
    for (const char* operand : {"a", "b", "c"}) add_call_operand(trace, operand, segment_address, uses);
    sort_by_time(uses);
    return uses;
}

}  // namespace tbdprof::analyzer
