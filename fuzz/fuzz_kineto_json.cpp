// libFuzzer target: the PyTorch profiler (Kineto) / Chrome trace JSON parser of `tbdprof import`, and
// the memory-timeline parser it chooses between. Any bytes must end in a parsed trace or InteropError.
#include "chrome_json_parser.h"
#include "foreign_trace.h"
#include "memory_timeline_parser.h"

#include <simdjson.h>

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const simdjson::padded_string json(reinterpret_cast<const char*>(data), size);
    tbdprof::interop::ForeignTrace trace;
    try {
        if (tbdprof::interop::looks_like_memory_timeline(json)) {
            tbdprof::interop::parse_memory_timeline(json, trace);
        } else {
            tbdprof::interop::parse_chrome_trace(json, trace);
        }
    } catch (const std::exception&) {
        // refused with a message: fine
    }
    return 0;
}
