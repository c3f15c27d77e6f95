// Device memory a framework's own tools cannot see (docs/analyzer.md, "Memory the framework cannot
// see"): computed from the trace (framework_unseen.cpp), rendered as a report section and in JSON
// (framework_unseen_render.cpp). Internal to the analyzer.
#pragma once

#include <cstdint>

#include "document.h"
#include "tbdprof/analyzer/report.h"
#include "tbdprof/trace/json_writer.h"
#include "tbdprof/trace/sqlite_handle.h"

namespace tbdprof::analyzer {

// `peak_trace_ns`: the memory scan's peak moment (MemoryMetrics::peak_trace_ns). Not present without a pool.
FrameworkUnseenMemory framework_unseen_memory(const trace::Database& db, int64_t peak_trace_ns);

// The "Memory the framework cannot see" section (text, markdown, HTML), for a present result.
Section framework_unseen_section(const FrameworkUnseenMemory& unseen);

// JSON key "framework_unseen": null when not present.
void framework_unseen_json(trace::JsonWriter& json, const FrameworkUnseenMemory& unseen);

}  // namespace tbdprof::analyzer
