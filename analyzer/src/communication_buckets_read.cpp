// What the trace says about gradient buckets: every all-reduce and reduce-scatter with its kernel and
// the category of its input, and every use of the collectives' buffers (kernels through their pointer
// arguments or their library call's operands, copies). Sets are no use: zeroing a gradient before the
// step writes no gradient.
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

std::vector<CollectiveCall> read_collectives(const TraceFile& trace, const MemoryTags& tags) {
    trace::Statement rows(
        trace.db,
        "SELECT n.process, k.device, k.start_ns, k.duration_ns, n.op, l.a_allocation, l.a - ia.address, "
        "coalesce(l.a_bytes, n.bytes), l.c_allocation, l.c - oa.address, coalesce(l.c_bytes, n.bytes) "
        // kernels first (CROSS JOIN keeps the order): one pass over them, each call found by its key;
        // kernels.library_call has no index.
        "FROM kernels k CROSS JOIN nccl_calls n ON n.library_call = k.library_call "
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
        if (c.input_allocation >= 0) c.input_category = tags.category(c.input_allocation, c.input_offset, start);
        calls.push_back(std::move(c));
    }
    return calls;
}

std::string id_list(const std::set<int64_t>& ids) {
    std::string text;
    for (int64_t id : ids) text += (text.empty() ? "" : ",") + std::to_string(id);
    return text;
}

// The collectives' buffers: per allocation, the byte ranges they read or write. Uses elsewhere in the
// allocation (a pooled segment holds every tensor) are not kept.
struct BufferRanges {
    std::map<int64_t, std::vector<Stretch>> by_allocation;
    void add(int64_t allocation, int64_t offset, int64_t bytes) {
        if (allocation >= 0) by_allocation[allocation].push_back({offset, offset + std::max<int64_t>(bytes, 1)});
    }
    // Sorted and merged, for hold().
    void merge() {
        for (auto& [allocation, ranges] : by_allocation) ranges = IntervalUnion(std::move(ranges)).stretches();
    }
    bool hold(int64_t allocation, int64_t offset) const {
        const auto found = by_allocation.find(allocation);
        if (found == by_allocation.end()) return false;
        const std::vector<Stretch>& ranges = found->second;
        const auto after = std::partition_point(ranges.begin(), ranges.end(),
                                                [offset](const Stretch& r) { return r.begin <= offset; });
        return after != ranges.begin() && offset < std::prev(after)->end;
    }
    std::string ids() const {
        std::string text;
        for (const auto& [id, ranges] : by_allocation) text += (text.empty() ? "" : ",") + std::to_string(id);
        return text;
    }
};

struct UseReader {
    const TraceFile& trace;
    const MemoryTags& tags;
    BufferRanges ranges;
    std::map<int64_t, std::vector<BufferAccess>>& out;

    void keep(int64_t allocation, const BufferAccess& use) {
        if (ranges.hold(allocation, use.offset)) out[allocation].push_back(use);
    }
};

// Whether another pointer argument of the kernel points into gradient-tagged memory at its start.
bool reads_gradients(trace::Statement& args, const MemoryTags& tags, int64_t kernel, int64_t param, int64_t word,
                     int64_t trace_ns) {
    args.reset();
    args.bind(1, kernel);
    bool found = false;
    while (args.step())
        if ((args.column_int(0) != param || args.column_int(1) != word) &&
            tags.gradients(args.column_int(2), args.column_int(3), trace_ns))
            found = true;
    return found;
}

// Kernels outside library calls, through their own pointer arguments: a pointer to non-const memory
// is taken as a write (a hint of the signature), to const memory as a read. A write copies gradients
// when another of its arguments points into gradient-tagged memory (frameworks pass pointers inside
// structures, which carry no const).
void read_kernel_uses(UseReader& reader, const std::vector<bool>& is_comm) {
    trace::Statement rows(
        reader.trace.db,
        "SELECT ka.allocation, ka.offset, ka.read_only, k.process, k.stream, k.start_ns, k.duration_ns, "
        "coalesce(k.queued_ns, 0), k.function, ka.kernel, ka.param, ka.param_word "
        "FROM kernel_allocations ka JOIN kernels k ON k.id = ka.kernel WHERE ka.allocation IN (" +
            reader.ranges.ids() + ") AND k.library_call IS NULL AND k.duration_ns IS NOT NULL AND k.duration_ns >= 0");
    trace::Statement args(reader.trace.db,
                          "SELECT param, param_word, allocation, offset FROM kernel_allocations WHERE kernel = ?1");
    while (rows.step()) {
        if (is_comm_function(is_comm, rows.column_int(8)) || rows.column_int(6) > kMaxKernelNs) continue;
        if (!reader.ranges.hold(rows.column_int(0), rows.column_int(1))) continue;
        const int64_t begin = rows.column_int(5);
        BufferAccess use{begin,
                         begin + rows.column_int(6),
                         begin - rows.column_int(7),
                         rows.column_int(3),
                         rows.column_int(4),
                         rows.column_int(1),
                         rows.column_int(2) == 0,
                         false};
        if (use.write)
            use.from_gradients =
                reads_gradients(args, reader.tags, rows.column_int(9), rows.column_int(10), rows.column_int(11), begin);
        reader.keep(rows.column_int(0), use);
    }
}

