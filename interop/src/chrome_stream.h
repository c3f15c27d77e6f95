// Reads a foreign trace from a stream of JSON text in bounded memory: a Kineto / Chrome trace is cut
// into its top-level keys' values and batches of trace events (json_window.h), each parsed by
// ChromeTraceParser as it comes, so only one batch of the text is held at a time, however large the
// file; a torch.profiler memory timeline (an array of rows) is small and parsed as one document.
#pragma once

#include "chrome_json_parser.h"
#include "foreign_trace.h"
#include "json_window.h"

namespace tbdprof::interop {

// Reads `source` to its end. Throws InteropError when the text is not JSON or not a trace (the
// source's own errors pass through); bad events are counted in out.warnings / out.unknown.
void parse_trace_stream(ByteSource& source, ForeignTrace& out, const ParseProgress& progress = {});

}  // namespace tbdprof::interop
