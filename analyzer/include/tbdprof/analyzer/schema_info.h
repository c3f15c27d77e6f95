// What the analyzer knows about the trace format, taken from schemas/trace.sql at build time.
#pragma once

namespace tbdprof::analyzer {

// The newest PRAGMA user_version this build reads; newer traces are refused with a clear message.
extern const int kNewestTraceFormat;
// The schema script (ends by setting PRAGMA user_version); tests and the benchmark generator build
// traces with it so that they always match the real format.
extern const char* const kTraceSchemaSql;

}  // namespace tbdprof::analyzer