// Kernels of library calls (cuBLAS, cuDNN; NCCL's own are no use): the call writes its output c and
// reads a and b, over the span of its kernels; its write copies gradients when a or b is gradients.
void read_library_uses(UseReader& reader) {
    const std::string ids = reader.ranges.ids();
    trace::Statement rows(
        reader.trace.db,
        "SELECT l.a_allocation, l.a - aa.address, l.b_allocation, l.b - ba.address, l.c_allocation, l.c - ca.address, "
        "min(k.process), min(k.stream), min(k.start_ns), max(k.start_ns + k.duration_ns), "
        "min(k.start_ns - coalesce(k.queued_ns, 0)) "
        "FROM kernels k CROSS JOIN library_calls l ON l.id = k.library_call "
        "LEFT JOIN allocations aa ON aa.id = l.a_allocation LEFT JOIN allocations ba ON ba.id = l.b_allocation "
        "LEFT JOIN allocations ca ON ca.id = l.c_allocation "
        "WHERE l.op NOT LIKE 'nccl%' AND k.duration_ns IS NOT NULL AND k.duration_ns >= 0 AND k.duration_ns < " +
            std::to_string(kMaxKernelNs) + " AND (l.a_allocation IN (" + ids + ") OR l.b_allocation IN (" + ids +
            ") OR l.c_allocation IN (" + ids + ")) GROUP BY l.id");
    while (rows.step()) {
        const int64_t begin = rows.column_int(8);
        const auto operand_gradients = [&](int column) {
            return !rows.is_null(column) &&
                   reader.tags.gradients(rows.column_int(column), rows.column_int(column + 1), begin);
        };
        const BufferAccess base{begin,
                                rows.column_int(9),
                                rows.column_int(10),
                                rows.column_int(6),
                                rows.column_int(7),
                                0,
                                false,
                                operand_gradients(0) || operand_gradients(2)};
        for (int operand = 0; operand < 3; ++operand) {
            if (rows.is_null(operand * 2)) continue;
            BufferAccess use = base;
            use.offset = rows.column_int(operand * 2 + 1);
            use.write = operand == 2;
            use.from_gradients = use.write && base.from_gradients;
            reader.keep(rows.column_int(operand * 2), use);
        }
    }
}

// Copies read their source and write their destination; a copy from gradient-tagged memory copies gradients.
void read_copy_uses(UseReader& reader) {
    const std::string ids = reader.ranges.ids();
    trace::Statement rows(
        reader.trace.db,
        "SELECT p.src_allocation, p.src - sa.address, p.dst_allocation, p.dst - da.address, p.process, p.stream, "
        "p.start_ns, p.duration_ns, coalesce(p.queued_ns, 0) "
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
            reader.keep(rows.column_int(0), read);
        }
        if (!rows.is_null(2)) {
            BufferAccess write = base;
            write.offset = rows.column_int(3);
            write.write = true;
            write.from_gradients =
                !rows.is_null(0) && reader.tags.gradients(rows.column_int(0), rows.column_int(1), begin);
            reader.keep(rows.column_int(2), write);
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
    const MemoryTags tags(trace);
    inputs.collectives = read_collectives(trace, tags);
    trace::Statement grouped(trace.db,
                             "SELECT count(*) FROM nccl_calls n WHERE n.op IN ('all_reduce', 'reduce_scatter') AND "
                             "n.library_call NOT IN (SELECT library_call FROM kernels WHERE library_call IS NOT NULL)");
    if (grouped.step()) inputs.grouped = grouped.column_int(0);
    UseReader reader{trace, tags, {}, inputs.accesses};
    for (const CollectiveCall& c : inputs.collectives) {
        reader.ranges.add(c.input_allocation, c.input_offset, c.input_bytes);
        reader.ranges.add(c.output_allocation, c.output_offset, c.output_bytes);
    }
    if (reader.ranges.by_allocation.empty()) return inputs;
    reader.ranges.merge();
    read_kernel_uses(reader, is_comm);
    read_library_uses(reader);
    read_copy_uses(reader);
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
