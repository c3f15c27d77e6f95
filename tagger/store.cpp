// Writing the tagger's results into the trace: iterations, phases, and one category row per
// allocation, in one transaction through the trace library. Tables an older trace lacks are brought
// to schemas/trace.sql's definition by the library (trace::upgrade_for_update), never declared here.
#include "iterations.h"
#include "mapped_segments.h"
#include "model.h"
#include "processes.h"
#include "rules.h"
#include "tbdprof/tagger/tagger.h"

#include <tbdprof/trace/memory_kinds.h>
#include <tbdprof/trace/tables.h>
#include <tbdprof/trace/trace_reader.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tbdprof::tagger {
namespace {

// The tags' reasons and evidence, each distinct text written once to `strings` and referred to by
// id (allocation_categories.reason_string, evidence_string): most rows share their rule's reason,
// and a run's evidence texts repeat across its many allocations.
class TagTexts {
public:
    explicit TagTexts(trace::Database& db)
        : insert_(db, "INSERT INTO strings (id, text) VALUES (?1, ?2)"),
          next_id_(db.query_int("SELECT ifnull(max(id), 0) FROM strings") + 1) {}
    // NULL for no text (read back as empty, as before).
    std::optional<int64_t> id(const std::string& text) {
        if (text.empty()) return std::nullopt;
        auto [it, added] = ids_.try_emplace(text, next_id_);
        if (added) insert_.bind(1, next_id_++).bind(2, text).run();
        return it->second;
    }

private:
    trace::Statement insert_;
    int64_t next_id_;
    std::unordered_map<std::string, int64_t> ids_;
};

// Strings that only earlier tags referred to: removed with those tags, so that tagging again does
// not grow the file.
void delete_tag_texts(trace::Database& db) {
    std::string ids;
    for (const char* table : {"allocation_categories", "allocation_subranges"})
        for (const char* column : {"reason_string", "evidence_string"})
            if (trace::has_column(db, table, column))
                ids += std::string(ids.empty() ? "" : " UNION ") + "SELECT " + column + " FROM " + table;
    if (!ids.empty()) db.exec(("DELETE FROM strings WHERE id IN (" + ids + ")").c_str());
}

// Training steps first (ids 1..n, which phases refer to), then the spans set apart (idx -1).
void write_iterations(trace::Database& db, const IterationSet& its) {
    trace::Statement iteration(db,
                               "INSERT INTO iterations (id, process, idx, begin_ns, end_ns, source, "
                               "device_begin_ns, device_end_ns, kind) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)");
    auto write_span = [&](const Iteration& it, int64_t id, int64_t idx, const char* kind) {
        const bool device = it.device_end_ns > 0;
        iteration
            .bind_all(id, it.process, idx, it.begin_ns, it.end_ns, its.source,
                      device ? std::optional<int64_t>(it.device_begin_ns) : std::nullopt,
                      device ? std::optional<int64_t>(it.device_end_ns) : std::nullopt, kind)
            .run();
    };
    // idx counts each process's steps from 0 (a multi-process run: every rank its own, processes.h).
    std::map<int32_t, int64_t> steps_of_process;
    for (size_t i = 0; i < its.iterations.size(); ++i)
        write_span(its.iterations[i], int64_t(i + 1), steps_of_process[its.iterations[i].process]++, "training");
    for (size_t i = 0; i < its.non_training.size(); ++i)
        write_span(its.non_training[i], int64_t(its.iterations.size() + i + 1), -1, "non_training");
}

void write_phases(trace::Database& db, const std::vector<Phase>& phases) {
    trace::Statement phase(db,
                           "INSERT INTO phases (iteration, kind, begin_ns, end_ns, device_begin_ns, device_end_ns) "
                           "VALUES (?1,?2,?3,?4,?5,?6)");
    for (const Phase& p : phases) {
        const bool device = p.device_end_ns > 0;
        phase
            .bind_all(int64_t(p.iteration + 1), p.kind, p.begin_ns, p.end_ns,
                      device ? std::optional<int64_t>(p.device_begin_ns) : std::nullopt,
                      device ? std::optional<int64_t>(p.device_end_ns) : std::nullopt)
            .run();
    }
}

// The category rows, kRowsPerStatement to an INSERT: a statement run per row cost about 5,000
// instructions a row (13,386 rows, 3% of an import of df_index_resolver), most of it the run itself.
// Rows are written in the order added, with the values and types bound before, so the table is too.
class CategoryRows {
public:
    explicit CategoryRows(trace::Database& db) : db_(db), full_(db, insert_sql(kRowsPerStatement)) {}
    // `tag` must stay alive and unchanged until flush(): its texts are bound in place.
    void add(int64_t allocation, const Tag& tag, std::optional<int64_t> reason, std::optional<int64_t> evidence) {
        pending_.push_back({allocation, &tag, reason, evidence});
        if (pending_.size() == kRowsPerStatement) write(full_);
    }
    // The rows short of a full statement, through a statement of that many rows.
    void flush() {
        if (pending_.empty()) return;
        trace::Statement tail(db_, insert_sql(pending_.size()));
        write(tail);
    }

private:
    static constexpr size_t kRowsPerStatement = 64;
    static constexpr int kColumns = 6;
    struct Row {
        int64_t allocation;
        const Tag* tag;
        std::optional<int64_t> reason, evidence;  // strings ids
    };
    static std::string insert_sql(size_t rows) {
        std::string sql =
            "INSERT INTO allocation_categories (allocation, category, reason_string, confidence, rule, "
            "evidence_string) VALUES ";
        for (size_t row = 0; row < rows; ++row) {
            sql += row ? ",(" : "(";
            for (size_t column = 1; column <= kColumns; ++column)
                sql += (column > 1 ? ",?" : "?") + std::to_string(row * kColumns + column);
            sql += ")";
        }
        return sql;
    }
    void write(trace::Statement& insert) {
        for (size_t i = 0; i < pending_.size(); ++i) {
            const Row& row = pending_[i];
            const int base = static_cast<int>(i) * kColumns;
            insert.bind(base + 1, row.allocation)
                .bind(base + 2, trace::StaticText{row.tag->category})
                .bind(base + 3, row.reason)
                .bind(base + 4, row.tag->confidence)
                .bind(base + 5, trace::StaticText{row.tag->rule})
                .bind(base + 6, row.evidence);
        }
        insert.run();
        pending_.clear();
    }
    trace::Database& db_;
    trace::Statement full_;
    std::vector<Row> pending_;
};

void write_results(trace::Database& db, const TraceModel& model, const IterationSet& its, const TagResult& result) {
    write_iterations(db, its);
    write_phases(db, result.phases);
    TagTexts texts(db);
    CategoryRows categories(db);
    for (size_t a = 0; a < model.allocations.size(); ++a) {
        const Tag& t = result.tags[a];
        // A segment joined from mappings (mapped_segments.h): each mapping gets the segment's tag.
        const Allocation& segment = model.allocations[a];
        for (const MappedPiece& piece : trace_pieces(segment, 0, segment.bytes)) {
            const std::optional<int64_t> reason = texts.id(t.reason);  // ids in the order given before
            categories.add(piece.id, t, reason, texts.id(t.evidence));
        }
    }
    categories.flush();
    trace::Statement subrange(db,
                              "INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, "
                              "end_ns, category, confidence, rule, reason_string, evidence_string) "
                              "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)");
    int64_t subrange_id = 0;
    for (const SubRangeTag& r : result.subranges) {
        // One row per mapping a sub-range of a joined segment overlaps (mapped_segments.h).
        for (const MappedPiece& piece : trace_pieces(model.allocations[size_t(r.segment)], r.offset, r.bytes)) {
            const auto reason = texts.id(r.tag.reason), evidence = texts.id(r.tag.evidence);
            subrange
                .bind_all(++subrange_id, piece.id, int64_t(piece.offset), piece.bytes, r.begin_ns, r.end_ns,
                          r.tag.category, r.tag.confidence, r.tag.rule, reason, evidence)
                .run();
        }
    }
    // Memory that is not device memory (pinned host) gets a category so that every row of
    // memory_allocations has one, but no device breakdown counts it.
    const std::string host_memory = std::string("FROM allocations WHERE kind NOT IN ") + trace::kDeviceMemoryKindsSql;
    if (db.query_int(("SELECT EXISTS (SELECT 1 " + host_memory + ")").c_str()) == 0) return;  // no string unused
    trace::Statement(db, "INSERT INTO allocation_categories (allocation, category, reason_string, confidence, rule) "
                         "SELECT id, 'other', ?1, 1.0, 'host-memory' " + host_memory)
        .bind(1, texts.id("pinned host memory, not device memory"))
        .run();
}

// What the report says about the granularity of the memory breakdown (run_notes.memory_breakdown,
// shown as "memory breakdown at ..."); empty when every allocation is one tensor.
std::string breakdown_note(const TagResult& r) {
    size_t examined = r.segments_with_subranges + r.single_role_segments;
    std::string sub = "sub-range level (inferred) inside " + std::to_string(examined) +
                      " allocations holding several tensors (" + std::to_string(r.segments_with_subranges) +
                      " with tensors of different roles): tensors recovered from the pointers the work used";
    std::string seg = "segment level for " + std::to_string(r.segments_without_subranges) +
                      " allocations addressed at 16 or more offsets with no tensors recovered in them";
    if (r.registered_regions > 0)  // nvtx_regions.h: these tensors were not inferred, the program said
        sub += "; " + std::to_string(r.registered_regions) + " of the tensors are regions the program registered (" +
               std::to_string(r.named_regions) + " with the category in their name, rule nvtx-region-name)";
    if (examined && r.segment_level) return sub + "; " + seg;
    if (examined) return sub;
    if (r.segment_level) return seg;
    return {};
}

TagSummary tag_database(trace::Database& db, const TagOptions& options, std::optional<WrittenRows> written) {
    // One transaction: a failure anywhere closes the connection uncommitted, leaving the trace as it was.
    db.exec("BEGIN IMMEDIATE");
    trace::upgrade_for_update(db,
                              {"iterations", "phases", "allocation_categories", "allocation_subranges", "run_notes"});
    // Earlier results go first: the allocations are then read without their old tags.
    delete_tag_texts(db);
    db.exec(
        "DELETE FROM phases; DELETE FROM iterations; DELETE FROM allocation_categories; "
        "DELETE FROM allocation_subranges; DELETE FROM run_notes WHERE key = 'memory_breakdown'");
    TraceModel model = load_model(db, std::move(written));
    IterationSet its;
    TagResult result = tag_each_process(model, options.iteration_range, its);
    write_results(db, model, its, result);
    if (const std::string note = breakdown_note(result); !note.empty())
        trace::Statement(db, "INSERT INTO run_notes (key, value) VALUES ('memory_breakdown', ?1)").bind(1, note).run();
    db.exec("COMMIT");
    TagSummary summary{.allocations = model.allocations.size(),
                       .iterations = its.iterations.size(),
                       .iteration_source = its.source,
                       .note = its.note,
                       .bytes_by_category = {},
                       .segment_level = result.segment_level,
                       .segments_with_subranges = result.segments_with_subranges + result.single_role_segments,
                       .subranges = result.subranges.size(),
                       .operands_unresolved = model.operands_unresolved};
    for (size_t a = 0; a < model.allocations.size(); ++a)
        summary.bytes_by_category[result.tags[a].category] += model.allocations[a].bytes;
    return summary;
}

TagSummary tag_file(const std::string& path, const TagOptions& options, std::optional<WrittenRows> written) {
    // Only a trace the one opener validated is written to (tbdprof/trace/trace_reader.h).
    try {
        trace::Database db = trace::open_trace_for_update(path);
        return tag_database(db, options, std::move(written));
    } catch (const trace::TraceOpenError& e) {
        throw TagError(e.what());
    } catch (const trace::SqliteError& e) {
        throw TagError(path + ": " + e.what());
    }
}

}  // namespace

TagSummary tag_trace_file(const std::string& path, const TagOptions& options) {
    return tag_file(path, options, std::nullopt);
}

TagSummary tag_trace_file(const std::string& path, const TagOptions& options, WrittenRows written) {
    return tag_file(path, options, std::move(written));
}

}  // namespace tbdprof::tagger
