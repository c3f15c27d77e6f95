// What the trace says about gradient buckets: every all-reduce and reduce-scatter with its kernel and
// the category of its input, and every use of the allocations they read and write (kernels through
// their pointer arguments or their library call's operands, copies). Sets are no use: zeroing a
// gradient before the step writes no gradient.
#include <algorithm>
#include <set>
#include <string>

#include "communication_buckets.h"
#include "kernel_range_scan.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

bool is_comm_function(const std::vector<bool>& is_comm, int64_t function) {
    return function >= 0 && static_cast<size_t>(function) < is_comm.size() && is_comm[static_cast<size_t>(function)];
}

// The category of the memory at [allocation + offset] when the collective ran: the tensor's (a sub-range
// of a pooled segment) where there is one, else the allocation's; empty when untagged.
std::string category_sql(bool with_subranges, const char* allocation, const char* offset) {
    const std::string own =
        std::string("(SELECT c.category FROM allocation_categories c WHERE c.allocation = ") + allocation + ")";
    if (!with_subranges) return "coalesce(" + own + ", '')";
    return std::string("coalesce((SELECT s.category FROM allocation_subranges s WHERE s.allocation = ") + allocation +
           " AND s.offset <= " + offset + " AND " + offset + " < s.offset + s.bytes AND s.begin_ns <= k.start_ns" +
           " AND (s.end_ns IS NULL OR s.end_ns >= k.start_ns) ORDER BY s.offset DESC LIMIT 1), " + own + ", '')";
}

std::vector<CollectiveCall> read_collectives(const TraceFile& trace) {
    const bool subranges = trace::has_table(trace.db, "allocation_subranges");
    trace::Statement rows(
        trace.db,
        "SELECT n.process, k.device, k.start_ns, k.duration_ns, n.op, l.a_allocation, l.a - ia.address, "
        "coalesce(l.a_bytes, n.bytes), l.c_allocation, l.c - oa.address, coalesce(l.c_bytes, n.bytes), " +
            category_sql(subranges, "l.a_allocation", "(l.a - ia.address)") +
            // kernels first (CROSS JOIN keeps the order): one pass over them, each call found by its key;
            // kernels.library_call has no index.
            " FROM kernels k CROSS JOIN nccl_calls n ON n.library_call = k.library_call "
            "JOIN library_calls l ON l.id = n.library_call "
            "LEFT JOIN allocations ia ON ia.id = l.a_allocation LEFT JOIN allocations oa ON oa.id = l.c_allocation "
            "WHERE n.op IN ('all_reduce', 'reduce_scatter') AND k.duration_ns IS NOT NULL AND k.duration_ns >= 0 "
            "ORDER BY k.start_ns, k.id");
    std::vector<CollectiveCall> calls;
    while (rows.step()) {
        const int64_t start = rows.column_int(2), duration = rows.column_int(3);
        if (duration > kMaxKernelNs || start < -kMaxKernelNs || start > INT64_MAX - kMaxKernelNs) continue;
        CollectiveCall c;
        c.process = rows.column_int(0);
        c.device = rows.column_int(1);
        c.start_ns = start;
        c.end_ns = start + duration;
        c.op = rows.column_text(4);
        if (!rows.is_null(5)) c.input_allocation = rows.column_int(5), c.input_offset = rows.column_int(6);
        c.input_bytes = rows.column_int(7);
        if (!rows.is_null(8)) c.output_allocation = rows.column_int(8), c.output_offset = rows.column_int(9);
        c.output_bytes = rows.column_int(10);
        c.input_category = rows.column_text(11);
        calls.push_back(std::move(c));
    }
    return calls;
}

std::string id_list(const std::set<int64_t>& ids) {
    std::string text;
    for (int64_t id : ids) text += (text.empty() ? "" : ",") + std::to_string(id);
    return text;
}

