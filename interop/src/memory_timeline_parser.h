// torch.profiler's memory-timeline "raw" export (MemoryProfileTimeline.export_memory_timeline_raw,
// as HTA stores it): a JSON array of [ts_ns, action, bytes, category] rows, where action is
// 1 preexisting, 2 create, 3 increment_version, 4 destroy, and category indexes torch's
// Category enum. It has no addresses and no devices: creates and destroys are paired by size
// (memory_matching.h), all on device 0, and each allocation keeps the category it was created with
// (version increments, which may recategorise a tensor, are skipped: the rows carry no identity).
#pragma once

#include "foreign_trace.h"

#include <simdjson.h>

namespace tbdprof::interop {

// True when the document looks like such an export (an array whose first element is an array).
bool looks_like_memory_timeline(const simdjson::padded_string& json);

// Throws InteropError on rows that are not 4 numbers.
void parse_memory_timeline(const simdjson::padded_string& json, ForeignTrace& out);

// torch's category index -> tbdprof's category (../shared/notes/definitions.md); nullopt for "unknown".
std::optional<std::string> torch_memory_category(int64_t index);

}  // namespace tbdprof::interop
