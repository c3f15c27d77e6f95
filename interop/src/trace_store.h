// Writes the importer's model as a tbdprof trace (schemas/trace.sql, embedded by trace/).
#pragma once

#include "tbdprof/interop/import.h"
#include "trace_model.h"

#include <string>

namespace tbdprof::interop {

// Creates `path` (which must not exist) and fills it; fills the counts of `summary`.
void store_trace(ForeignTrace& trace, const std::string& source_path, const std::string& path, ImportSummary& summary);

}  // namespace tbdprof::interop
