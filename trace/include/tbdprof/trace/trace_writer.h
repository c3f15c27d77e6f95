// The one writer of the trace format: stores a TraceModel (built from a recording or imported) into a
// fresh SQLite database: the embedded schema, then every table, in one transaction. The caller writes
// to a temporary (tbdprof/trace/output_file.h) and renames it into place only after this succeeded.
#pragma once

#include "tbdprof/trace/trace_model.h"

#include <string>

namespace tbdprof::trace::detail {

// Opens the existing, empty file at `path` (an OutputFile's temporary) and writes it. Throws SqliteError.
void write_trace(const std::string& path, const TraceModel& model);

}  // namespace tbdprof::trace::detail
