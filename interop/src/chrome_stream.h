// Reads a foreign trace from a stream of JSON text in bounded memory: a Kineto / Chrome trace is cut
// into its top-level keys' values and batches of trace events (json_window.h), each parsed by
// ChromeTraceParser as it comes, so only one batch of the text is held at a time, however large the
// file; a torch.profiler memory timeline (an array of rows) is small and parsed as one document.
// A text known to be small is read whole and walked in place instead (kWholeTextMaxBytes).
#pragma once

#include "chrome_json_parser.h"
#include "foreign_trace.h"
#include "json_window.h"

namespace tbdprof::interop {

// Texts whose size hint (ByteSource::size_hint) is at most this are read into one buffer and walked
// there by simdjson On-Demand: no scan for the events' ends, no copy of each batch (docs/benchmarks.md,
// "One buffer for a trace of at most 64 MiB"). The memory this holds beside the parsed events is
// bounded by it; a larger text, or one of unknown size (a pipe), streams.
constexpr uint64_t kWholeTextMaxBytes = 64ull << 20;

// Which way parse_trace_stream read the text (the same events either way).
enum class TextPath : uint8_t { streamed, whole };

// Reads `source` to its end into `out` (empty on entry). Throws InteropError when the text is not
// JSON or not a trace (the source's own errors pass through); bad events are counted in
// out.warnings / out.unknown. whole_text_max_bytes: kWholeTextMaxBytes, 0 streams every text (tests
// compare the two ways).
TextPath parse_trace_stream(ByteSource& source, ForeignTrace& out, const ParseProgress& progress = {},
                            uint64_t whole_text_max_bytes = kWholeTextMaxBytes);

}  // namespace tbdprof::interop
