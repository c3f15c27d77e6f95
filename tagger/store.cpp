// Writing the tagger's results into the trace: iterations, phases, and one category row per
// allocation. Tables a trace written before tagging existed may lack are created.
#include "iterations.h"
#include "model.h"
#include "pool_tagging.h"
#include "rules.h"
#include "tbdprof/tagger/tagger.h"

#include <sqlite3.h>
#include <tbdprof/trace/trace_reader.h>

namespace tbdprof::tagger {
namespace {

bool exec(sqlite3* db, const char* sql, std::string& error) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return true;
    error = message ? message : "SQLite error";
    sqlite3_free(message);
    return false;
}

bool has_column(sqlite3* db, const char* table, const char* column) {
    sqlite3_stmt* s = nullptr;
    std::string sql = std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name = ?1";
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return false;
    sqlite3_bind_text(s, 1, column, -1, SQLITE_STATIC);
    bool found = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return found;
}

bool ensure_tables(sqlite3* db, std::string& error) {
    if (!exec(db,
              "CREATE TABLE IF NOT EXISTS iterations (id INTEGER PRIMARY KEY, process INTEGER NOT NULL, "
              "idx INTEGER NOT NULL, begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, source TEXT NOT NULL);"
              "CREATE TABLE IF NOT EXISTS phases (iteration INTEGER NOT NULL, kind TEXT NOT NULL, "
              "begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, PRIMARY KEY (iteration, kind)) WITHOUT ROWID;"
              "CREATE TABLE IF NOT EXISTS allocation_categories (allocation INTEGER PRIMARY KEY, "
              "category TEXT NOT NULL, reason TEXT);"
              "CREATE TABLE IF NOT EXISTS allocation_subranges (id INTEGER PRIMARY KEY, allocation INTEGER NOT NULL, "
              "offset INTEGER NOT NULL, bytes INTEGER NOT NULL, begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, "
              "category TEXT NOT NULL, confidence REAL, rule TEXT, reason TEXT);",
              error))
        return false;
    for (const char* column : {"device_begin_ns INTEGER", "device_end_ns INTEGER", "kind TEXT"}) {
        std::string name(column, std::string(column).find(' '));
        if (!has_column(db, "iterations", name.c_str()) &&
            !exec(db, (std::string("ALTER TABLE iterations ADD COLUMN ") + column).c_str(), error))
            return false;
    }
    if (!has_column(db, "allocation_categories", "confidence") &&
        !exec(db, "ALTER TABLE allocation_categories ADD COLUMN confidence REAL", error))
        return false;
    if (!has_column(db, "allocation_categories", "rule") &&
        !exec(db, "ALTER TABLE allocation_categories ADD COLUMN rule TEXT", error))
        return false;
    for (const char* table : {"allocation_categories", "allocation_subranges"})
        if (!has_column(db, table, "evidence") &&
            !exec(db, (std::string("ALTER TABLE ") + table + " ADD COLUMN evidence TEXT").c_str(), error))
            return false;
    return true;
}

class Insert {
public:
    Insert(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
    ~Insert() { sqlite3_finalize(s_); }
    Insert(const Insert&) = delete;
    Insert& operator=(const Insert&) = delete;
    Insert& bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); return *this; }
    Insert& bind(int i, double v) { sqlite3_bind_double(s_, i, v); return *this; }
    Insert& bind_null(int i) { sqlite3_bind_null(s_, i); return *this; }
    Insert& bind(int i, const std::string& v) { sqlite3_bind_text(s_, i, v.c_str(), -1, SQLITE_TRANSIENT); return *this; }
    bool run() {
        bool ok = s_ && sqlite3_step(s_) == SQLITE_DONE;
        sqlite3_reset(s_);
        return ok;
    }

private:
    sqlite3_stmt* s_ = nullptr;
};

