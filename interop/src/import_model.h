// Turns a parsed foreign trace into the one trace model (tbdprof/trace/trace_model.h): times made
// relative to the earliest event, host threads and streams numbered, GPU work joined to its launch
// call, synchronisations made API calls, memory events paired into allocations, run notes added.
#pragma once

#include "foreign_trace.h"
#include "tbdprof/interop/import.h"
#include "tbdprof/trace/trace_model.h"

#include <string>

namespace tbdprof::interop {

// Fills the counts of `summary`; adds to trace.warnings. Throws InteropError when nothing can be imported.
trace::detail::TraceModel import_model(ForeignTrace& trace, const std::string& source_path, ImportSummary& summary);

}  // namespace tbdprof::interop