// Kernels outside library calls, through their own pointer arguments: a pointer to non-const memory
// is taken as a write (a hint of the signature), to const memory as a read. A write copies gradients
// when another of its arguments points into gradient-tagged memory (frameworks pass pointers inside
// structures, which carry no const).
void read_kernel_uses(const TraceFile& trace, const std::vector<bool>& is_comm, const std::string& ids,
                      std::map<int64_t, std::vector<BufferAccess>>& out) {
    trace::Statement rows(
        trace.db,
        "SELECT ka.allocation, ka.offset, ka.read_only, k.process, k.stream, k.start_ns, k.duration_ns, "
        "coalesce(k.queued_ns, 0), k.function, EXISTS (SELECT 1 FROM kernel_allocations kb "
        "JOIN allocation_categories c ON c.allocation = kb.allocation "
        "WHERE kb.kernel = ka.kernel AND kb.allocation != ka.allocation AND c.category = 'gradients') "
        "FROM kernel_allocations ka JOIN kernels k ON k.id = ka.kernel WHERE ka.allocation IN (" +
            ids + ") AND k.library_call IS NULL AND k.duration_ns IS NOT NULL AND k.duration_ns >= 0");
    while (rows.step()) {
        if (is_comm_function(is_comm, rows.column_int(8)) || rows.column_int(6) > kMaxKernelNs) continue;
        const int64_t begin = rows.column_int(5);
        out[rows.column_int(0)].push_back({begin, begin + rows.column_int(6), begin - rows.column_int(7),
                                           rows.column_int(3), rows.column_int(4), rows.column_int(1),
                                           rows.column_int(2) == 0, rows.column_int(9) != 0});
    }
}

// Kernels of library calls (cuBLAS, cuDNN; NCCL's own are no use): the call writes its output c and
// reads a and b, over the span of its kernels.
void read_library_uses(const TraceFile& trace, const std::string& ids,
                       std::map<int64_t, std::vector<BufferAccess>>& out) {
    trace::Statement rows(
        trace.db,
        "SELECT l.a_allocation, l.a - aa.address, l.b_allocation, l.b - ba.address, l.c_allocation, l.c - ca.address, "
        "min(k.process), min(k.stream), min(k.start_ns), max(k.start_ns + k.duration_ns), "
        "min(k.start_ns - coalesce(k.queued_ns, 0)), "
        "(SELECT count(*) FROM allocation_categories g WHERE g.category = 'gradients' AND g.allocation IN "
        "(l.a_allocation, l.b_allocation)) "
        "FROM kernels k CROSS JOIN library_calls l ON l.id = k.library_call "
        "LEFT JOIN allocations aa ON aa.id = l.a_allocation LEFT JOIN allocations ba ON ba.id = l.b_allocation "
        "LEFT JOIN allocations ca ON ca.id = l.c_allocation "
        "WHERE l.op NOT LIKE 'nccl%' AND k.duration_ns IS NOT NULL AND k.duration_ns >= 0 AND k.duration_ns < " +
            std::to_string(kMaxKernelNs) + " AND (l.a_allocation IN (" + ids + ") OR l.b_allocation IN (" + ids +
            ") OR l.c_allocation IN (" + ids + ")) GROUP BY l.id");
    while (rows.step()) {
        const BufferAccess base{rows.column_int(8),
                                rows.column_int(9),
                                rows.column_int(10),
                                rows.column_int(6),
                                rows.column_int(7),
                                0,
                                false,
                                rows.column_int(11) > 0};
        for (int operand = 0; operand < 3; ++operand) {
            if (rows.is_null(operand * 2)) continue;
            BufferAccess use = base;
            use.offset = rows.column_int(operand * 2 + 1);
            use.write = operand == 2;
            use.from_gradients = use.write && base.from_gradients;
            out[rows.column_int(operand * 2)].push_back(use);
        }
    }
}

// Copies read their source and write their destination; a copy from gradient-tagged memory copies gradients.
void read_copy_uses(const TraceFile& trace, const std::string& ids, std::map<int64_t, std::vector<BufferAccess>>& out) {
    trace::Statement rows(
        trace.db,
        "SELECT p.src_allocation, p.src - sa.address, p.dst_allocation, p.dst - da.address, p.process, p.stream, "
        "p.start_ns, p.duration_ns, coalesce(p.queued_ns, 0), "
        "coalesce((SELECT c.category FROM allocation_categories c WHERE c.allocation = p.src_allocation), '') "
        "FROM copies p LEFT JOIN allocations sa ON sa.id = p.src_allocation "
        "LEFT JOIN allocations da ON da.id = p.dst_allocation WHERE p.duration_ns IS NOT NULL AND p.duration_ns >= 0 "
        "AND (p.src_allocation IN (" +
            ids + ") OR p.dst_allocation IN (" + ids + "))");
    while (rows.step()) {
        if (rows.column_int(7) > kMaxKernelNs) continue;
        const int64_t begin = rows.column_int(6);
        const BufferAccess base{begin,
                                begin + rows.column_int(7),
                                begin - rows.column_int(8),
                                rows.column_int(4),
                                rows.column_int(5),
                                0,
                                false,
                                false};
        if (!rows.is_null(0)) {
            BufferAccess read = base;
            read.offset = rows.column_int(1);
            out[rows.column_int(0)].push_back(read);
        }
        if (!rows.is_null(2)) {
            BufferAccess write = base;
            write.offset = rows.column_int(3);
            write.write = true;
            write.from_gradients = rows.column_text(9) == "gradients";
            out[rows.column_int(2)].push_back(write);
        }
    }
}

