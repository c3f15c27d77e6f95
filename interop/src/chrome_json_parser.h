// Parses Chrome trace JSON (Kineto's flavour included) into a ForeignTrace with simdjson On-Demand:
// one forward pass over the document, no DOM, so the cost is close to simdjson's raw scanning speed
// plus what each event needs.
#pragma once

#include "foreign_trace.h"

#include <simdjson.h>

#include <functional>

namespace tbdprof::interop {

// Called every 65536 events with the count so far and the size of the JSON text.
using ParseProgress = std::function<void(uint64_t events, uint64_t json_bytes)>;

// Throws InteropError when the text is not JSON or not a trace; bad events are counted in
// out.warnings / out.unknown and skipped.
void parse_chrome_trace(const simdjson::padded_string& json, ForeignTrace& out, const ParseProgress& progress = {});

}  // namespace tbdprof::interop
