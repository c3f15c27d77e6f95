#include "tbdprof/trace/trace_writer.h"

#include <sqlite3.h>

#include "kernel_stage.h"
#include "next_rowid.h"
#include "tbdprof/trace/schema.h"
#include "tbdprof/trace/sqlite_handle.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::trace::detail {
namespace {

// Binds values to consecutive parameters: insert(stmt, a, b, c) binds ?1 = a, ?2 = b, ?3 = c and runs.
template <class... Values>
void insert(Statement& statement, const Values&... values) {
    statement.bind_all(values...).run();
}

// Inserts the rows of a big table many at a time: one multi-row INSERT runs the virtual machine's
// per-statement work once per batch instead of once per row, about halving the cost of a kernel row.
// `bind(statement, base, row)` binds one row's `columns` values after parameter `base`.
template <class Row, class Bind>
void insert_rows(Database& db, std::string_view table, int columns, const std::vector<Row>& rows, Bind bind) {
    constexpr size_t kBatch = 64;  // 64 rows x up to 15 columns stays far below SQLite's parameter limit
    auto sql = [&](size_t count) {
        std::string text = "INSERT INTO " + std::string(table) + " VALUES ";
        for (size_t r = 0; r < count; ++r) {
            text += r ? ",(" : "(";
            for (int c = 0; c < columns; ++c) text += c ? ",?" : "?";
            text += ')';
        }
        return text;
    };
    const size_t full = rows.size() / kBatch * kBatch;
    if (full > 0) {
        Statement batch(db, sql(kBatch));
        for (size_t i = 0; i < full; i += kBatch) {
            for (size_t r = 0; r < kBatch; ++r) bind(batch, static_cast<int>(r) * columns, rows[i + r]);
            batch.run();
        }
    }
    if (full < rows.size()) {
        Statement rest(db, sql(rows.size() - full));
        for (size_t r = 0; full + r < rows.size(); ++r) bind(rest, static_cast<int>(r) * columns, rows[full + r]);
        rest.run();
    }
}

void write_run(Database& db, const TraceModel& m) {
    const RunRow& r = m.run;
    Statement run(db, "INSERT INTO run VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    insert(run, std::string_view(r.command_line), r.host, r.start_unix_ns, r.start_monotonic_ns, r.duration_ns,
           std::string_view(r.tool_version), int64_t{r.simulated_device}, std::string_view(r.clock_source),
           r.host_timed_kernels, r.exit_status, r.crash_signal, r.truncated_files);
    Statement note(db, "INSERT INTO run_notes VALUES (?1, ?2)");
    for (const auto& [key, value] : m.notes) insert(note, std::string_view(key), std::string_view(value));
}

void write_entities(Database& db, const TraceModel& m) {
    Statement string(db, "INSERT INTO strings VALUES (?1, ?2)");
    for (size_t i = 0; i < m.strings.texts.size(); ++i)
        insert(string, static_cast<int64_t>(i) + 1, std::string_view(m.strings.texts[i]));  // few, long
    Statement process(db, "INSERT INTO processes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    for (const ProcessRow& p : m.processes) {
        insert(process, p.id, p.pid, p.parent_pid, p.command_line, p.executable, p.start_ns, p.end_ns,
               int64_t{p.truncated});
    }
    Statement thread(db, "INSERT INTO threads VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const ThreadRow& t : m.threads) {
        const auto name = t.name ? std::optional<std::string_view>(*t.name) : std::nullopt;
        insert(thread, t.id, t.process, t.tid, name, t.first_seen_ns);
    }
    Statement device(db, "INSERT INTO devices VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    for (const DeviceRow& d : m.devices) {
        insert(device, d.id, std::string_view(d.name), d.cc_major, d.cc_minor, d.sm_count, d.memory_bytes, d.clock_khz,
               d.fp32_lanes_per_sm, d.fp32_peak_flops, int64_t{d.simulated});
    }
    Statement stream(db, "INSERT INTO streams VALUES (?1, ?2, ?3, ?4)");
    for (const StreamRow& s : m.streams) insert(stream, s.id, s.process, s.device, s.handle);
    Statement function(db, "INSERT INTO functions VALUES (?1, ?2, ?3)");
    for (const FunctionRow& f : m.functions) insert(function, f.id, f.name, f.mangled);
}

// Rows of a table written in chunks as `produce` hands them over (the builder's kernels and edges,
// read back from disk): only one chunk is in memory at a time.
template <class Row, class Produce, class Bind>
void insert_streamed(Database& db, std::string_view table, int columns, Produce produce, Bind bind) {
    constexpr size_t kChunk = 4096;
    std::vector<Row> chunk;
    chunk.reserve(kChunk);
    produce([&](const Row& row) {
        chunk.push_back(row);
        if (chunk.size() < kChunk) return;
        insert_rows(db, table, columns, chunk, bind);
        chunk.clear();
    });
    insert_rows(db, table, columns, chunk, bind);
}

void write_kernels(Database& db, const TraceModel& m) {
    NextRowid ids;  // the model's kernels, then the stage's: one table
    const auto bind = [&ids](Statement& st, int base, const KernelRow& k) {
        st.bind_after(base, ids.bind_value(k.id), k.process, Opt(k.thread), k.device, Opt(k.stream), k.function,
                      k.start_ns, Opt(k.duration_ns), Opt(k.queued_ns), Opt(k.grid), Opt(k.block), Opt(k.shared_bytes),
                      Opt(k.correlation), Opt(k.library_call), Opt(k.graph_launch));
    };
    insert_rows(db, "kernels", 15, m.kernels, bind);
    if (!m.kernel_stage) return;
    insert_streamed<KernelRow>(
        db, "kernels", 15,
        [&](const auto& take) { m.kernel_stage->for_each_kernel([&](const KernelRow& k, int64_t) { take(k); }); },
        bind);
}

void write_edges(Database& db, const TraceModel& m) {
    const auto bind = [](Statement& st, int base, const EdgeRow& e) {
        st.bind_after(base, e.kernel, e.param, e.param_word, e.allocation, e.offset, e.read_only);
    };
    insert_rows(db, "kernel_allocations", 6, m.edges, bind);
    if (!m.kernel_stage) return;
    insert_streamed<EdgeRow>(
        db, "kernel_allocations", 6, [&](const auto& take) { m.kernel_stage->for_each_edge(take); }, bind);
}

void write_activity(Database& db, const TraceModel& m) {
    write_kernels(db, m);
    Statement graph(db, "INSERT INTO graph_launches VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    for (const GraphLaunchRow& g : m.graph_launches)
        insert(graph, g.id, g.process, g.thread, g.stream, g.launch_ns, g.graph_exec, g.graph, g.kernels);
    NextRowid copy_ids, set_ids, call_ids, range_ids;
    insert_rows(db, "copies", 17, m.copies, [&copy_ids](Statement& st, int base, const CopyRow& c) {
        st.bind_after(base, copy_ids.bind_value(c.id), c.process, c.thread, c.device, c.stream, c.kind, c.bytes, c.src,
                      c.dst, c.start_ns, c.duration_ns, c.queued_ns, c.async, c.api, c.correlation, c.src_allocation,
                      c.dst_allocation);
    });
    insert_rows(db, "sets", 15, m.sets, [&set_ids](Statement& st, int base, const SetRow& s) {
        st.bind_after(base, set_ids.bind_value(s.id), s.process, s.thread, s.device, s.stream, s.value, s.bytes, s.dst,
                      s.start_ns, s.duration_ns, s.queued_ns, s.async, s.api, s.correlation, s.dst_allocation);
    });
    insert_rows(db, "api_calls", 7, m.api_calls, [&call_ids](Statement& st, int base, const ApiCallRow& a) {
        st.bind_after(base, call_ids.bind_value(a.id), a.process, a.thread, a.kind, a.begin_ns, a.end_ns, a.handle);
    });
    Statement library(db,
                      "INSERT INTO library_calls VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                      "?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, "
                      "?30, ?31, ?32, ?33)");
    for (const LibraryCallRow& l : m.library_calls) {
        insert(library, l.id, l.process, l.thread, std::string_view(l.name), l.op, l.begin_ns, l.end_ns, l.stream, l.m,
               l.n, l.k, l.batch, l.a_type, l.b_type, l.c_type, l.compute_type, l.transa, l.transb, l.flops, l.a, l.b,
               l.c, l.workspace, l.workspace_bytes, l.math_mode, l.precision, l.a_bytes, l.b_bytes, l.c_bytes,
               l.a_allocation, l.b_allocation, l.c_allocation, l.workspace_allocation);
    }
    Statement operand(db, "INSERT INTO library_call_operands VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    for (const LibraryOperandRow& o : m.library_operands)
        insert(operand, o.library_call, o.process, o.role, o.access, o.address, o.bytes, o.allocation);
    Statement nccl(db, "INSERT INTO nccl_calls VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
    for (const NcclCallRow& n : m.nccl_calls)
        insert(nccl, n.library_call, n.process, n.op, n.communicator, n.rank, n.nranks, n.count, n.datatype, n.bytes,
               n.reduction, n.peer, n.root, n.stream, n.communicator_identity);
    Statement rank(db, "INSERT INTO process_ranks VALUES (?1, ?2, ?3, ?4)");
    for (const ProcessRankRow& r : m.process_ranks) insert(rank, r.process, r.rank, r.local_rank, r.world_size);
    // Many on an import (every operator and runtime call): a batch at a time. The rows outlive the
    // statements (insert_rows finalizes them before returning), so SQLite reads the names in place.
    insert_rows(db, "ranges", 7, m.ranges, [&range_ids](Statement& st, int base, const RangeRow& r) {
        std::optional<StaticText> domain;
        if (r.domain) domain = StaticText{*r.domain};
        st.bind_after(base, range_ids.bind_value(r.id), r.process, r.thread, r.begin_ns, r.end_ns, StaticText{r.name},
                      domain);
    });
}

void write_memory(Database& db, const TraceModel& m) {
    Statement stack(db, "INSERT INTO stacks VALUES (?1, ?2, ?3)");
    for (const StackRow& s : m.stacks) insert(stack, s.id, s.process, s.depth);
    Statement frame(db, "INSERT INTO frames VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    for (const FrameRow& f : m.frames) insert(frame, f.id, f.process, f.ip, f.symbol, f.module, f.offset);
    insert_rows(db, "stack_frames", 3, m.stack_frames, [](Statement& st, int base, const StackFrameRow& s) {
        st.bind_after(base, s.stack, s.position, s.frame);
    });
    NextRowid allocation_ids;
    insert_rows(db, "allocations", 13, m.allocations,
                [&allocation_ids](Statement& st, int base, const AllocationRow& a) {
                    st.bind_after(base, allocation_ids.bind_value(a.id), a.process, a.thread, a.device, a.address,
                                  a.bytes, a.alloc_ns, a.free_ns, a.kind, a.api, a.stream, a.stack, a.free_thread);
                });
    Statement category(db,
                       "INSERT INTO allocation_categories (allocation, category, confidence, rule, reason) "
                       "VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const AllocationCategoryRow& c : m.allocation_categories)
        insert(category, c.allocation, std::string_view(c.category), c.confidence, c.rule, c.reason);
    write_edges(db, m);
    Statement sample(db, "INSERT INTO cpu_samples VALUES (?1, ?2, ?3, ?4)");
    for (const CpuSampleRow& s : m.cpu_samples) insert(sample, s.process, s.ts_ns, s.user_ns, s.system_ns);
    Statement metric(db, "INSERT INTO kernel_metrics (kernel, metric, value) VALUES (?1, ?2, ?3)");
    for (const KernelMetricRow& k : m.kernel_metrics) insert(metric, k.kernel, k.metric, k.value);
    Statement dropped(db, "INSERT INTO dropped_events VALUES (?1, ?2, ?3)");
    for (const DroppedRow& d : m.dropped) insert(dropped, d.process, d.cause, d.count);
    Statement window(db, "INSERT INTO capture_windows VALUES (?1, ?2, ?3, ?4)");
    for (const CaptureWindowRow& w : m.capture_windows)
        insert(window, w.process, w.begin_ns, w.end_ns, std::string_view(w.reason));
    Statement heap(db, "INSERT INTO memory_heaps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
    for (const MemoryHeapRow& h : m.memory_heaps)
        insert(heap, h.id, h.process, h.thread, h.handle, h.address, h.bytes, h.allocation, h.device,
               std::string_view(h.usage), h.name, h.domain, h.register_ns, h.unregister_ns);
    Statement region(db, "INSERT INTO memory_regions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    for (const MemoryRegionRow& r : m.memory_regions)
        insert(region, r.id, r.process, r.heap, r.address, r.bytes, r.allocation, r.device, r.name, r.register_ns,
               r.unregister_ns, r.end_reason);
}

void write_tables(Database& db, const TraceModel& model) {
    // The file is private until renamed into place, so durability settings buy nothing here: a crash
    // leaves only OUT.tmp, which the next build replaces.
    db.exec(
        "PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
        "PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -65536;");
    db.exec("BEGIN");
    db.exec(kTraceSchemaSql);
    write_run(db, model);
    write_entities(db, model);
    write_activity(db, model);
    write_memory(db, model);
    db.exec("COMMIT");
}

}  // namespace

void write_trace(const std::string& path, const TraceModel& model) {
    // One thread writes one private file: SQLite's mutexes and memory statistics only cost time
    // here. (MEMSTATUS can only change before SQLite initializes; later calls are harmless no-ops.)
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3* handle = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &handle,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nullptr);
    Database db(handle);
    if (rc != SQLITE_OK) throw SqliteError("cannot create " + path + ": " + sqlite3_errstr(rc));
    write_tables(db, model);
    db.close();
}

}  // namespace tbdprof::trace::detail