bool write_results(sqlite3* db, const TraceModel& model, const IterationSet& its, const TagResult& result,
                   std::string& error) {
    if (!exec(db, "DELETE FROM phases; DELETE FROM iterations; DELETE FROM allocation_categories; "
                  "DELETE FROM allocation_subranges;", error))
        return false;
    Insert iteration(db, "INSERT INTO iterations (id, process, idx, begin_ns, end_ns, source, device_begin_ns, "
                         "device_end_ns, kind) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)");
    // Training steps first (ids 1..n, which phases refer to), then the spans set apart (idx -1).
    auto write_span = [&](const Iteration& it, int64_t id, int64_t idx, const char* kind) {
        iteration.bind(1, id).bind(2, int64_t(it.process)).bind(3, idx).bind(4, it.begin_ns).bind(5, it.end_ns)
            .bind(6, its.source).bind(9, std::string(kind));
        if (it.device_end_ns > 0) iteration.bind(7, it.device_begin_ns).bind(8, it.device_end_ns);
        else iteration.bind_null(7).bind_null(8);
        if (iteration.run()) return true;
        error = sqlite3_errmsg(db);
        return false;
    };
    for (size_t i = 0; i < its.iterations.size(); ++i)
        if (!write_span(its.iterations[i], int64_t(i + 1), int64_t(i), "training")) return false;
    for (size_t i = 0; i < its.non_training.size(); ++i)
        if (!write_span(its.non_training[i], int64_t(its.iterations.size() + i + 1), -1, "non_training")) return false;
    Insert phase(db, "INSERT INTO phases (iteration, kind, begin_ns, end_ns) VALUES (?1,?2,?3,?4)");
    for (const Phase& p : result.phases)
        if (!phase.bind(1, int64_t(p.iteration + 1)).bind(2, p.kind).bind(3, p.begin_ns).bind(4, p.end_ns).run()) {
            error = sqlite3_errmsg(db);
            return false;
        }
    Insert category(db, "INSERT INTO allocation_categories (allocation, category, reason, confidence, rule, evidence) "
                        "VALUES (?1,?2,?3,?4,?5,?6)");
    for (size_t a = 0; a < model.allocations.size(); ++a) {
        const Tag& t = result.tags[a];
        if (!category.bind(1, model.allocations[a].id).bind(2, t.category).bind(3, t.reason)
                 .bind(4, t.confidence).bind(5, t.rule).bind(6, t.evidence).run()) {
            error = sqlite3_errmsg(db);
            return false;
        }
    }
    Insert subrange(db, "INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category, "
                        "confidence, rule, reason, evidence) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)");
    for (size_t i = 0; i < result.subranges.size(); ++i) {
        const SubRangeTag& r = result.subranges[i];
        if (!subrange.bind(1, int64_t(i + 1)).bind(2, model.allocations[size_t(r.segment)].id)
                 .bind(3, static_cast<int64_t>(r.offset)).bind(4, r.bytes).bind(5, r.begin_ns).bind(6, r.end_ns)
                 .bind(7, r.tag.category).bind(8, r.tag.confidence).bind(9, r.tag.rule).bind(10, r.tag.reason)
                 .bind(11, r.tag.evidence).run()) {
            error = sqlite3_errmsg(db);
            return false;
        }
    }
    // Pinned host memory is not device memory: it gets a category so that every row of
    // memory_allocations has one, but no device breakdown counts it.
    if (!exec(db, "INSERT INTO allocation_categories (allocation, category, reason, confidence, rule) "
                  "SELECT id, 'other', 'pinned host memory, not device memory', 1.0, 'host-memory' "
                  "FROM allocations WHERE kind = 'pinned_host'", error))
        return false;
    return true;
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
    if (examined && r.segment_level) return sub + "; " + seg;
    if (examined) return sub;
    if (r.segment_level) return seg;
    return {};
}

}  // namespace

bool tag_database(sqlite3* db, const TagOptions& options, TagSummary& summary, std::string& error) {
    auto model = load_model(db, error);
    if (!model) return false;
    IterationSet its;
    TagResult result = tag_model(*model, options.iteration_range, its);
    if (!exec(db, "SAVEPOINT tagging", error)) return false;
    if (!ensure_tables(db, error) || !write_results(db, *model, its, result, error)) {
        std::string ignored;
        exec(db, "ROLLBACK TO tagging; RELEASE tagging", ignored);
        return false;
    }
    {
        std::string ignored;  // run_notes is optional: an older trace may lack it
        exec(db, "DELETE FROM run_notes WHERE key = 'memory_breakdown'", ignored);
        std::string note = breakdown_note(result);
        if (!note.empty()) {
            Insert insert(db, "INSERT INTO run_notes (key, value) VALUES ('memory_breakdown', ?1)");
            insert.bind(1, note).run();
        }
    }
    if (!exec(db, "RELEASE tagging", error)) return false;
    summary = {};
    summary.allocations = model->allocations.size();
    summary.iterations = its.iterations.size();
    summary.iteration_source = its.source;
    summary.note = its.note;
    summary.segment_level = result.segment_level;
    summary.segments_with_subranges = result.segments_with_subranges + result.single_role_segments;
    summary.subranges = result.subranges.size();
    for (size_t a = 0; a < model->allocations.size(); ++a)
        summary.bytes_by_category[result.tags[a].category] += model->allocations[a].bytes;
    return true;
}

bool tag_trace_file(const std::string& path, const TagOptions& options, TagSummary& summary, std::string& error) {
    // Only a trace the one opener validated is written to (tbdprof/trace/trace_reader.h).
    trace::Database db;
    try {
        db = trace::open_trace_for_update(path);
    } catch (const trace::TraceOpenError& e) {
        error = e.what();
        return false;
    }
    return tag_database(db.get(), options, summary, error);
}

}  // namespace tbdprof::tagger
