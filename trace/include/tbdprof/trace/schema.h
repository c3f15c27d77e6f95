// The trace schema, embedded at build time from schemas/trace.sql (the single source).
#pragma once

namespace tbdprof::trace {

// PRAGMA user_version of the traces this build writes, and the newest it reads.
extern const int kTraceFormatVersion;
// The whole schema script, ending with `PRAGMA user_version = kTraceFormatVersion;`.
extern const char* const kTraceSchemaSql;

}  // namespace tbdprof::trace
