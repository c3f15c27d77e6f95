#include "tbdprof/trace/fast_scans.h"

#include "tbdprof/trace/tables.h"

#include <sqlite3.h>

#include <exception>
#include <string>

namespace tbdprof::trace {
namespace {

constexpr const char* kFunctionName = "tbdprof_kernel_interval";

// State of the aggregate function: exceptions must not cross SQLite's C frames.
struct Feed {
    const std::function<bool(const KernelInterval&)>* on_kernel;
    bool stopped = false;
    std::exception_ptr error;
};

void feed_step(sqlite3_context* context, int, sqlite3_value** values) {
    auto* feed = static_cast<Feed*>(sqlite3_user_data(context));
    try {
        KernelInterval kernel;
        kernel.id = sqlite3_value_int64(values[0]), kernel.device = sqlite3_value_int64(values[1]);
        kernel.stream = sqlite3_value_int64(values[2]), kernel.function = sqlite3_value_int64(values[3]);
        kernel.start_ns = sqlite3_value_int64(values[4]), kernel.duration_ns = sqlite3_value_int64(values[5]);
        kernel.library_call = sqlite3_value_int64(values[6]), kernel.graph = sqlite3_value_int64(values[7]) != 0;
        if ((*feed->on_kernel)(kernel)) return;
    } catch (...) {
        feed->error = std::current_exception();
    }
    feed->stopped = true;
    sqlite3_result_error(context, "tbdprof: kernel scan stopped", -1);  // ends the statement
}

void feed_final(sqlite3_context* context) {
    sqlite3_result_null(context);
}

}  // namespace

bool for_each_kernel_interval(const Database& db, int64_t first_id, int64_t last_id,
                              const std::function<bool(const KernelInterval&)>& on_kernel) {
    Feed feed{&on_kernel, false, nullptr};
    if (sqlite3_create_function_v2(db.get(), kFunctionName, 8, SQLITE_UTF8 | SQLITE_DIRECTONLY, &feed, nullptr,
                                   feed_step, feed_final, nullptr) != SQLITE_OK)
        throw SqliteError(std::string("register ") + kFunctionName + ": " + sqlite3_errmsg(db.get()));
    // Removed after the statement below is finalized (a function in use cannot be replaced).
    struct Unregister {
        sqlite3* db;
        ~Unregister() {
            sqlite3_create_function_v2(db, kFunctionName, 8, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr, nullptr);
        }
    } unregister{db.get()};
    // ifnull() in SQL is cheaper than a column-type call per row; -1 marks NULL (INT64_MIN for the
    // duration, where a damaged file may store -1).
    Statement query(
        db,
        "SELECT tbdprof_kernel_interval(id, device, ifnull(stream, -1), function, start_ns, "
        "ifnull(duration_ns, -9223372036854775808), ifnull(library_call, -1), graph_launch IS NOT NULL) FROM kernels "
        "WHERE id BETWEEN ?1 AND ?2");
    query.bind(1, first_id).bind(2, last_id);
    try {
        query.step();
    } catch (const SqliteError&) {
        if (!feed.stopped) throw;  // SQLite's own error (a damaged file)
    }
    if (feed.error) std::rethrow_exception(feed.error);
    return !feed.stopped;
}

void for_each_kernel_launch(const Database& db, const std::function<void(const KernelLaunch&)>& on_kernel) {
    if (!has_table(db, "kernels")) return;
    Statement query(db,
                    "SELECT id, process, function, start_ns, ifnull(queued_ns, 0), ifnull(duration_ns, 0), "
                    "ifnull(library_call, -1) FROM kernels ORDER BY id");
    KernelLaunch kernel;
    while (query.step()) {
        kernel.id = query.column_int(0), kernel.process = query.column_int(1), kernel.function = query.column_int(2);
        kernel.start_ns = query.column_int(3), kernel.queued_ns = query.column_int(4);
        kernel.duration_ns = query.column_int(5), kernel.library_call = query.column_int(6);
        on_kernel(kernel);
    }
}

int64_t kernel_count(const Database& db) {
    return has_table(db, "kernels") ? db.query_int("SELECT count(*) FROM kernels") : 0;
}

CallFlopsReader::CallFlopsReader(const Database& db, int64_t first_id, int64_t last_id) {
    if (!has_table(db, "library_calls")) return;  // as the typed readers: a missing table reads as empty
    const char* precision = has_column(db, "library_calls", "precision") ? "precision" : "NULL";
    query_.emplace(db, std::string("SELECT id, begin_ns, flops, compute_type, a_type, "
                                   "CASE WHEN compute_type IS NULL AND a_type IS NULL THEN name END, ") +
                           precision + " FROM library_calls WHERE id BETWEEN ?1 AND ?2 ORDER BY id");
    query_->bind(1, first_id).bind(2, last_id);
}

bool CallFlopsReader::next(CallFlops& call) {
    if (!query_ || !query_->step()) return false;
    const Statement& row = *query_;
    call.id = row.column_int(0), call.begin_ns = row.column_int(1);
    call.flops = row.column_optional_double(2);
    call.compute_type = row.column_optional_int(3), call.a_type = row.column_optional_int(4);
    call.name = row.column_view(5), call.precision = row.column_view(6);
    return true;
}

}  // namespace tbdprof::trace
