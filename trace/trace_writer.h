// Stores a TraceModel into a fresh SQLite database: the embedded schema, then every table, in one
// transaction (the caller renames the file into place only after this succeeded).
#pragma once

#include "tbdprof/trace/sqlite_handle.h"
#include "trace_model.h"

namespace tbdprof::trace::detail {

void write_trace(Database& db, const TraceModel& model);

}  // namespace tbdprof::trace::detail