// Columns the bucket view reads that older traces lack; empty when all are there.
std::string missing_columns(const TraceFile& trace) {
    if (!trace::has_table(trace.db, "nccl_calls")) return "the trace has no NCCL calls table";
    for (const char* column : {"a_allocation", "c_allocation", "a_bytes", "c_bytes"})
        if (!trace::has_column(trace.db, "library_calls", column))
            return std::string("the trace's library calls lack the column ") + column + " (an older trace)";
    for (const char* column : {"src_allocation", "dst_allocation"})
        if (!trace::has_column(trace.db, "copies", column))
            return std::string("the trace's copies lack the column ") + column + " (an older trace)";
    return {};
}

}  // namespace

BucketInputs read_bucket_inputs(const TraceFile& trace, const std::vector<bool>& is_comm) {
    BucketInputs inputs;
    inputs.missing = missing_columns(trace);
    if (!inputs.missing.empty()) return inputs;
    // Imported traces have communication kernels but no calls: no pass over the kernels then.
    trace::Statement any(trace.db,
                         "SELECT EXISTS (SELECT 1 FROM nccl_calls WHERE op IN ('all_reduce', 'reduce_scatter'))");
    if (!any.step() || any.column_int(0) == 0) {
        inputs.missing = "the trace records no NCCL all-reduce or reduce-scatter call (an import has only kernels)";
        return inputs;
    }
    inputs.collectives = read_collectives(trace);
    trace::Statement grouped(trace.db,
                             "SELECT count(*) FROM nccl_calls n WHERE n.op IN ('all_reduce', 'reduce_scatter') AND "
                             "n.library_call NOT IN (SELECT library_call FROM kernels WHERE library_call IS NOT NULL)");
    if (grouped.step()) inputs.grouped = grouped.column_int(0);
    std::set<int64_t> allocations;
    for (const CollectiveCall& c : inputs.collectives) {
        if (c.input_allocation >= 0) allocations.insert(c.input_allocation);
        if (c.output_allocation >= 0) allocations.insert(c.output_allocation);
    }
    if (allocations.empty()) return inputs;
    const std::string ids = id_list(allocations);
    read_kernel_uses(trace, is_comm, ids, inputs.accesses);
    read_library_uses(trace, ids, inputs.accesses);
    read_copy_uses(trace, ids, inputs.accesses);
    for (auto& [allocation, uses] : inputs.accesses)
        std::stable_sort(uses.begin(), uses.end(),
                         [](const BufferAccess& a, const BufferAccess& b) { return a.begin_ns < b.begin_ns; });
    return inputs;
}

std::map<std::pair<int64_t, int64_t>, std::vector<Stretch>> read_stream_kernels(
    const TraceFile& trace, const std::vector<bool>& is_comm, const std::vector<std::pair<int64_t, int64_t>>& streams) {
    std::map<std::pair<int64_t, int64_t>, std::vector<Stretch>> by_stream;
    for (const auto& key : streams) by_stream[key];
    if (streams.empty()) return by_stream;
    std::set<int64_t> stream_ids;
    for (const auto& key : streams) stream_ids.insert(key.second);
    trace::Statement rows(trace.db,
                          "SELECT process, stream, function, start_ns, duration_ns FROM kernels WHERE stream IN (" +
                              id_list(stream_ids) + ") AND duration_ns IS NOT NULL AND duration_ns >= 0");
    while (rows.step()) {
        const auto found = by_stream.find({rows.column_int(0), rows.column_int(1)});
        if (found == by_stream.end() || is_comm_function(is_comm, rows.column_int(2))) continue;
        if (rows.column_int(4) > kMaxKernelNs || rows.column_int(3) > INT64_MAX - kMaxKernelNs) continue;
        found->second.push_back({rows.column_int(3), rows.column_int(3) + rows.column_int(4)});
    }
    for (auto& [key, kernels] : by_stream)
        std::sort(kernels.begin(), kernels.end(), [](const Stretch& a, const Stretch& b) { return a.begin < b.begin; });
    return by_stream;
}

}  // namespace tbdprof::analyzer
